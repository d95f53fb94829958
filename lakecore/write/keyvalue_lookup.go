package write

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
)

// lookupLevel is the files of one level, in key order, with decoded key
// ranges.
type lookupLevel struct {
	level  int32
	files  []int
	lo, hi [][]any
}

// lookupMode is how a lookup compaction reads the files above its output
// level that the writer's LookupCache does not hold yet.
type lookupMode int

const (
	// lookupInMemory decodes each whole file into memory (when the files
	// are expected to fit lookup.cache-max-memory-size).
	lookupInMemory lookupMode = iota
	// lookupLocal builds a local lookup file of each (when they are
	// expected to fit lookup.cache-max-disk-size).
	lookupLocal
	// lookupForward reads each forward, once per compaction, keeping
	// nothing.
	lookupForward
)

// lookupAbove returns the function a lookup compaction of b with output
// level out asks for a key's record: the first level above out whose file
// holds the key, as LookupLevels.lookup(key, out + 1) does. The levels are
// the bucket's files before the compaction, which leaves those levels
// alone. For a deletion-vectors table a found row is also marked deleted
// in its file's vector (the merge replaces it), and rows already deleted
// are passed over: call it only for keys whose merge takes the result.
//
// The files come from the writer's LookupCache (decoded records in memory,
// or a local lookup file, of which one block is read per lookup); a file
// it does not hold is read from the table's storage once: into memory when
// the files the compaction lacks are expected to fit
// lookup.cache-max-memory-size (estimated from their sizes), into a local
// lookup file otherwise. When neither fits (or local files are off:
// lookup.cache-max-disk-size = 0, or the local disk failed) such files are
// read forward instead, one open file per level, each at most once per
// compaction: caching them would evict the file the next key needs, and
// every key would read a whole file again. Once a file this compaction
// used had to make room (the estimates are rough), the next mode is taken
// for the rest: local files after memory, forward reads after local
// files.
//
// The keys must come in ascending order, as a compaction merges them.
// Call the returned close when the compaction is done with the lookups.
func (w *KeyValueWriter) lookupAbove(ctx context.Context, b *kvBucket, out int32) (func(value []any) (*mergetree.KeyValue, error), func(), error) {
	c := w.lookups
	byLevel := map[int32]*lookupLevel{}
	var levels []*lookupLevel
	var missing, missingLocal, neededLocal int64
	c.mu.Lock()
	c.expire(c.now())
	start := c.tick
	memFree, diskOn, diskBudget := c.memBudget-c.memUsed, c.diskEnabled(), c.diskBudget
	for i := range b.files {
		f := &b.files[i]
		if f.Level <= out {
			continue
		}
		if e := c.file(b.dir, w.codec, f.FileName); e == nil || (e.recs == nil && e.local == nil) {
			missing += f.FileSize
			missingLocal += c.localEstimate(f.FileSize)
		} else if e.local != nil {
			neededLocal += e.local.Size()
		}
	}
	c.mu.Unlock()
	for i := range b.files {
		f := &b.files[i]
		if f.Level <= out {
			continue
		}
		l := byLevel[f.Level]
		if l == nil {
			l = &lookupLevel{level: f.Level}
			byLevel[f.Level] = l
			levels = append(levels, l)
		}
		lo, err := binrow.Deserialize(w.keyTypes, f.MinKey)
		if err != nil {
			return nil, nil, fmt.Errorf("lookup in bucket %d of %s: data file %s: min key: %w", b.bucket, b.dir, f.FileName, err)
		}
		hi, err := binrow.Deserialize(w.keyTypes, f.MaxKey)
		if err != nil {
			return nil, nil, fmt.Errorf("lookup in bucket %d of %s: data file %s: max key: %w", b.bucket, b.dir, f.FileName, err)
		}
		l.files, l.lo, l.hi = append(l.files, i), append(l.lo, lo), append(l.hi, hi)
	}
	slices.SortFunc(levels, func(a, b *lookupLevel) int { return int(a.level - b.level) })
	for _, l := range levels {
		idx := make([]int, len(l.files))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, c int) bool { return kv.CompareKeys(l.lo[idx[a]], l.lo[idx[c]]) < 0 })
		files, lo, hi := make([]int, len(idx)), make([][]any, len(idx)), make([][]any, len(idx))
		for i, j := range idx {
			files[i], lo[i], hi[i] = l.files[j], l.lo[j], l.hi[j]
		}
		l.files, l.lo, l.hi = files, lo, hi
	}
	mode := lookupInMemory
	// Decoded records take several times their Parquet bytes.
	if missing*decodedPerFileByte > memFree {
		mode = lookupLocal
		if !diskOn || neededLocal+missingLocal > diskBudget {
			mode = lookupForward
		}
	}
	next := func() {
		c.mu.Lock()
		diskOn := c.diskEnabled()
		c.mu.Unlock()
		if mode == lookupInMemory && diskOn {
			mode = lookupLocal
		} else {
			mode = lookupForward
		}
	}
	cursors := make([]fileCursor, len(levels))
	closeAll := func() {
		for i := range cursors {
			cursors[i].close()
		}
	}
	order := &w.engine.Order
	inRecords := func(recs []*mergetree.KeyValue, value []any) (*mergetree.KeyValue, int64) {
		n := sort.Search(len(recs), func(j int) bool { return order.CompareKeys(recs[j].Value, value) >= 0 })
		if n < len(recs) && order.CompareKeys(recs[n].Value, value) == 0 {
			return recs[n], int64(n)
		}
		return nil, 0
	}
	// find looks the key of value up in data file f: the record and its
	// row position, or nil. What the cache holds is searched under its
	// lock, what it lacks is read without it; once this lookup has read f
	// into the cache, a file gone again (evicted by another writer, or
	// found corrupt) is read forward.
	find := func(f *manifest.DataFileMeta, li int, value, key []any) (*mergetree.KeyValue, int64, error) {
		read, retried := false, false
		for {
			c.mu.Lock()
			e := c.file(b.dir, w.codec, f.FileName)
			switch {
			case e != nil && e.recs != nil:
				c.touch(e.recs)
				recs := e.recs.recs
				c.mu.Unlock()
				rec, pos := inRecords(recs, value)
				return rec, pos, nil
			case e != nil && e.local != nil:
				rec, pos, err := c.searchLocal(e, key, start)
				c.mu.Unlock()
				if errors.Is(err, lookupfile.ErrCorrupt) && !retried {
					retried = true
					continue // deleted: built again, or read forward
				}
				return rec, pos, err
			}
			c.mu.Unlock()
			if read || mode == lookupForward {
				return cursors[li].seek(ctx, w, b, f, order, value)
			}
			read = true
			if mode == lookupInMemory {
				recs, evicted, err := w.loadRecords(ctx, b, f, start)
				if err != nil {
					return nil, 0, err
				}
				if evicted {
					next()
				}
				rec, pos := inRecords(recs, value)
				return rec, pos, nil
			}
			ok, evicted, err := w.buildLocal(ctx, b, f, start)
			if err != nil {
				return nil, 0, err
			}
			if !ok {
				mode = lookupForward // the local disk failed
			}
			if evicted {
				next()
			}
		}
	}
	var prev []any
	return func(value []any) (*mergetree.KeyValue, error) {
		key := order.Key(value)
		if prev != nil && kv.CompareKeys(key, prev) < 0 {
			closeAll() // out of order: read the files again from their start
		}
		prev = key
		for li, l := range levels {
			// The one file of the level whose range can hold the key
			// (levels above 0 do not overlap).
			i := sort.Search(len(l.files), func(i int) bool { return kv.CompareKeys(l.hi[i], key) >= 0 })
			if i == len(l.files) || kv.CompareKeys(l.lo[i], key) > 0 {
				continue
			}
			f := &b.files[l.files[i]]
			rec, j, err := find(f, li, value, key)
			if err != nil {
				return nil, err
			}
			if rec != nil {
				if b.dvs != nil {
					// The records are the file's rows, so j is the row's
					// position (PersistValueAndPosProcessor). A deleted row
					// is no longer the key's; otherwise the merge replaces
					// it, and the vector of its file deletes it
					// (LookupChangelogMergeFunctionWrapper.getResult).
					if b.dvs.deleted(f.FileName, j) {
						continue
					}
					b.dvs.notifyDeletion(f.FileName, j)
				}
				r := *rec
				r.Level = l.level
				return &r, nil
			}
		}
		return nil, nil
	}, closeAll, nil
}

// decodedPerFileByte is how many bytes of memory the decoded records of a
// data file take per byte of the file, for lookupAbove's choice between
// caching and reading forward (Parquet with zstd against boxed Go values).
const decodedPerFileByte = 8

// fileCursor reads one data file forward for lookups in ascending key
// order: the record at or after the last key asked for and its position
// (row number) in the file.
type fileCursor struct {
	name string
	r    mergetree.RecordReader
	cur  *mergetree.KeyValue
	pos  int64
	eof  bool
}

// seek returns the record of f whose key equals value's and its position,
// or nil, reading f forward from where the last seek left it (from its
// start when f is not the open file).
func (c *fileCursor) seek(ctx context.Context, w *KeyValueWriter, b *kvBucket, f *manifest.DataFileMeta, order *mergetree.RecordOrder, value []any) (*mergetree.KeyValue, int64, error) {
	if c.r == nil || c.name != f.FileName {
		c.close()
		r, err := w.openRemote(ctx, b, f)
		if err != nil {
			return nil, 0, err
		}
		c.r, c.name, c.cur, c.pos, c.eof = r, f.FileName, nil, -1, false
	}
	for !c.eof && (c.cur == nil || order.CompareKeys(c.cur.Value, value) < 0) {
		rec, err := c.r.Next(ctx)
		if errors.Is(err, io.EOF) {
			c.eof, c.cur = true, nil
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("lookup in bucket %d of %s: data file %s: %w", b.bucket, b.dir, f.FileName, err)
		}
		c.cur = rec
		c.pos++
	}
	if c.cur != nil && order.CompareKeys(c.cur.Value, value) == 0 {
		return c.cur, c.pos, nil
	}
	return nil, 0, nil
}

// close closes the open file, if any.
func (c *fileCursor) close() {
	if c.r != nil {
		_ = c.r.Close()
	}
	*c = fileCursor{}
}

// dropLookup drops what the lookup cache holds of the files of b (whose
// files may have changed, or which leaves a writer that owns its cache);
// a shared cache keeps the files of a bucket that merely leaves the
// writer, for the next writer.
func (w *KeyValueWriter) dropLookup(b *kvBucket, leaves bool) {
	if leaves && !w.ownLookups {
		return
	}
	w.lookups.dropBucket(b.dir)
}

// changelogMerge is a merge function of a lookup compaction, which also
// returns the changelog of the keys merged so far.
type changelogMerge interface {
	mergetree.MergeFunction
	Drain() []*mergetree.KeyValue
}

// forgetDropped drops what the lookup cache holds of files no longer
// among b's (Levels.DropFileCallback).
func (w *KeyValueWriter) forgetDropped(b *kvBucket) {
	live := make(map[string]bool, len(b.files))
	for i := range b.files {
		live[b.files[i].FileName] = true
	}
	w.lookups.dropExcept(b.dir, live)
}

// rewriteChangelog is ChangelogMergeTreeRewriter.rewriteOrProduceChangelog
// with LookupChangelogMergeFunctionWrapper: it merges the sections of
// candidate, looking up the previous state of each key with level-0
// records in the levels above out, writes the key's changelog into
// changelog files at level out (KeyValueFileWriterFactory
// createRollingChangelogFileWriter: file source APPEND) and, with
// rewriteFile, the merged records into COMPACT files at level out (retracts
// dropped with dropDelete); without rewriteFile the candidate's files are
// upgraded to out unchanged.
func (w *KeyValueWriter) rewriteChangelog(ctx context.Context, b *kvBucket, candidate [][]mergetree.SortedRun, out int32, dropDelete, rewriteFile bool,
	before, after, changelog *[]manifest.DataFileMeta) error {
	var compacted []manifest.DataFileMeta
	files := w.rolling(b, w.o.FilePrefix, out, 1, &compacted)
	logs := w.rolling(b, w.changelogPrefix, out, 0, changelog)
	abort := func(err error) error {
		files.abort()
		logs.abort()
		return err
	}
	lookup, closeLookup, err := w.lookupAbove(ctx, b, out)
	if err != nil {
		return err
	}
	defer closeLookup()
	var inputs []manifest.DataFileMeta
	for _, section := range candidate {
		readers, err := w.openSection(ctx, b, section, &inputs)
		if err != nil {
			return abort(err)
		}
		fn, err := w.engine.NewMergeFunction()
		if err != nil {
			return abort(err)
		}
		var wrapper changelogMerge
		switch inner := fn.(type) {
		case *mergetree.Lookup:
			wrapper = &mergetree.LookupChangelog{Fn: inner, LookupAbove: lookup, Equal: w.rowEqual, Sequence: w.engine.Order.Sequence}
		case *mergetree.FirstRow:
			// LookupLevels with PersistEmptyProcessor: only whether the key
			// is there counts.
			wrapper = &mergetree.FirstRowChangelog{Fn: inner, Contains: func(value []any) (bool, error) {
				r, err := lookup(value)
				return r != nil, err
			}}
		default:
			return abort(fmt.Errorf("compact bucket %d of %s: merge function %T of a lookup table is neither a lookup nor a first-row merge function", b.bucket, b.dir, fn))
		}
		m := mergetree.NewSortMergeReaderWrapped(&w.engine.Order, wrapper, readers)
		drain := func() error {
			for _, r := range wrapper.Drain() {
				if !w.lookupChangelog {
					continue // changelog-producer none: compaction without changelog
				}
				if err := logs.add(ctx, r); err != nil {
					return err
				}
			}
			return nil
		}
		for {
			rec, err := m.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err == nil {
				err = drain()
			}
			if err == nil && rewriteFile && !(dropDelete && rec.Kind.IsRetract()) {
				err = files.add(ctx, rec)
			}
			if err != nil {
				_ = m.Close()
				return abort(fmt.Errorf("compact bucket %d of %s: %w", b.bucket, b.dir, err))
			}
		}
		if err := drain(); err != nil {
			_ = m.Close()
			return abort(err)
		}
		if err := m.Close(); err != nil {
			return abort(err)
		}
	}
	if err := files.close(); err != nil {
		return abort(err)
	}
	if err := logs.close(); err != nil {
		return abort(err)
	}
	*before = append(*before, inputs...)
	if rewriteFile {
		*after = append(*after, compacted...)
		return nil
	}
	for _, f := range inputs {
		f.Level = out
		*after = append(*after, f)
	}
	return nil
}
