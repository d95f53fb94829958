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
	"sync"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// LookupCache is what lookup compactions keep of the data files above
// level 0 that they look keys up in (Java's LookupLevels with the
// LookupFile cache its writers share):
//
//   - in memory, under lookup.cache-max-memory-size: the decoded records
//     of whole files, and the blocks of local files read by lookups, least
//     recently used dropped first;
//   - on local disk, under lookup.cache-max-disk-size (0 for none): a
//     local lookup file per data file (package lookupfile), built from the
//     remote file on first use, or from its decoded records when they
//     leave memory, so that a remote file is read once while it stays
//     live; least recently used files are deleted beyond the bound, and
//     files not used for lookup.cache-file-retention.
//
// The local files live in a directory of the cache's own under
// [LookupCacheOptions.Dir] (lookupfile.Dir), made on first use and removed
// by Close.
//
// A writer makes a cache of its own from its table's options and closes it
// with itself. A cache made by NewLookupCache and handed to writers with
// [KeyValueWriter.SetLookupCache] outlives them: data files are immutable
// and uniquely named in their bucket, so what one writer read serves the
// next (repeated Table.Compact calls, the paimon output's maintenance)
// instead of each reading the upper levels again. Its owner closes it. Its
// entries are keyed by bucket directory (under the table's path), data
// file name and the schema id the records were decoded with, so the
// writers sharing a cache must write tables of one warehouse. A writer
// drops the entries of the files it compacts away; files removed by other
// writers are never looked up again and age out (least recently used
// first, lookup.cache-file-retention). The bounds hold for all the writers
// together.
//
// A LookupCache is safe for concurrent use by several writers. Its lock
// covers the bookkeeping and the lookups in what it holds (a local file is
// read one block at a time under it), never the reads of the table's
// storage.
type LookupCache struct {
	mu                 sync.Mutex
	memBudget, memUsed int64
	// mem holds *memUnit, most recently used first.
	mem                  list.List
	diskBudget, diskUsed int64
	retention            time.Duration
	// disk holds the *lookupFile with a local file, most recently used
	// first.
	disk    list.List
	dirBase string
	now     func() time.Time
	// blockSize is the local files' block size, 0 for
	// lookupfile.DefaultBlockSize.
	blockSize int
	dir       *lookupfile.Dir
	// diskErr, once set, turns local files off for the cache: the local
	// disk failed (full, say), and forward reads work without it; or the
	// cache is closed.
	diskErr error
	// buckets holds the cached files of each bucket, by bucket directory.
	buckets map[string]*levelLookup
	// tick orders uses; a compaction notices that it evicted what it
	// needs by comparing ticks with its start.
	tick int64
	// builtRemote and builtLocal are the bytes of the remote files local
	// files were built from and of those local files: their ratio
	// estimates the local size of a remote file.
	builtRemote, builtLocal int64
	// spills counts the decoded files written to local files on leaving
	// memory; reads the data files read whole from the table's storage
	// into the cache.
	spills, reads int64
}

// LookupCacheOptions are the bounds and the place of a LookupCache.
type LookupCacheOptions struct {
	// MemorySize is lookup.cache-max-memory-size: the bytes of decoded
	// records and local-file blocks kept in memory.
	MemorySize int64
	// DiskSize is lookup.cache-max-disk-size: the bytes of local lookup
	// files; 0 means none (lookups that do not fit memory read the data
	// files forward at every compaction).
	DiskSize int64
	// Retention is lookup.cache-file-retention: local files not used for
	// that long are deleted; 0 means an hour, its default.
	Retention time.Duration
	// Dir is where the cache makes its directory of local files (created
	// if missing); "" means os.TempDir(). Java puts them in its IOManager's
	// temp dirs (Flink's io.tmp.dirs), for which Paimon has no table
	// option.
	Dir string
	// Now is the clock of the retention; nil means time.Now.
	Now func() time.Time
}

// The defaults of the lookup cache options (CoreOptions).
const (
	defaultLookupCacheSize     = 256 << 20 // lookup.cache-max-memory-size
	defaultLookupFileRetention = time.Hour // lookup.cache-file-retention
)

// LookupCacheOptionsFromSchema reads lookup.cache-max-memory-size (default
// 256 MiB), lookup.cache-max-disk-size (default unlimited) and
// lookup.cache-file-retention (default 1 h) from the options of s; errors
// wrap schema.ErrInvalidOption and name the option and the value.
func LookupCacheOptionsFromSchema(s *schema.TableSchema) (LookupCacheOptions, error) {
	o := LookupCacheOptions{MemorySize: defaultLookupCacheSize, DiskSize: math.MaxInt64, Retention: defaultLookupFileRetention}
	for _, e := range []struct {
		key string
		to  *int64
	}{{"lookup.cache-max-memory-size", &o.MemorySize}, {"lookup.cache-max-disk-size", &o.DiskSize}} {
		if v, ok := s.Options[e.key]; ok {
			n, err := schema.ParseMemorySize(v)
			if err != nil {
				return o, fmt.Errorf("%w: %s = %q: %w", schema.ErrInvalidOption, e.key, v, err)
			}
			*e.to = n
		}
	}
	if v, ok := s.Options["lookup.cache-file-retention"]; ok {
		d, err := schema.ParseDuration(v)
		if err != nil {
			return o, fmt.Errorf("%w: lookup.cache-file-retention = %q: %w", schema.ErrInvalidOption, v, err)
		}
		if d <= 0 {
			return o, fmt.Errorf("%w: lookup.cache-file-retention = %q: must be positive", schema.ErrInvalidOption, v)
		}
		o.Retention = d
	}
	return o, nil
}

// NewLookupCache returns an empty cache with o's bounds; it touches the
// local disk only when a lookup first needs a local file. Close it when
// no writer uses it any more.
func NewLookupCache(o LookupCacheOptions) *LookupCache {
	c := &LookupCache{memBudget: o.MemorySize, diskBudget: o.DiskSize, retention: o.Retention, dirBase: o.Dir, now: o.Now,
		buckets: map[string]*levelLookup{}}
	if c.retention <= 0 {
		c.retention = defaultLookupFileRetention
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// LookupCacheStats is what a LookupCache holds and has done.
type LookupCacheStats struct {
	// MemoryBytes and DiskBytes are the bytes held in memory and in local
	// files; Files the data files of which it holds something.
	MemoryBytes, DiskBytes int64
	Files                  int
	// Reads counts the data files read whole from the table's storage into
	// the cache (into memory or into a local file); forward reads of files
	// that fit neither are not counted.
	Reads int64
}

// Stats returns what c holds and has read.
func (c *LookupCache) Stats() LookupCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := LookupCacheStats{MemoryBytes: c.memUsed, DiskBytes: c.diskUsed, Reads: c.reads}
	for _, b := range c.buckets {
		s.Files += len(b.files)
	}
	return s
}

// errLookupCacheClosed turns local files off in a closed cache.
var errLookupCacheClosed = errors.New("lookup cache closed")

// Close deletes every local file and the cache's directory and empties
// the cache. A closed cache must not be given to writers any more; a
// writer still using it reads its lookups from the table's storage.
func (c *LookupCache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.disk.Front(); e != nil; e = e.Next() {
		_ = e.Value.(*lookupFile).local.Close()
	}
	c.disk.Init()
	c.mem.Init()
	c.memUsed, c.diskUsed = 0, 0
	clear(c.buckets)
	c.diskErr = errLookupCacheClosed
	if c.dir == nil {
		return nil
	}
	err := c.dir.Close()
	c.dir = nil
	return err
}

// levelLookup is the cached files of one bucket.
type levelLookup struct {
	dir   string
	files map[lookupName]*lookupFile
}

// lookupName names a cached data file in its bucket: the records of a
// file decoded with another schema are other records.
type lookupName struct {
	schemaID int64
	file     string
}

// lookupCodec is how the records of a writer's schema are decoded and
// encoded in local files.
type lookupCodec struct {
	schemaID   int64
	keyIdx     []int
	keyTypes   []types.DataType
	valueTypes []types.DataType
}

// lookupFile is what the cache holds of one data file: its decoded
// records (recs, in key order; nil when not in memory) and its local
// lookup file (local, nil when none) with its blocks in memory.
type lookupFile struct {
	owner    *levelLookup
	name     string
	codec    *lookupCodec
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

// The methods below are called with c.mu held.

// diskEnabled reports whether local files may be built.
func (c *LookupCache) diskEnabled() bool { return c.diskBudget > 0 && c.diskErr == nil }

// localEstimate is the expected size of the local file of a remote file
// of remote bytes.
func (c *LookupCache) localEstimate(remote int64) int64 {
	if c.builtRemote < 1<<20 {
		return 3 * remote // binary rows against compressed Parquet, until measured
	}
	return int64(float64(remote) * float64(c.builtLocal) / float64(c.builtRemote))
}

// touch marks u used now.
func (c *LookupCache) touch(u *memUnit) {
	c.tick++
	u.used = c.tick
	c.mem.MoveToFront(u.elem)
}

// addMem caches u, then evicts the least recently used other units until
// the cache fits memBudget; u stays even when it alone is over (it is in
// use). It reports whether it evicted a unit used after tick since.
func (c *LookupCache) addMem(u *memUnit, since int64) (evictedSince bool) {
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
			c.spill(victim.file, victim.recs)
		}
		c.dropMem(victim)
	}
	return evictedSince
}

// dropMem removes u from the memory cache.
func (c *LookupCache) dropMem(u *memUnit) {
	c.mem.Remove(u.elem)
	c.memUsed -= u.bytes
	if u.block < 0 {
		u.file.recs = nil
	} else {
		delete(u.file.blocks, u.block)
	}
	c.forgetIfEmpty(u.file)
}

// forgetIfEmpty drops f from its bucket, and an empty bucket from the
// cache, when the cache holds nothing of f.
func (c *LookupCache) forgetIfEmpty(f *lookupFile) {
	if f.recs != nil || f.local != nil || len(f.blocks) > 0 {
		return
	}
	c.forget(f)
}

// forget drops f from its bucket, and an empty bucket from the cache.
func (c *LookupCache) forget(f *lookupFile) {
	b := f.owner
	k := lookupName{f.codec.schemaID, f.name}
	if b.files[k] == f {
		delete(b.files, k)
	}
	if len(b.files) == 0 && c.buckets[b.dir] == b {
		delete(c.buckets, b.dir)
	}
}

// dropLocal closes and deletes f's local file and drops its blocks.
func (c *LookupCache) dropLocal(f *lookupFile) {
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
func (c *LookupCache) drop(f *lookupFile) {
	if f.recs != nil {
		c.dropMem(f.recs)
	}
	c.dropLocal(f)
	c.forget(f)
}

// expire deletes the local files not used for the retention time
// (expireAfterAccess).
func (c *LookupCache) expire(now time.Time) {
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
func (c *LookupCache) evictDisk(keep *lookupFile, since int64) (evictedSince bool) {
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

// file returns the entry of data file name of the bucket in dir decoded
// with codec, nil when the cache holds none.
func (c *LookupCache) file(dir string, codec *lookupCodec, name string) *lookupFile {
	if b := c.buckets[dir]; b != nil {
		return b.files[lookupName{codec.schemaID, name}]
	}
	return nil
}

// fileOf returns the entry of data file f of the bucket in dir decoded
// with codec, made if new.
func (c *LookupCache) fileOf(dir string, codec *lookupCodec, f *manifest.DataFileMeta) *lookupFile {
	b := c.buckets[dir]
	if b == nil {
		b = &levelLookup{dir: dir, files: map[lookupName]*lookupFile{}}
		c.buckets[dir] = b
	}
	k := lookupName{codec.schemaID, f.FileName}
	e := b.files[k]
	if e == nil {
		e = &lookupFile{owner: b, name: f.FileName, codec: codec, remote: f.FileSize}
		b.files[k] = e
	}
	return e
}

// dropBucket removes everything the cache holds of the bucket in dir.
func (c *LookupCache) dropBucket(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.buckets[dir]; b != nil {
		for _, f := range b.files {
			c.drop(f)
		}
	}
}

// dropExcept removes what the cache holds of the files of the bucket in
// dir that live does not name (Levels.DropFileCallback).
func (c *LookupCache) dropExcept(dir string, live map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.buckets[dir]; b != nil {
		for _, f := range b.files {
			if !live[f.name] {
				c.drop(f)
			}
		}
	}
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

// loadRecords reads data file f of b into memory, without holding the
// cache's lock while it reads, and returns its records. It reports whether
// making room evicted a unit used after tick since.
func (w *KeyValueWriter) loadRecords(ctx context.Context, b *kvBucket, f *manifest.DataFileMeta, since int64) ([]*mergetree.KeyValue, bool, error) {
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
	c := w.lookups
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	e := c.fileOf(b.dir, w.codec, f)
	if e.recs != nil { // another writer read it meanwhile
		c.touch(e.recs)
		return e.recs.recs, false, nil
	}
	u := &memUnit{file: e, block: -1, recs: recs, bytes: 64 + 8*int64(cap(recs))}
	for _, r := range recs {
		u.bytes += 48 + estimateRow(r.Value)
	}
	e.recs = u
	return recs, c.addMem(u, since), nil
}

// localWriter writes the records of one data file into a new local file.
type localWriter struct {
	codec *lookupCodec
	out   *lookupfile.Writer
	path  string
	buf   []byte
	key   []any
}

// newLocal creates a local file for data file name, making the cache's
// directory on first use. Called with c.mu held.
func (c *LookupCache) newLocal(name string, codec *lookupCodec) (*localWriter, error) {
	if c.diskErr != nil {
		return nil, c.diskErr
	}
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
	return &localWriter{codec: codec, out: out, path: p, key: make([]any, len(codec.keyIdx))}, nil
}

// add appends a record: its key as a BinaryRow, then its value as a
// BinaryRow, sequence number and kind (PersistValueAndPosProcessor; the
// position is the entry's ordinal).
func (l *localWriter) add(rec *mergetree.KeyValue) error {
	for i, j := range l.codec.keyIdx {
		l.key[i] = rec.Value[j]
	}
	k, err := binrow.Encode(l.codec.keyTypes, l.key)
	if err != nil {
		return err
	}
	if l.buf, err = l.codec.appendRecord(l.buf[:0], rec); err != nil {
		return err
	}
	return l.out.Add(k, l.buf)
}

// finish closes the local file and puts it in the cache as f's. Called
// with c.mu held.
func (c *LookupCache) finish(l *localWriter, f *lookupFile, since int64) (evictedSince bool, err error) {
	if err := l.out.Close(); err != nil {
		return false, err
	}
	r, err := lookupfile.Open(l.path)
	if err != nil {
		_ = os.Remove(l.path)
		return false, err
	}
	c.tick++
	f.local, f.path, f.used, f.accessed = r, l.path, c.tick, c.now()
	f.diskElem = c.disk.PushFront(f)
	c.diskUsed += r.Size()
	c.builtRemote += f.remote
	c.builtLocal += r.Size()
	return c.evictDisk(f, since), nil
}

// spill writes the decoded records of f, leaving memory, to a local file.
// A failure turns local files off (diskErr). Called with c.mu held.
func (c *LookupCache) spill(f *lookupFile, recs []*mergetree.KeyValue) {
	l, err := c.newLocal(f.name, f.codec)
	for i := 0; err == nil && i < len(recs); i++ {
		err = l.add(recs[i])
	}
	if err == nil {
		_, err = c.finish(l, f, c.tick)
		c.spills++
	} else if l != nil {
		l.out.Abort()
	}
	if err != nil {
		c.diskErr = fmt.Errorf("spill lookup records of %s: %w", f.name, err)
	}
}

// buildLocal reads data file f of b into a new local file, without
// holding the cache's lock while it reads; it reports whether the cache
// holds the file afterwards (false when the local disk failed, which turns
// local files off: read forward instead) and whether making room evicted
// a file used after tick since.
func (w *KeyValueWriter) buildLocal(ctx context.Context, b *kvBucket, f *manifest.DataFileMeta, since int64) (bool, bool, error) {
	c := w.lookups
	diskFailed := func(err error) (bool, bool, error) {
		c.mu.Lock()
		if c.diskErr == nil {
			c.diskErr = fmt.Errorf("local lookup file of %s: %w", f.FileName, err)
		}
		c.mu.Unlock()
		return false, false, nil
	}
	c.mu.Lock()
	l, err := c.newLocal(f.FileName, w.codec)
	c.mu.Unlock()
	if err != nil {
		return diskFailed(err)
	}
	r, err := w.openRemote(ctx, b, f)
	if err != nil {
		l.out.Abort()
		return false, false, err
	}
	defer r.Close()
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			l.out.Abort()
			return false, false, fmt.Errorf("lookup in bucket %d of %s: %w", b.bucket, b.dir, err)
		}
		if err := l.add(rec); err != nil {
			l.out.Abort()
			return diskFailed(err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	e := c.fileOf(b.dir, w.codec, f)
	if e.local != nil || c.diskErr != nil { // built by another writer meanwhile, or closed
		l.out.Abort()
		c.forgetIfEmpty(e)
		return e.local != nil, false, nil
	}
	evicted, err := c.finish(l, e, since)
	if err != nil {
		c.forgetIfEmpty(e)
		c.diskErr = fmt.Errorf("local lookup file of %s: %w", f.FileName, err)
		return false, false, nil
	}
	return true, evicted, nil
}

// searchLocal looks key up in f's local file: the record and its row
// position, or nil. A corrupt local file is deleted and the error (wrapping
// lookupfile.ErrCorrupt) returned; the next lookup of the file builds it
// again. Called with c.mu held.
func (c *LookupCache) searchLocal(f *lookupFile, key []any, since int64) (*mergetree.KeyValue, int64, error) {
	c.tick++
	f.used, f.accessed = c.tick, c.now()
	c.disk.MoveToFront(f.diskElem)
	rec, pos, err := c.searchBlocks(f, key, since)
	if err != nil {
		c.dropLocal(f)
		return nil, 0, fmt.Errorf("lookup in %s: %w", f.name, err)
	}
	return rec, pos, nil
}

func (c *LookupCache) searchBlocks(f *lookupFile, key []any, since int64) (*mergetree.KeyValue, int64, error) {
	// Keys are compared in place, as Java's slice comparator does.
	cmp := func(k []byte) (int, error) {
		c, err := binrow.CompareKey(f.codec.keyTypes, k, key)
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
		c.touch(u)
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
		c.addMem(u, since)
	}
	j, err := u.data.Search(cmp)
	if err != nil || j < 0 {
		return nil, 0, err
	}
	rec, err := f.codec.decodeRecord(u.data.Value(j))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", lookupfile.ErrCorrupt, err)
	}
	return rec, u.data.Ordinal(j), nil
}

// appendRecord appends rec's value as a BinaryRow, its sequence number
// and its kind to dst: the value of a local file's entry, and a spilled
// record of the write buffer.
func (codec *lookupCodec) appendRecord(dst []byte, rec *mergetree.KeyValue) ([]byte, error) {
	v, err := binrow.Encode(codec.valueTypes, rec.Value)
	if err != nil {
		return dst, err
	}
	dst = binary.LittleEndian.AppendUint64(append(dst, v...), uint64(rec.Seq))
	return append(dst, byte(rec.Kind)), nil
}

// decodeRecord decodes what appendRecord appended.
func (codec *lookupCodec) decodeRecord(v []byte) (*mergetree.KeyValue, error) {
	if len(v) < 9 {
		return nil, fmt.Errorf("entry of %d bytes", len(v))
	}
	n := len(v) - 9
	row, err := binrow.Decode(codec.valueTypes, v[:n])
	if err != nil {
		return nil, err
	}
	kind := kv.RowKind(int8(v[n+8]))
	if !kind.Valid() {
		return nil, fmt.Errorf("row kind %d", v[n+8])
	}
	return &mergetree.KeyValue{Value: row, Seq: int64(binary.LittleEndian.Uint64(v[n:])), Kind: kind}, nil
}
