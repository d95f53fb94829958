package manifest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/parallel"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// readParallelism bounds the goroutines that read and decode the manifests
// of one call (Java's scan.manifest.parallelism defaults to the number of
// cores; reads are I/O bound on object stores, so a few more).
const readParallelism = 8

// List names a manifest list of a snapshot and the size the snapshot
// records for it (nil when not recorded: snapshots before Paimon 1.1).
type List struct {
	Name string
	Size *int64
}

// DataLists returns the manifest lists whose manifests hold the data files
// of s: its base list, then its delta list (ManifestList.readDataManifests).
func DataLists(s *snapshot.Snapshot) []List {
	return []List{BaseList(s), DeltaList(s)}
}

// BaseList returns the base manifest list of s: the data files of the
// snapshots before it.
func BaseList(s *snapshot.Snapshot) List {
	return List{Name: s.BaseManifestList, Size: s.BaseManifestListSize}
}

// DeltaList returns the delta manifest list of s: the changes s made.
func DeltaList(s *snapshot.Snapshot) List {
	return List{Name: s.DeltaManifestList, Size: s.DeltaManifestListSize}
}

// ChangelogList returns the changelog manifest list of s (primary-key
// tables with a changelog producer); ok is false when s has none.
func ChangelogList(s *snapshot.Snapshot) (l List, ok bool) {
	if s.ChangelogManifestList == nil || *s.ChangelogManifestList == "" {
		return List{}, false
	}
	return List{Name: *s.ChangelogManifestList, Size: s.ChangelogManifestListSize}, true
}

// PartitionFilter selects the partitions a read keeps.
// *partition.Predicate implements it; a nil PartitionFilter keeps all.
type PartitionFilter interface {
	// MatchesAll reports whether every partition is kept, which spares
	// decoding partition rows and stats.
	MatchesAll() bool
	// MayContain reports whether a manifest with these partition stats can
	// hold a kept partition; a manifest for which it is false is not read.
	// Stats that cannot be decoded must give true.
	MayContain(stats SimpleStats) bool
	// MatchRow reports whether the serialized partition row is kept; an
	// error for a row that does not decode.
	MatchRow(partition []byte) (bool, error)
}

// PartitionFunc is a PartitionFilter from a function of the serialized
// partition row; it prunes no manifest by stats. A nil PartitionFunc keeps
// all partitions.
type PartitionFunc func(partition []byte) bool

// MatchesAll reports whether f is nil.
func (f PartitionFunc) MatchesAll() bool { return f == nil }

// MayContain is always true: f cannot judge partition stats.
func (f PartitionFunc) MayContain(SimpleStats) bool { return true }

// MatchRow returns f(partition).
func (f PartitionFunc) MatchRow(partition []byte) (bool, error) { return f == nil || f(partition), nil }

// ReaderOptions configure a Reader.
type ReaderOptions struct {
	// CacheEntries bounds the decoded entries the reader keeps, by manifest
	// name, evicting the oldest manifest first. Manifests never change once
	// written, so a cached manifest is never stale. 0 keeps nothing: right
	// for planners, whose reads of one snapshot rarely repeat; a committer,
	// which rereads the latest snapshot's manifests on every commit, keeps
	// some (200,000 entries are about 50-100 MiB).
	CacheEntries int
}

// Reader reads the manifest lists and manifests of one table, checking
// every file against the record that names it. It is the only reader of
// manifests in lakecore: planning, committing and maintenance use it, so
// that they agree on what a damaged file is.
//
// The checks, as Java reads exactly the recorded sizes (ManifestFile,
// ManifestList):
//   - a manifest list has the size its snapshot records, when recorded;
//   - a manifest has the FileSize and the ADD and DELETE counts of its
//     manifest list record. Entry counts are computed from the entries
//     written, so a difference means the file was cut short (possibly at an
//     Avro block boundary, which decodes as a shorter valid file) or
//     replaced.
//
// Errors name the file and wrap: ErrCorruptTable for a failed check or an
// entry whose partition does not decode, storage.ErrNotExist for a missing
// file, ErrUnsupportedFormat for ORC manifests, ErrCorrupt (and the other
// sentinels of Decoder) for bytes that do not decode, ErrDuplicateFile for a
// file added twice.
//
// Entries returned may be shared with the cache and with other callers:
// they must not be modified. A Reader is safe for concurrent use.
type Reader struct {
	fio       storage.FileIO
	tablePath string
	dec       *Decoder
	cache     *entryCache // nil: no cache
}

// NewReader returns the reader of the table at tablePath (relative to fio's
// root, e.g. "db.db/t").
func NewReader(fio storage.FileIO, tablePath string, o ReaderOptions) *Reader {
	r := &Reader{fio: fio, tablePath: tablePath, dec: NewDecoder()}
	if o.CacheEntries > 0 {
		r.cache = newEntryCache(o.CacheEntries)
	}
	return r
}

// ReadIndexEntries reads the index manifest name (a snapshot's
// indexManifest): deletion-vector and hash index files. Snapshots record no
// size for it, so nothing is checked beyond decoding.
func (r *Reader) ReadIndexEntries(ctx context.Context, name string) ([]IndexEntry, error) {
	return readManifestFile(ctx, r.fio, r.tablePath, name, "index manifest", r.dec.DecodeIndexEntries)
}

// ReadDeletionVectors reads the deletion vectors of the index manifest
// name by data file name (Decoder.ReadDeletionVectors).
func (r *Reader) ReadDeletionVectors(ctx context.Context, name string) (map[string]*DeletionVector, error) {
	return r.dec.ReadDeletionVectors(ctx, r.fio, r.tablePath, name)
}

// ReadList reads and checks a manifest list.
func (r *Reader) ReadList(ctx context.Context, l List) ([]FileMeta, error) {
	if l.Name == "" {
		return nil, fmt.Errorf("%w: snapshot names no manifest list", ErrCorruptTable)
	}
	p := FilePath(r.tablePath, l.Name)
	data, err := r.fio.ReadFile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", p, err)
	}
	if l.Size != nil && *l.Size != int64(len(data)) {
		return nil, fmt.Errorf("read manifest list %s: %w: %d bytes, the snapshot says %d (cut short or replaced)", p, ErrCorruptTable, len(data), *l.Size)
	}
	metas, err := r.dec.DecodeFileMetas(data)
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", p, err)
	}
	return metas, nil
}

// ReadLists reads the lists in order and returns their manifests
// concatenated.
func (r *Reader) ReadLists(ctx context.Context, lists ...List) ([]FileMeta, error) {
	var all []FileMeta
	for i, l := range lists {
		metas, err := r.ReadList(ctx, l)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			all = metas
		} else {
			all = append(all, metas...)
		}
	}
	return all, nil
}

// ReadManifest reads and checks the manifest m names, from the cache when
// it holds it.
func (r *Reader) ReadManifest(ctx context.Context, m *FileMeta) ([]Entry, error) {
	if r.cache != nil {
		if e, ok := r.cache.get(m.FileName); ok {
			return e, nil
		}
	}
	p := FilePath(r.tablePath, m.FileName)
	data, err := r.fio.ReadFile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", p, err)
	}
	if int64(len(data)) != m.FileSize {
		// An ORC manifest has another size too; say what it is.
		if _, derr := r.dec.DecodeEntries(data); errors.Is(derr, ErrUnsupportedFormat) {
			return nil, fmt.Errorf("read manifest %s: %w", p, derr)
		}
		return nil, fmt.Errorf("read manifest %s: %w: %d bytes, the manifest list says %d (cut short or replaced)", p, ErrCorruptTable, len(data), m.FileSize)
	}
	entries, err := r.dec.DecodeEntries(data)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", p, err)
	}
	var adds, deletes int64
	for i := range entries {
		if entries[i].Kind == FileKindAdd {
			adds++
		} else {
			deletes++
		}
	}
	if adds != m.NumAddedFiles || deletes != m.NumDeletedFiles {
		return nil, fmt.Errorf("read manifest %s: %w: %d ADD and %d DELETE entries, the manifest list says %d and %d",
			p, ErrCorruptTable, adds, deletes, m.NumAddedFiles, m.NumDeletedFiles)
	}
	if r.cache != nil {
		r.cache.put(m.FileName, entries)
	}
	return entries, nil
}

// ReadManifests reads the manifests concurrently and returns each one's
// entries at its index, so that the merge order does not depend on
// scheduling. On failure the remaining reads are abandoned and the failure
// that stopped them is returned (which of several failing manifests that is
// depends on scheduling).
func (r *Reader) ReadManifests(ctx context.Context, metas []FileMeta) ([][]Entry, error) {
	out := make([][]Entry, len(metas))
	if len(metas) == 0 {
		return out, nil
	}
	err := parallel.ForEach(ctx, readParallelism, len(metas), func(ctx context.Context, i int) error {
		var err error
		out[i], err = r.ReadManifest(ctx, &metas[i])
		return err
	})
	if err != nil {
		if err == ctx.Err() {
			return nil, fmt.Errorf("read manifests of %s: %w", r.tablePath, err)
		}
		return nil, err
	}
	return out, nil
}

// Entries returns the entries of the manifests in the partitions keep
// selects (all when nil), in manifest order. Manifests whose partition
// stats exclude every selected partition are not read: a DELETE and the
// ADD it cancels share the partition, so skipping both keeps a later merge
// correct.
func (r *Reader) Entries(ctx context.Context, metas []FileMeta, keep PartitionFilter) ([]Entry, error) {
	all := keep == nil || keep.MatchesAll()
	if !all {
		kept := metas[:0:0]
		for i := range metas {
			if keep.MayContain(metas[i].PartitionStats) {
				kept = append(kept, metas[i])
			}
		}
		metas = kept
	}
	groups, err := r.ReadManifests(ctx, metas)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	out := make([]Entry, 0, n)
	// One decision per distinct partition row.
	verdict := map[string]bool{}
	for _, g := range groups {
		if all {
			out = append(out, g...)
			continue
		}
		for i := range g {
			ok, seen := verdict[string(g[i].Partition)]
			if !seen {
				if ok, err = keep.MatchRow(g[i].Partition); err != nil {
					return nil, fmt.Errorf("file %s: %w: %w", g[i].File.FileName, ErrCorruptTable, err)
				}
				verdict[string(g[i].Partition)] = ok
			}
			if ok {
				out = append(out, g[i])
			}
		}
	}
	return out, nil
}

// MergedEntries returns the data files of s in the partitions keep selects:
// the entries of its base, then its delta manifests, merged in that order
// by file identity (MergeEntries, Java's FileEntry.mergeEntries). What is
// left are the live files (ADD) and any DELETE whose ADD is in a manifest
// s no longer lists.
func (r *Reader) MergedEntries(ctx context.Context, s *snapshot.Snapshot, keep PartitionFilter) ([]Entry, error) {
	metas, err := r.ReadLists(ctx, DataLists(s)...)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: %w", s.ID, err)
	}
	entries, err := r.Entries(ctx, metas, keep)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: %w", s.ID, err)
	}
	merged, err := MergeEntries(entries)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d of %s: %w", s.ID, r.tablePath, err)
	}
	return merged, nil
}

// LiveEntries returns the live data files of s in the partitions keep
// selects, as ADD entries in merge order (see MergedEntries): a DELETE left
// over cancels a file of a manifest no longer listed, and is dropped as
// Java's scan drops it (AbstractFileStoreScan.readAndMergeFileEntries keeps
// ADDs only).
func (r *Reader) LiveEntries(ctx context.Context, s *snapshot.Snapshot, keep PartitionFilter) ([]Entry, error) {
	merged, err := r.MergedEntries(ctx, s, keep)
	if err != nil {
		return nil, err
	}
	live := merged[:0]
	for i := range merged {
		if merged[i].Kind == FileKindAdd {
			live = append(live, merged[i])
		}
	}
	return live, nil
}

// Remember caches entries as the content of the manifest name, which the
// caller has just written; a reader without a cache ignores it.
func (r *Reader) Remember(name string, entries []Entry) {
	if r.cache != nil {
		r.cache.put(name, entries)
	}
}

// Forget drops the manifest name from the cache (it was deleted).
func (r *Reader) Forget(name string) {
	if r.cache != nil {
		r.cache.remove(name)
	}
}

// entryCache keeps decoded manifests by file name, evicting the oldest
// first once it holds more than max entries. Cached slices are shared and
// must not be modified. It is safe for concurrent use.
type entryCache struct {
	mu      sync.Mutex
	max     int
	n       int
	entries map[string][]Entry
	order   []string
}

func newEntryCache(maxEntries int) *entryCache {
	return &entryCache{max: maxEntries, entries: map[string][]Entry{}}
}

func (c *entryCache) get(name string) ([]Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	return e, ok
}

func (c *entryCache) put(name string, e []Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(e) > c.max {
		return
	}
	if _, ok := c.entries[name]; ok {
		return
	}
	for c.n+len(e) > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.n -= len(c.entries[old])
		delete(c.entries, old)
	}
	c.entries[name] = e
	c.order = append(c.order, name)
	c.n += len(e)
}

func (c *entryCache) remove(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[name]; ok {
		c.n -= len(e)
		delete(c.entries, name)
		for i, n := range c.order {
			if n == name {
				c.order = append(c.order[:i], c.order[i+1:]...)
				break
			}
		}
	}
}
