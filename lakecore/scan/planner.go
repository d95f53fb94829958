// Package scan plans reads of a Paimon table: which data files of a
// snapshot are live (a full plan) or new (a delta plan), grouped into splits
// per partition and bucket with their deletion vectors, and the streaming
// scanner that turns the sequence of snapshots into a sequence of plans with
// Paimon's startup modes and follow-up rules (paimon-behaviour.md §2).
//
// Planning follows apache/paimon paimon-core/.../operation/AbstractFileStoreScan.java
// and ManifestsReader.java: the manifest lists of the snapshot are read, the
// manifests that cannot hold a wanted partition are skipped by their
// partition stats, the rest are read concurrently and their entries merged
// in list order (paimon-format.md §12). Reading and checking manifests is
// manifest.Reader's; which partitions pass is partition.Predicate's.
package scan

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Split is the unit of reading: the data files of one partition and bucket.
type Split struct {
	// Partition is the serialized partition BinaryRow (manifest form).
	Partition []byte
	// PartitionValues are the decoded partition values, one per partition
	// key of the table, in lakecore's Go representation.
	PartitionValues []any
	// Bucket is 0 for unaware-bucket tables, where TotalBuckets is -1.
	Bucket, TotalBuckets int32
	// Files are sorted by MinSequenceNumber (stable: files with equal
	// numbers keep manifest order), so rows come out in write order within
	// a fixed bucket.
	Files []manifest.DataFileMeta
	// DeletionVectors holds, by data file name, the rows deleted from files
	// of this split (deletion-vectors.enabled tables); nil when none.
	DeletionVectors map[string]*manifest.DeletionVector
	// Streaming marks a split of a primary-key table whose files are read
	// as they are, record by record with their row kinds and without
	// merging: a delta or changelog plan (Java's DataSplit.isStreaming).
	// Otherwise the files of a primary-key table's split are merged.
	Streaming bool
}

// RowCount returns the number of rows the split reads: the files' row
// counts minus the rows their deletion vectors delete.
func (s *Split) RowCount() int64 {
	var n int64
	for i := range s.Files {
		n += s.Files[i].RowCount
		if dv := s.DeletionVectors[s.Files[i].FileName]; dv != nil {
			n -= dv.Cardinality()
		}
	}
	return n
}

// Plan is the splits of one snapshot, in a deterministic order: partitions
// and buckets in the order their first file appears in the manifests
// (roughly the order they were created), which is the same on every call.
type Plan struct {
	Snapshot *snapshot.Snapshot
	Splits   []Split
}

// RowCount returns the number of rows the plan reads.
func (p *Plan) RowCount() int64 {
	var n int64
	for i := range p.Splits {
		n += p.Splits[i].RowCount()
	}
	return n
}

// Planner plans reads of one table. It caches the partition keys of the
// schemas it has seen and the manifest writer schemas it has parsed, and is
// safe for concurrent use.
type Planner struct {
	fio       storage.FileIO
	tablePath string
	schemas   *schema.Manager
	manifests *manifest.Reader

	mu          sync.Mutex
	partFields  map[int64][]types.DataField
	schemaRules map[int64]tableRules
}

// NewPlanner returns the planner of the table at tablePath (relative to
// fio's root, e.g. "db.db/t").
func NewPlanner(fio storage.FileIO, tablePath string) *Planner {
	return &Planner{fio: fio, tablePath: tablePath, schemas: schema.NewManager(fio, tablePath), manifests: manifest.NewReader(fio, tablePath, manifest.ReaderOptions{}),
		partFields: map[int64][]types.DataField{}, schemaRules: map[int64]tableRules{}}
}

// partitionFields returns the partition key fields of schema id. Paimon
// never changes partition keys or their types, so any schema of the table
// gives the same answer; the snapshot's own schema is used.
func (p *Planner) partitionFields(ctx context.Context, id int64) ([]types.DataField, error) {
	p.mu.Lock()
	f, ok := p.partFields[id]
	p.mu.Unlock()
	if ok {
		return f, nil
	}
	s, err := p.schemas.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	f = s.PartitionFields()
	if len(f) != len(s.PartitionKeys) {
		return nil, fmt.Errorf("%w: schema %d of %s: partition keys %v are not all fields", ErrCorruptTable, id, p.tablePath, s.PartitionKeys)
	}
	p.mu.Lock()
	p.partFields[id] = f
	p.mu.Unlock()
	return f, nil
}

// Full plans the live data files of snap: the entries of its base manifest
// list, then of its delta list, merged in order by file identity
// (manifest.Reader.LiveEntries, Java's FileEntry.mergeEntries), keeping the
// ADDs, restricted to the partitions f passes (nil = all). The deletion
// vectors of the snapshot's index manifest are attached to the splits.
//
// Errors name the file: a missing or damaged manifest list or manifest, a
// manifest whose size or entry counts differ from its manifest list record
// (cut short: ErrCorruptTable), ORC manifests (manifest.ErrUnsupportedFormat:
// "ORC manifests are not supported"), a file added twice
// (manifest.ErrDuplicateFile), a predicate bound to other partition keys
// (ErrInvalidFilter).
func (p *Planner) Full(ctx context.Context, snap *snapshot.Snapshot, f *partition.Predicate) (*Plan, error) {
	return p.full(ctx, snap, f, func(r *keyValueRules, live []manifest.Entry) ([]manifest.Entry, error) {
		return r.batchEntries(live), nil
	})
}

// streamStart plans the first plan of a streaming read: the live files as
// Full, with the level filter of a primary-key table's changelog producer
// instead of the batch rules.
func (p *Planner) streamStart(ctx context.Context, snap *snapshot.Snapshot, f *partition.Predicate) (*Plan, error) {
	return p.full(ctx, snap, f, (*keyValueRules).streamStartEntries)
}

// full plans the live files of snap; keep applies a primary-key table's
// rules to them.
func (p *Planner) full(ctx context.Context, snap *snapshot.Snapshot, f *partition.Predicate,
	keep func(*keyValueRules, []manifest.Entry) ([]manifest.Entry, error)) (*Plan, error) {
	fields, err := p.partitionFields(ctx, snap.SchemaID)
	if err != nil {
		return nil, fmt.Errorf("plan snapshot %d of %s: %w", snap.ID, p.tablePath, err)
	}
	live, err := p.liveEntries(ctx, snap, f, fields)
	if err != nil {
		return nil, err
	}
	rules, err := p.keyValueRules(ctx, snap.SchemaID)
	if err != nil {
		return nil, fmt.Errorf("plan snapshot %d of %s: %w", snap.ID, p.tablePath, err)
	}
	if rules != nil {
		if live, err = keep(rules, live); err != nil {
			return nil, fmt.Errorf("plan snapshot %d of %s: %w", snap.ID, p.tablePath, err)
		}
	}
	return p.plan(ctx, snap, live, fields, true)
}

// Delta plans the data files snap added: the ADD entries of its delta
// manifest list, in manifest order, restricted to the partitions f passes.
// DELETE entries are ignored, as Java's ScanMode.DELTA reads them
// (SnapshotReaderImpl: plan.files(FileKind.ADD)); for a COMPACT snapshot
// these are the compaction outputs, which hold rows already read.
func (p *Planner) Delta(ctx context.Context, snap *snapshot.Snapshot, f *partition.Predicate) (*Plan, error) {
	plan, err := p.added(ctx, snap, manifest.DeltaList(snap), f)
	if err != nil {
		return nil, fmt.Errorf("plan delta of snapshot %d of %s: %w", snap.ID, p.tablePath, err)
	}
	return plan, nil
}

// added plans the files the ADD entries of one manifest list of snap add,
// in manifest order, restricted to the partitions f passes. For a
// primary-key table the splits are streaming ones (read record by record,
// without deletion vectors, which are therefore not read).
func (p *Planner) added(ctx context.Context, snap *snapshot.Snapshot, list manifest.List, f *partition.Predicate) (*Plan, error) {
	fields, err := p.partitionFields(ctx, snap.SchemaID)
	if err != nil {
		return nil, err
	}
	rules, err := p.keyValueRules(ctx, snap.SchemaID)
	if err != nil {
		return nil, err
	}
	if err := f.CheckKeys(fields); err != nil {
		return nil, err
	}
	metas, err := p.manifests.ReadList(ctx, list)
	if err != nil {
		return nil, err
	}
	entries, err := p.manifests.Entries(ctx, metas, f)
	if err != nil {
		return nil, err
	}
	adds := entries[:0]
	for i := range entries {
		if entries[i].Kind == manifest.FileKindAdd {
			adds = append(adds, entries[i])
		}
	}
	plan, err := p.plan(ctx, snap, adds, fields, rules == nil)
	if err != nil {
		return nil, err
	}
	if rules != nil {
		for i := range plan.Splits {
			plan.Splits[i].Streaming = true
		}
	}
	return plan, nil
}

// LiveEntries returns the live files of snap as manifest ADD entries in
// merge order (see Full), restricted to the partitions f passes.
func (p *Planner) LiveEntries(ctx context.Context, snap *snapshot.Snapshot, f *partition.Predicate) ([]manifest.Entry, error) {
	fields, err := p.partitionFields(ctx, snap.SchemaID)
	if err != nil {
		return nil, fmt.Errorf("plan snapshot %d of %s: %w", snap.ID, p.tablePath, err)
	}
	return p.liveEntries(ctx, snap, f, fields)
}

func (p *Planner) liveEntries(ctx context.Context, snap *snapshot.Snapshot, f *partition.Predicate, fields []types.DataField) ([]manifest.Entry, error) {
	if err := f.CheckKeys(fields); err != nil {
		return nil, fmt.Errorf("plan snapshot %d of %s: %w", snap.ID, p.tablePath, err)
	}
	live, err := p.manifests.LiveEntries(ctx, snap, f)
	if err != nil {
		return nil, fmt.Errorf("plan %w", err)
	}
	return live, nil
}

// plan groups entries into splits per (partition, bucket) in order of first
// appearance and attaches deletion vectors. The files of all splits share
// one exactly sized array: with 100,000 files a growing slice per split
// would copy and allocate several times the metadata.
func (p *Planner) plan(ctx context.Context, snap *snapshot.Snapshot, entries []manifest.Entry, fields []types.DataField, withDVs bool) (*Plan, error) {
	partTypes := make([]types.DataType, len(fields))
	for i, f := range fields {
		partTypes[i] = f.Type
	}
	type partGroup struct {
		values  []any
		buckets map[int32]int // bucket -> index in splits
	}
	parts := map[string]*partGroup{}
	var splits []Split
	splitOf := make([]int32, len(entries))
	var counts []int
	for i := range entries {
		e := &entries[i]
		g := parts[string(e.Partition)]
		if g == nil {
			vals, err := binrow.Deserialize(partTypes, e.Partition)
			if err != nil {
				return nil, fmt.Errorf("plan snapshot %d of %s, file %s: %w: partition: %w", snap.ID, p.tablePath, e.File.FileName, ErrCorruptTable, err)
			}
			g = &partGroup{values: vals, buckets: map[int32]int{}}
			parts[string(e.Partition)] = g
		}
		si, ok := g.buckets[e.Bucket]
		if !ok {
			si = len(splits)
			g.buckets[e.Bucket] = si
			splits = append(splits, Split{Partition: e.Partition, PartitionValues: g.values, Bucket: e.Bucket, TotalBuckets: e.TotalBuckets})
			counts = append(counts, 0)
		}
		splitOf[i] = int32(si)
		counts[si]++
	}
	// order holds, split after split, the indexes of the split's entries.
	order := make([]int32, len(entries))
	starts := make([]int, len(splits)+1)
	for si, n := range counts {
		starts[si+1] = starts[si] + n
	}
	fill := slices.Clone(starts[:len(splits)])
	for i, si := range splitOf {
		order[fill[si]] = int32(i)
		fill[si]++
	}
	files := make([]manifest.DataFileMeta, len(entries))
	for si := range splits {
		idx := order[starts[si]:starts[si+1]]
		seq := func(a, b int32) int {
			return cmp.Or(cmp.Compare(entries[a].File.MinSequenceNumber, entries[b].File.MinSequenceNumber), cmp.Compare(a, b))
		}
		if !slices.IsSortedFunc(idx, seq) {
			slices.SortFunc(idx, seq)
		}
		fs := files[starts[si]:starts[si+1]:starts[si+1]]
		for k, i := range idx {
			fs[k] = entries[i].File
		}
		splits[si].Files = fs
	}
	if withDVs && snap.IndexManifest != nil && *snap.IndexManifest != "" && len(splits) > 0 {
		dvs, err := p.manifests.ReadDeletionVectors(ctx, *snap.IndexManifest)
		if err != nil {
			return nil, fmt.Errorf("plan snapshot %d of %s: %w", snap.ID, p.tablePath, err)
		}
		if len(dvs) > 0 {
			for i := range splits {
				for _, f := range splits[i].Files {
					if dv, ok := dvs[f.FileName]; ok {
						if splits[i].DeletionVectors == nil {
							splits[i].DeletionVectors = map[string]*manifest.DeletionVector{}
						}
						splits[i].DeletionVectors[f.FileName] = dv
					}
				}
			}
		}
	}
	return &Plan{Snapshot: snap, Splits: splits}, nil
}
