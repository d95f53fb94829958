package write

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/spillfile"
)

// A spillable write buffer (write-buffer-spillable, Java's default) does
// not write level-0 files when the buffers of all buckets reach
// write-buffer-size: the bucket whose buffer is taken sorts it and writes
// it to a spill file on local disk, a sorted run of raw changes (Java's
// SortBufferWriteBuffer over a BinaryExternalSortBuffer). At the flush
// (Prepare, or once the bucket's runs take write-buffer-spill.max-disk-size)
// its runs and what is still in memory are merged record by record in the
// buffer's order (key, sequence.field, sequence number) and folded per key
// by the merge engine exactly as an in-memory buffer is, so the files hold
// the same records, only in fewer files: as many as target-file-size
// makes. More runs than local-sort.max-num-file-handles are first merged
// into fewer, a pass at a time (BinaryExternalMerger.mergeChannelList).

// spillConfig is a table's write-buffer spill options.
type spillConfig struct {
	on bool
	// maxDisk is write-buffer-spill.max-disk-size: a bucket whose runs
	// take this much flushes instead of spilling again.
	maxDisk int64
	// maxFan is local-sort.max-num-file-handles: the most runs one merge
	// reads.
	maxFan int
	codec  *spillfile.Codec
}

func spillConfigFromSchema(o schema.Options) (spillConfig, error) {
	var c spillConfig
	var err error
	if c.on, err = o.WriteBufferSpillable(); err != nil {
		return c, err
	}
	if c.maxDisk, err = o.WriteBufferSpillMaxDiskSize(); err != nil {
		return c, err
	}
	if c.maxFan, err = o.LocalSortMaxNumFileHandles(); err != nil {
		return c, err
	}
	level, err := o.SpillCompressionZstdLevel()
	if err != nil {
		return c, err
	}
	if c.codec, err = spillfile.NewCodec(o.SpillCompression(), level); err != nil {
		return c, fmt.Errorf("%w: %s = %q: %w", schema.ErrInvalidOption, schema.OptSpillCompression, o.SpillCompression(), err)
	}
	return c, nil
}

// spillRun is one sorted run of a bucket's write buffer on local disk.
type spillRun struct {
	path    string
	size    int64
	records int64
}

// spillCounters count what the writer's spilling did, for tests.
type spillCounters struct {
	runs, merges, passes int
	// maxOpen is the most spill files open at once.
	maxOpen, open int
}

// relieve empties the buffer of b when the buffers of all buckets reach
// write-buffer-size (MergeTreeWriter.flushMemory): into a spill file if
// spilling is on and b's runs take less than write-buffer-spill.max-disk-size
// (BinaryExternalSortBuffer.flushMemory), else into level-0 files.
//
// Java spills a bucket that fills the pool by itself whatever its runs
// take (BinaryExternalSortBuffer.write checks the disk only when another
// bucket's write preempts it); lakecore bounds every bucket's runs.
func (w *KeyValueWriter) relieve(ctx context.Context, b *kvBucket) error {
	if w.spill.on && b.spilled < w.spill.maxDisk {
		return w.spillBuffer(b)
	}
	return w.flush(ctx, b)
}

// spillBuffer sorts the buffer of b and writes it as a new run.
func (w *KeyValueWriter) spillBuffer(b *kvBucket) error {
	if b.buf.len() == 0 {
		return nil
	}
	src, err := w.sorted(&b.buf, false)
	if err != nil {
		return err
	}
	run, err := w.writeRun(b, src)
	if err != nil {
		return err
	}
	b.runs = append(b.runs, run)
	b.spilled += run.size
	w.spills.runs++
	w.releaseBuffer(b)
	return nil
}

// writeRun writes every record of src, in its order, to a new spill file.
func (w *KeyValueWriter) writeRun(b *kvBucket, src mergetree.RecordReader) (spillRun, error) {
	if w.spillDir == nil {
		d, err := lookupfile.OpenDir(w.localDir)
		if err != nil {
			return spillRun{}, fmt.Errorf("spill the write buffer of bucket %d of %s: %w", b.bucket, b.dir, err)
		}
		w.spillDir = d
	}
	p := w.spillDir.NewPath("spill-bucket-" + strconv.Itoa(int(b.bucket)))
	fail := func(err error) (spillRun, error) {
		return spillRun{}, fmt.Errorf("spill the write buffer of bucket %d of %s: %w", b.bucket, b.dir, err)
	}
	out, err := spillfile.Create(p, w.spill.codec)
	if err != nil {
		return fail(err)
	}
	if br, ok := src.(*bufferRecords); ok {
		// The buffer's rows are encoded already, as appendRecord encodes.
		for i := range br.b.entries {
			e := &br.b.entries[i]
			w.spillBuf = append(append(w.spillBuf[:0], br.b.row(e)...), 0, 0, 0, 0, 0, 0, 0, 0, byte(e.kind))
			binary.LittleEndian.PutUint64(w.spillBuf[e.n:], uint64(e.seq))
			if err := out.Add(w.spillBuf); err != nil {
				out.Abort()
				return fail(err)
			}
		}
		src = eofRecords{}
	}
	ctx := context.Background() // the sources read local files only
	for {
		r, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			w.spillBuf, err = w.codec.appendRecord(w.spillBuf[:0], r)
		}
		if err == nil {
			err = out.Add(w.spillBuf)
		}
		if err != nil {
			out.Abort()
			return fail(err)
		}
	}
	if err := out.Close(); err != nil {
		return fail(err)
	}
	return spillRun{path: p, size: out.Size(), records: out.Records()}, nil
}

// mergedRecords returns every record of b's runs and of its buffer (mem,
// sorted in memory), in the buffer's order, merging the runs down to
// local-sort.max-num-file-handles first. Closing it closes the runs it
// reads; dropRuns deletes them.
func (w *KeyValueWriter) mergedRecords(b *kvBucket, mem mergetree.RecordReader) (mergetree.RecordReader, error) {
	for len(b.runs) > w.spill.maxFan {
		if err := w.mergePass(b); err != nil {
			return nil, err
		}
	}
	readers, err := w.openRuns(b.runs)
	if err != nil {
		return nil, err
	}
	if b.buf.len() > 0 {
		readers = append(readers, mem)
	}
	return mergetree.NewRecordMerger(&w.engine.Order, readers), nil
}

// mergePass merges b's runs into fewer, as BinaryExternalMerger.mergeChannelList
// does: to the largest power of max-num-file-handles below their number,
// merging the fewest runs that takes, the newest ones, in steps of at most
// max-num-file-handles runs. Passes until at most max-num-file-handles runs
// are left need each run read log(runs)/log(fan) times at most.
func (w *KeyValueWriter) mergePass(b *kvBucket) error {
	fan, n := w.spill.maxFan, len(b.runs)
	end := 1
	for end*fan < n {
		end *= fan
	}
	merges := (n - end + fan - 2) / (fan - 1)
	kept := end - merges
	step := (n - kept + merges - 1) / merges
	out := slices.Clone(b.runs[:kept])
	for i := kept; i < n; i += step {
		group := b.runs[i:min(i+step, n)]
		readers, err := w.openRuns(group)
		if err != nil {
			return err
		}
		m := mergetree.NewRecordMerger(&w.engine.Order, readers)
		run, err := w.writeRun(b, m)
		if cerr := w.closeRuns(m); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		for _, r := range group {
			_ = os.Remove(r.path)
			b.spilled -= r.size
		}
		b.spilled += run.size
		out = append(out, run)
		w.spills.merges++
	}
	b.runs = out
	w.spills.passes++
	return nil
}

// openRuns opens a reader of each run.
func (w *KeyValueWriter) openRuns(runs []spillRun) ([]mergetree.RecordReader, error) {
	readers := make([]mergetree.RecordReader, 0, len(runs)+1)
	for _, r := range runs {
		f, err := spillfile.Open(r.path, w.spill.codec)
		if err != nil {
			for _, o := range readers {
				_ = o.Close()
			}
			return nil, fmt.Errorf("merge the spilled write buffer: %w", err)
		}
		readers = append(readers, &runRecords{w: w, f: f, name: r.path})
		w.spills.open++
		w.spills.maxOpen = max(w.spills.maxOpen, w.spills.open)
	}
	return readers, nil
}

// closeRuns closes a merge of runs.
func (w *KeyValueWriter) closeRuns(m io.Closer) error {
	if err := m.Close(); err != nil {
		return fmt.Errorf("merge the spilled write buffer: %w", err)
	}
	return nil
}

// dropRuns deletes the runs of b.
func (w *KeyValueWriter) dropRuns(b *kvBucket) {
	for _, r := range b.runs {
		_ = os.Remove(r.path)
	}
	b.runs, b.spilled = nil, 0
}

// closeSpillDir removes the writer's spill directory with whatever is in
// it; the next spill makes a new one.
func (w *KeyValueWriter) closeSpillDir() error {
	if w.spillDir == nil {
		return nil
	}
	err := w.spillDir.Close()
	w.spillDir = nil
	if err != nil {
		return fmt.Errorf("spill directory: %w", err)
	}
	return nil
}

// runRecords reads the records of one spill file.
type runRecords struct {
	w    *KeyValueWriter
	f    *spillfile.Reader
	name string
}

func (r *runRecords) Next(context.Context) (*mergetree.KeyValue, error) {
	data, err := r.f.Next()
	if err != nil {
		return nil, err // io.EOF at the end
	}
	rec, err := r.w.codec.decodeRecord(data)
	if err != nil {
		return nil, fmt.Errorf("read spill file %s: %w: %w", r.name, spillfile.ErrCorrupt, err)
	}
	return rec, nil
}

func (r *runRecords) Close() error {
	r.w.spills.open--
	return r.f.Close()
}

// eofRecords has no records.
type eofRecords struct{}

func (eofRecords) Next(context.Context) (*mergetree.KeyValue, error) { return nil, io.EOF }
func (eofRecords) Close() error                                      { return nil }

// sliceRecords reads the records of a sorted buffer.
type sliceRecords struct {
	recs []*mergetree.KeyValue
	next int
}

func (s *sliceRecords) Next(context.Context) (*mergetree.KeyValue, error) {
	if s.next == len(s.recs) {
		return nil, io.EOF
	}
	s.next++
	return s.recs[s.next-1], nil
}

func (s *sliceRecords) Close() error { return nil }
