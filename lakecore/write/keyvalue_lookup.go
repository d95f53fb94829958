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
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
)

// levelLookup finds the record of a key in the levels above 0 of one
// bucket, as LookupLevels does for a lookup compaction (with
// PersistValueProcessor: the key's full KeyValue). Java builds a local
// sorted lookup file per data file, kept under lookup.cache-max-disk-size
// and lookup.cache-file-retention; lakecore instead keeps the decoded
// records of each data file it has looked into in memory, in key order,
// until the file leaves the bucket (Levels.DropFileCallback). The memory
// held is therefore bounded by the decoded size of the bucket's files above
// level 0 that compactions of level 0 have touched, and by
// lookup.cache-max-memory-size (default 256 MiB) for all buckets of the
// writer together: beyond it the least recently used files are dropped
// and read again when needed, and a compaction whose files would not fit
// reads them forward instead (lookupAbove). After a restart the cache is
// empty and is filled again from the files on first use.
type levelLookup struct {
	records map[string]*cachedFile
}

// cachedFile is the decoded records of one data file, their estimated
// size and when they were last used (the writer's lookupTick).
type cachedFile struct {
	recs  []*mergetree.KeyValue
	bytes int64
	used  int64
}

// defaultLookupCacheSize is lookup.cache-max-memory-size's default.
const defaultLookupCacheSize = 256 << 20

// lookupLevel is the files of one level, in key order, with decoded key
// ranges.
type lookupLevel struct {
	level  int32
	files  []int
	lo, hi [][]any
}

// lookupAbove returns the function a lookup compaction of b with output
// level out asks for a key's record: the first level above out whose file
// holds the key, as LookupLevels.lookup(key, out + 1) does. The levels are
// the bucket's files before the compaction, which leaves those levels
// alone. For a deletion-vectors table a found row is also marked deleted
// in its file's vector (the merge replaces it), and rows already deleted
// are passed over: call it only for keys whose merge takes the result.
//
// The keys must come in ascending order, as a compaction merges them.
// When the decoded files above out would not fit lookup.cache-max-memory-size
// (estimated from their sizes), the files not cached are read forward
// instead, one open file per level, each at most once per compaction:
// caching them would evict the file the next key needs, and every key would
// decode a whole file again. Call the returned close when the compaction is
// done with the lookups.
func (w *KeyValueWriter) lookupAbove(ctx context.Context, b *kvBucket, out int32) (func(value []any) (*mergetree.KeyValue, error), func(), error) {
	if b.lookup == nil {
		b.lookup = &levelLookup{records: map[string]*cachedFile{}}
	}
	byLevel := map[int32]*lookupLevel{}
	var levels []*lookupLevel
	var uncached int64
	for i := range b.files {
		f := &b.files[i]
		if f.Level <= out {
			continue
		}
		if _, ok := b.lookup.records[f.FileName]; !ok {
			uncached += f.FileSize
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
	order := &w.engine.Order
	// Decoded records take several times their Parquet bytes.
	stream := uncached*decodedPerFileByte > w.lookupBudget-w.lookupUsed
	// The cache may still turn out too small (the estimate is rough): once
	// a file this compaction used had to make room, the rest is read
	// forward too.
	start := w.lookupTick
	cursors := make([]fileCursor, len(levels))
	closeAll := func() {
		for i := range cursors {
			cursors[i].close()
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
			var rec *mergetree.KeyValue
			var j int64
			if _, cached := b.lookup.records[f.FileName]; cached || !stream {
				recs, evicted, err := w.fileRecords(ctx, b, f, start)
				if err != nil {
					return nil, err
				}
				stream = stream || evicted
				n := sort.Search(len(recs), func(j int) bool { return order.CompareKeys(recs[j].Value, value) >= 0 })
				if n < len(recs) && order.CompareKeys(recs[n].Value, value) == 0 {
					rec, j = recs[n], int64(n)
				}
			} else {
				var err error
				if rec, j, err = cursors[li].seek(ctx, w, b, f, order, value); err != nil {
					return nil, err
				}
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
		split, err := w.bucketSplit(b)
		if err != nil {
			return nil, 0, err
		}
		split.Files = []manifest.DataFileMeta{*f}
		if c.r, err = w.reader.OpenRun(ctx, split); err != nil {
			return nil, 0, fmt.Errorf("lookup in bucket %d of %s: %w", b.bucket, b.dir, err)
		}
		c.name, c.cur, c.pos, c.eof = f.FileName, nil, -1, false
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

// fileRecords returns the records of a data file of b, in key order,
// reading the file on first use.
//
// evictedSince reports whether making room for the file dropped a cached
// file last used after tick since: one the running compaction needs.
func (w *KeyValueWriter) fileRecords(ctx context.Context, b *kvBucket, f *manifest.DataFileMeta, since int64) (recs []*mergetree.KeyValue, evictedSince bool, err error) {
	w.lookupTick++
	if c, ok := b.lookup.records[f.FileName]; ok {
		c.used = w.lookupTick
		return c.recs, false, nil
	}
	split, err := w.bucketSplit(b)
	if err != nil {
		return nil, false, err
	}
	split.Files = []manifest.DataFileMeta{*f}
	r, err := w.reader.OpenRun(ctx, split)
	if err != nil {
		return nil, false, fmt.Errorf("lookup in bucket %d of %s: %w", b.bucket, b.dir, err)
	}
	defer r.Close()
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
	c := &cachedFile{recs: recs, used: w.lookupTick, bytes: 64 + 8*int64(cap(recs))}
	for _, r := range recs {
		c.bytes += 48 + estimateRow(r.Value)
	}
	b.lookup.records[f.FileName] = c
	w.lookupUsed += c.bytes
	return recs, w.evictLookups(c, since), nil
}

// evictLookups drops the least recently used cached files of all buckets
// but keep until the cache fits lookup.cache-max-memory-size, and reports
// whether it dropped one last used after tick since.
func (w *KeyValueWriter) evictLookups(keep *cachedFile, since int64) (evictedSince bool) {
	for w.lookupUsed > w.lookupBudget {
		var victim *levelLookup
		var name string
		var oldest *cachedFile
		for _, b := range w.order {
			if b.lookup == nil {
				continue
			}
			for n, c := range b.lookup.records {
				if c != keep && (oldest == nil || c.used < oldest.used) {
					victim, name, oldest = b.lookup, n, c
				}
			}
		}
		if oldest == nil {
			return evictedSince // keep alone is over the budget: it is in use
		}
		evictedSince = evictedSince || oldest.used > since
		delete(victim.records, name)
		w.lookupUsed -= oldest.bytes
	}
	return evictedSince
}

// dropLookup frees the lookup cache of b, which leaves the writer.
func (w *KeyValueWriter) dropLookup(b *kvBucket) {
	if b.lookup == nil {
		return
	}
	for _, c := range b.lookup.records {
		w.lookupUsed -= c.bytes
	}
	b.lookup = nil
}

// changelogMerge is a merge function of a lookup compaction, which also
// returns the changelog of the keys merged so far.
type changelogMerge interface {
	mergetree.MergeFunction
	Drain() []*mergetree.KeyValue
}

// forgetDropped drops the cached records of files no longer among b's
// (Levels.DropFileCallback).
func (w *KeyValueWriter) forgetDropped(b *kvBucket) {
	if b.lookup == nil {
		return
	}
	live := make(map[string]bool, len(b.files))
	for i := range b.files {
		live[b.files[i].FileName] = true
	}
	for name, c := range b.lookup.records {
		if !live[name] {
			delete(b.lookup.records, name)
			w.lookupUsed -= c.bytes
		}
	}
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
