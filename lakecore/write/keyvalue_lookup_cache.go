package write

import (
	"container/list"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

// The defaults of the lookup cache options (CoreOptions).
const (
	defaultLookupCacheSize     = 256 << 20 // lookup.cache-max-memory-size
	defaultLookupFileRetention = time.Hour // lookup.cache-file-retention
)

// lookupCache is what a writer keeps of the data files above level 0
// that its lookup compactions look keys up in, for all its buckets
// together (Java's LookupLevels with the writer's shared LookupFile cache):
//
//   - in memory, under lookup.cache-max-memory-size (memBudget): the
//     decoded records of whole files, and the blocks of local files read
//     by lookups, least recently used dropped first;
//   - on local disk, under lookup.cache-max-disk-size (diskBudget, 0 for
//     none): a local lookup file per data file (package lookupfile), built
//     from the remote file on first use, or from its decoded records when
//     they leave memory, so that a remote file is read once while it stays
//     in the bucket; least recently used files are deleted beyond the
//     bound, and files not used for lookup.cache-file-retention.
//
// The local files live in a directory of the writer's own under dirBase
// (lookupfile.Dir), made on first use and removed by Close.
type lookupCache struct {
	memBudget, memUsed int64
	// mem holds *memUnit, most recently used first.
	mem                  list.List
	diskBudget, diskUsed int64
	retention            time.Duration
	// disk holds the *lookupFile with a local file, most recently used
	// first.
	disk    list.List
	dirBase string
	// blockSize is the local files' block size, 0 for
	// lookupfile.DefaultBlockSize.
	blockSize int
	dir       *lookupfile.Dir
	// diskErr, once set, turns local files off for the writer: the local
	// disk failed (full, say), and forward reads work without it.
	diskErr error
	// tick orders uses; a compaction notices that it evicted what it
	// needs by comparing ticks with its start.
	tick int64
	// builtRemote and builtLocal are the bytes of the remote files local
	// files were built from and of those local files: their ratio
	// estimates the local size of a remote file.
	builtRemote, builtLocal int64
	// spills counts the decoded files written to local files on leaving
	// memory.
	spills int64
}

// levelLookup is the lookup state of one bucket's files, by file name.
type levelLookup struct {
	files map[string]*lookupFile
}

// lookupFile is what the cache holds of one data file: its decoded
// records (recs, in key order; nil when not in memory) and its local
// lookup file (local, nil when none) with its blocks in memory.
type lookupFile struct {
	owner    *levelLookup
	name     string
	remote   int64 // the data file's size
	recs     *memUnit
	local    *lookupfile.Reader
	path     string
	blocks   map[int]*memUnit
	diskElem *list.Element
	// used is the tick of the last lookup in the local file; accessed its
	// time, for lookup.cache-file-retention.
	used     int64
	accessed time.Time
}

// memUnit is one entry of the memory cache: the records of a whole file
// (block < 0) or one block of its local file.
type memUnit struct {
	file  *lookupFile
	block int
	recs  []*mergetree.KeyValue
	data  *lookupfile.Block
	bytes int64
	used  int64
	elem  *list.Element
}

// parseOptions sets the cache bounds from the table's options (errors
// name the option and the value).
func (c *lookupCache) parseOptions(options map[string]string) error {
	c.memBudget, c.diskBudget, c.retention = defaultLookupCacheSize, math.MaxInt64, defaultLookupFileRetention
	for _, o := range []struct {
		key string
		to  *int64
	}{{"lookup.cache-max-memory-size", &c.memBudget}, {"lookup.cache-max-disk-size", &c.diskBudget}} {
		if v, ok := options[o.key]; ok {
			n, err := schema.ParseMemorySize(v)
			if err != nil {
				return fmt.Errorf("%w: %s = %q: %w", schema.ErrInvalidOption, o.key, v, err)
			}
			*o.to = n
		}
	}
	if v, ok := options["lookup.cache-file-retention"]; ok {
		d, err := schema.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%w: lookup.cache-file-retention = %q: %w", schema.ErrInvalidOption, v, err)
		}
		if d <= 0 {
			return fmt.Errorf("%w: lookup.cache-file-retention = %q: must be positive", schema.ErrInvalidOption, v)
		}
		c.retention = d
	}
	return nil
}

// diskEnabled reports whether local files may be built.
func (c *lookupCache) diskEnabled() bool { return c.diskBudget > 0 && c.diskErr == nil }

// localEstimate is the expected size of the local file of a remote file
// of remote bytes.
func (c *lookupCache) localEstimate(remote int64) int64 {
	if c.builtRemote < 1<<20 {
		return 3 * remote // binary rows against compressed Parquet, until measured
	}
	return int64(float64(remote) * float64(c.builtLocal) / float64(c.builtRemote))
}

// touch marks u used now.
func (c *lookupCache) touch(u *memUnit) {
	c.tick++
	u.used = c.tick
	c.mem.MoveToFront(u.elem)
}

// addMem caches u, then evicts the least recently used other units until
// the cache fits memBudget; u stays even when it alone is over (it is in
// use). It reports whether it evicted a unit used after tick since.
func (w *KeyValueWriter) addMem(u *memUnit, since int64) (evictedSince bool) {
	c := &w.lookups
	c.tick++
	u.used = c.tick
	u.elem = c.mem.PushFront(u)
	c.memUsed += u.bytes
	for c.memUsed > c.memBudget {
		e := c.mem.Back()
		if e == nil || e.Value == u {
			break
		}
		victim := e.Value.(*memUnit)
		evictedSince = evictedSince || victim.used > since
		if victim.block < 0 && victim.file.local == nil && c.diskEnabled() {
			// The records leave memory: keep them on local disk rather
			// than read the remote file again.
			w.spill(victim.file, victim.recs)
		}
		c.dropMem(victim)
	}
	return evictedSince
}

// dropMem removes u from the memory cache.
func (c *lookupCache) dropMem(u *memUnit) {
	c.mem.Remove(u.elem)
	c.memUsed -= u.bytes
	if u.block < 0 {
		u.file.recs = nil
	} else {
		delete(u.file.blocks, u.block)
	}
	c.forgetIfEmpty(u.file)
}

// forgetIfEmpty drops f from its bucket when the cache holds nothing of it.
func (c *lookupCache) forgetIfEmpty(f *lookupFile) {
	if f.recs == nil && f.local == nil && len(f.blocks) == 0 && f.owner.files[f.name] == f {
		delete(f.owner.files, f.name)
	}
}

// dropLocal closes and deletes f's local file and drops its blocks.
func (c *lookupCache) dropLocal(f *lookupFile) {
	if f.local == nil {
		return
	}
	for _, u := range f.blocks {
		c.mem.Remove(u.elem)
		c.memUsed -= u.bytes
	}
	f.blocks = nil
	_ = f.local.Close()
	_ = os.Remove(f.path)
	c.diskUsed -= f.local.Size()
	c.disk.Remove(f.diskElem)
	f.local, f.diskElem = nil, nil
	c.forgetIfEmpty(f)
}

// drop removes everything the cache holds of f.
func (c *lookupCache) drop(f *lookupFile) {
	if f.recs != nil {
		c.dropMem(f.recs)
	}
	c.dropLocal(f)
	delete(f.owner.files, f.name)
}

// expire deletes the local files not used for the retention time
// (expireAfterAccess).
func (c *lookupCache) expire(now time.Time) {
	for e := c.disk.Back(); e != nil; {
		f := e.Value.(*lookupFile)
		if now.Sub(f.accessed) < c.retention {
			return
		}
		e = e.Prev()
		c.dropLocal(f)
	}
}

// evictDisk deletes the least recently used local files but keep until
// the local files fit diskBudget, and reports whether it deleted one used
// after tick since.
func (c *lookupCache) evictDisk(keep *lookupFile, since int64) (evictedSince bool) {
	for c.diskUsed > c.diskBudget {
		e := c.disk.Back()
		if e == nil || e.Value == keep {
			break
		}
		f := e.Value.(*lookupFile)
		evictedSince = evictedSince || f.used > since
		c.dropLocal(f)
	}
	return evictedSince
}

// close deletes every local file and the directory.
func (c *lookupCache) close() error {
	for e := c.disk.Front(); e != nil; e = e.Next() {
		_ = e.Value.(*lookupFile).local.Close()
	}
	c.disk.Init()
	c.mem.Init()
	c.memUsed, c.diskUsed = 0, 0
	if c.dir == nil {
		return nil
	}
	err := c.dir.Close()
	c.dir = nil
	return err
}

// lookupFileOf returns the cache entry of data file f of b, made if new.
func lookupFileOf(b *kvBucket, f *manifest.DataFileMeta) *lookupFile {
	if b.lookup == nil {
		b.lookup = &levelLookup{files: map[string]*lookupFile{}}
	}
	e := b.lookup.files[f.FileName]
	if e == nil {
		e = &lookupFile{owner: b.lookup, name: f.FileName, remote: f.FileSize}
		b.lookup.files[f.FileName] = e
	}
	return e
}

// openRemote opens data file f of b for a lookup, without deletion vectors
// (the records' ordinals are their row positions).
func (w *KeyValueWriter) openRemote(ctx context.Context, b *kvBucket, f *manifest.DataFileMeta) (mergetree.RecordReader, error) {
	split, err := w.bucketSplit(b)
	if err != nil {
		return nil, err
	}
	split.Files = []manifest.DataFileMeta{*f}
	r, err := w.reader.OpenRun(ctx, split)
	if err != nil {
		return nil, fmt.Errorf("lookup in bucket %d of %s: %w", b.bucket, b.dir, err)
	}
	return r, nil
}

// loadRecords reads data file f of b into memory. It reports whether
// making room evicted a unit used after tick since.
func (w *KeyValueWriter) loadRecords(ctx context.Context, b *kvBucket, f *manifest.DataFileMeta, since int64) (*lookupFile, bool, error) {
	r, err := w.openRemote(ctx, b, f)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	var recs []*mergetree.KeyValue
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("lookup in bucket %d of %s: %w", b.bucket, b.dir, err)
		}
		recs = append(recs, rec)
	}
	e := lookupFileOf(b, f)
	u := &memUnit{file: e, block: -1, recs: recs, bytes: 64 + 8*int64(cap(recs))}
	for _, r := range recs {
		u.bytes += 48 + estimateRow(r.Value)
	}
	e.recs = u
	return e, w.addMem(u, since), nil
}

// localWriter writes the records of one data file into a new local file.
type localWriter struct {
	w    *KeyValueWriter
	out  *lookupfile.Writer
	path string
	buf  []byte
	key  []any
}

// newLocal creates a local file for data file name, making the writer's
// directory on first use.
func (w *KeyValueWriter) newLocal(name string) (*localWriter, error) {
	c := &w.lookups
	if c.dir == nil {
		d, err := lookupfile.OpenDir(c.dirBase)
		if err != nil {
			return nil, err
		}
		c.dir = d
	}
	p := c.dir.NewPath(name)
	out, err := lookupfile.Create(p, c.blockSize)
	if err != nil {
		return nil, err
	}
	return &localWriter{w: w, out: out, path: p, key: make([]any, len(w.keyIdx))}, nil
}

// add appends a record: its key as a BinaryRow, then its value as a
// BinaryRow, sequence number and kind (PersistValueAndPosProcessor; the
// position is the entry's ordinal).
func (l *localWriter) add(rec *mergetree.KeyValue) error {
	for i, j := range l.w.keyIdx {
		l.key[i] = rec.Value[j]
	}
	k, err := binrow.Encode(l.w.keyTypes, l.key)
	if err != nil {
		return err
	}
	v, err := binrow.Encode(l.w.valueTypes, rec.Value)
	if err != nil {
		return err
	}
	l.buf = binary.LittleEndian.AppendUint64(append(l.buf[:0], v...), uint64(rec.Seq))
	l.buf = append(l.buf, byte(rec.Kind))
	return l.out.Add(k, l.buf)
}

// finish closes the local file and puts it in the cache as f's.
func (l *localWriter) finish(f *lookupFile, since int64) (evictedSince bool, err error) {
	if err := l.out.Close(); err != nil {
		return false, err
	}
	r, err := lookupfile.Open(l.path)
	if err != nil {
		_ = os.Remove(l.path)
		return false, err
	}
	c := &l.w.lookups
	c.tick++
	f.local, f.path, f.used, f.accessed = r, l.path, c.tick, l.w.o.Now()
	f.diskElem = c.disk.PushFront(f)
	c.diskUsed += r.Size()
	c.builtRemote += f.remote
	c.builtLocal += r.Size()
	return c.evictDisk(f, since), nil
}

// spill writes the decoded records of f, leaving memory, to a local file.
// A failure turns local files off for the writer (diskErr).
func (w *KeyValueWriter) spill(f *lookupFile, recs []*mergetree.KeyValue) {
	l, err := w.newLocal(f.name)
	for i := 0; err == nil && i < len(recs); i++ {
		err = l.add(recs[i])
	}
	if err == nil {
		_, err = l.finish(f, w.lookups.tick)
		w.lookups.spills++
	} else if l != nil {
		l.out.Abort()
	}
	if err != nil {
		w.lookups.diskErr = fmt.Errorf("spill lookup records of %s: %w", f.name, err)
	}
}

// buildLocal reads data file f of b into a new local file. A failure of
// the local disk turns local files off for the writer (diskErr) and
// returns a nil file: read forward instead.
func (w *KeyValueWriter) buildLocal(ctx context.Context, b *kvBucket, f *manifest.DataFileMeta, since int64) (*lookupFile, bool, error) {
	l, err := w.newLocal(f.FileName)
	if err != nil {
		w.lookups.diskErr = fmt.Errorf("local lookup file of %s: %w", f.FileName, err)
		return nil, false, nil
	}
	r, err := w.openRemote(ctx, b, f)
	if err != nil {
		l.out.Abort()
		return nil, false, err
	}
	defer r.Close()
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			l.out.Abort()
			return nil, false, fmt.Errorf("lookup in bucket %d of %s: %w", b.bucket, b.dir, err)
		}
		if err := l.add(rec); err != nil {
			l.out.Abort()
			w.lookups.diskErr = fmt.Errorf("local lookup file of %s: %w", f.FileName, err)
			return nil, false, nil
		}
	}
	e := lookupFileOf(b, f)
	evicted, err := l.finish(e, since)
	if err != nil {
		w.lookups.diskErr = fmt.Errorf("local lookup file of %s: %w", f.FileName, err)
		return nil, false, nil
	}
	return e, evicted, nil
}

// searchLocal looks key up in f's local file: the record and its row
// position, or nil. A corrupt local file is deleted and the error (wrapping
// lookupfile.ErrCorrupt) returned; the next lookup of the file builds it
// again.
func (w *KeyValueWriter) searchLocal(f *lookupFile, key []any, since int64) (*mergetree.KeyValue, int64, error) {
	c := &w.lookups
	c.tick++
	f.used, f.accessed = c.tick, w.o.Now()
	c.disk.MoveToFront(f.diskElem)
	rec, pos, err := w.searchBlocks(f, key, since)
	if err != nil {
		c.dropLocal(f)
		return nil, 0, fmt.Errorf("lookup in %s: %w", f.name, err)
	}
	return rec, pos, nil
}

func (w *KeyValueWriter) searchBlocks(f *lookupFile, key []any, since int64) (*mergetree.KeyValue, int64, error) {
	// Keys are compared in place, as Java's slice comparator does.
	cmp := func(k []byte) (int, error) {
		c, err := binrow.CompareKey(w.keyTypes, k, key)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", lookupfile.ErrCorrupt, err)
		}
		return -c, nil
	}
	i, err := f.local.FindBlock(cmp)
	if err != nil || i < 0 {
		return nil, 0, err
	}
	u := f.blocks[i]
	if u != nil {
		w.lookups.touch(u)
	} else {
		data, err := f.local.ReadBlock(i)
		if err != nil {
			return nil, 0, err
		}
		u = &memUnit{file: f, block: i, data: data, bytes: int64(data.Size())}
		if f.blocks == nil {
			f.blocks = map[int]*memUnit{}
		}
		f.blocks[i] = u
		w.addMem(u, since)
	}
	j, err := u.data.Search(cmp)
	if err != nil || j < 0 {
		return nil, 0, err
	}
	rec, err := w.decodeLocal(u.data.Value(j))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", lookupfile.ErrCorrupt, err)
	}
	return rec, u.data.Ordinal(j), nil
}

// decodeLocal decodes the value of a local file's entry (localWriter.add).
func (w *KeyValueWriter) decodeLocal(v []byte) (*mergetree.KeyValue, error) {
	if len(v) < 9 {
		return nil, fmt.Errorf("entry of %d bytes", len(v))
	}
	n := len(v) - 9
	row, err := binrow.Decode(w.valueTypes, v[:n])
	if err != nil {
		return nil, err
	}
	kind := kv.RowKind(int8(v[n+8]))
	if !kind.Valid() {
		return nil, fmt.Errorf("row kind %d", v[n+8])
	}
	return &mergetree.KeyValue{Value: row, Seq: int64(binary.LittleEndian.Uint64(v[n:])), Kind: kind}, nil
}
