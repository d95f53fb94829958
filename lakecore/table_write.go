package lakecore

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// NewWriter returns a writer of rows of the current schema (Schema) with
// the table's options (write.OptionsFromSchema). For a fixed-bucket table
// the sequence numbers of each (partition, bucket) continue after the
// largest one among its live files in the latest snapshot at the time the
// writer first writes to it (paimon-format.md §9.2). The table must be
// writable (schema.TableSchema.CheckWritable); the error wraps
// ErrUnsupported otherwise.
func (t *Table) NewWriter(ctx context.Context) (*write.TableWriter, error) {
	if err := t.appendOnly("write to"); err != nil {
		return nil, err
	}
	s := t.Schema()
	return write.NewTableWriter(t.fio, t.path, s, t.WriteOptions(s), t.sequenceRestorer())
}

// WriteOptions returns the options a writer of rows of s (the table's
// schema or a later one) takes: write.OptionsFromSchema, with buffers and
// zstd encoders the table shares among every writer made with them, so
// that a writer per commit does not start them afresh.
func (t *Table) WriteOptions(s *schema.TableSchema) write.Options {
	o := write.OptionsFromSchema(s)
	o.Buffers = t.buffers
	return o
}

// NewKeyValueWriter returns a writer of changes (row kind and row of the
// current schema) to a primary-key table (write.KeyValueWriter): level-0
// files per (partition, bucket) whose sequence numbers continue after the
// bucket's largest in the latest snapshot. For a dynamic-bucket table
// (bucket = -1) the writer assigns buckets from the HASH index of the
// latest snapshot and takes the table alone (commit.ErrIndexConflict).
// Tables whose options need a write mode lakecore lacks (cross-partition
// upsert among them) wrap write.ErrUnsupportedTable; a table without
// primary keys wraps ErrUnsupported (use NewWriter). Its lookup
// compactions keep the upper levels in a cache of its own, closed with it;
// write.KeyValueWriter.SetLookupCache gives it one that outlives it.
func (t *Table) NewKeyValueWriter(ctx context.Context) (*write.KeyValueWriter, error) {
	s := t.Schema()
	if len(s.PrimaryKeys) == 0 {
		return nil, fmt.Errorf("write changes to %s.%s: %w: the table has no primary key; use NewWriter", t.db, t.name, ErrUnsupported)
	}
	live := newLiveFiles(t)
	w, err := write.NewKeyValueWriter(t.fio, t.path, s, t.WriteOptions(s), live.files)
	if err != nil {
		return nil, err
	}
	w.SetBucketLister(live.buckets)
	return w, nil
}

// NewCommitter returns a committer for user with the table's options
// (commit.OptionsFromSchema of the current schema). One job should keep
// one user across restarts so that FilterCommitted can tell what it
// committed.
func (t *Table) NewCommitter(user string) *commit.Committer {
	return commit.New(t.fio, t.path, commit.OptionsFromSchema(t.Schema(), user))
}

// AddColumns appends nullable columns to the table as a new schema
// (schema.Manager.AddColumns: field ids continue after the highest one; a
// concurrent identical change is accepted) and makes it the table's current
// schema. Writers created before keep writing the old schema, which readers
// evolve.
func (t *Table) AddColumns(ctx context.Context, fields []types.DataField) (*schema.TableSchema, error) {
	s, err := t.schemas.AddColumns(ctx, fields)
	if err != nil {
		return nil, fmt.Errorf("add columns to %s.%s: %w", t.db, t.name, err)
	}
	t.mu.Lock()
	if t.schema == nil || s.ID >= t.schema.ID {
		t.schema = s
	}
	t.mu.Unlock()
	return s, nil
}

// sequenceRestorer answers from the live files of the asked partition in
// the latest snapshot (fileRestorer): AbstractFileStoreWrite restores a
// bucket's files and continues after DataFileMeta.getMaxSequenceNumber.
func (t *Table) sequenceRestorer() write.SequenceRestorer {
	files := t.fileRestorer()
	return func(ctx context.Context, partition []byte, bucket int32) (int64, error) {
		live, err := files(ctx, partition, bucket)
		if err != nil {
			return 0, err
		}
		maxSeq := int64(-1)
		for i := range live {
			maxSeq = max(maxSeq, live[i].MaxSequenceNumber)
		}
		return maxSeq, nil
	}
}

// fileRestorer answers from the live files of the asked partition in the
// latest snapshot, read once per partition and snapshot id.
func (t *Table) fileRestorer() write.FileRestorer {
	return newLiveFiles(t).files
}

// liveFiles caches the live files of the partitions asked for, by bucket,
// for the latest snapshot at the time of each call.
type liveFiles struct {
	t      *Table
	mu     sync.Mutex
	loaded int64
	parts  map[string]map[int32][]manifest.DataFileMeta // by partition bytes, bucket
}

func newLiveFiles(t *Table) *liveFiles { return &liveFiles{t: t, loaded: -1} }

// files is a write.FileRestorer.
func (l *liveFiles) files(ctx context.Context, partition []byte, bucket int32) ([]manifest.DataFileMeta, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	buckets, err := l.partition(ctx, partition)
	if err != nil {
		return nil, err
	}
	return slices.Clone(buckets[bucket]), nil
}

// buckets is a write.BucketLister: the buckets of partition holding live
// files in snapshot id, ascending.
func (l *liveFiles) buckets(ctx context.Context, id int64, partition []byte) ([]int32, error) {
	if id <= 0 {
		return nil, nil // an empty table
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	buckets, err := l.partitionAt(ctx, id, partition)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(buckets)), nil
}

// partition returns the live files of partition in the latest snapshot,
// by bucket.
func (l *liveFiles) partition(ctx context.Context, partition []byte) (map[int32][]manifest.DataFileMeta, error) {
	id, ok, err := l.t.snapshots.LatestID(ctx)
	if err != nil || !ok {
		return nil, err
	}
	return l.partitionAt(ctx, id, partition)
}

// partitionAt returns the live files of partition in snapshot id, by
// bucket, cached for the last id asked.
func (l *liveFiles) partitionAt(ctx context.Context, id int64, partition []byte) (map[int32][]manifest.DataFileMeta, error) {
	t := l.t
	if id != l.loaded {
		l.parts, l.loaded = map[string]map[int32][]manifest.DataFileMeta{}, id
	}
	if buckets, ok := l.parts[string(partition)]; ok {
		return buckets, nil
	}
	snap, err := t.snapshots.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	filter, err := t.partitionFilter(snap.SchemaID, partition)
	if err != nil {
		return nil, err
	}
	live, err := t.planner.LiveEntries(ctx, snap, filter)
	if err != nil {
		return nil, err
	}
	buckets := map[int32][]manifest.DataFileMeta{}
	for _, e := range live {
		if bytes.Equal(e.Partition, partition) {
			buckets[e.Bucket] = append(buckets[e.Bucket], e.File)
		}
	}
	l.parts[string(partition)] = buckets
	return buckets, nil
}

// partitionFilter selects exactly the partition of a serialized partition
// row (nil for an unpartitioned table).
func (t *Table) partitionFilter(schemaID int64, row []byte) (*partition.Predicate, error) {
	s := t.Schema()
	keys := s.PartitionFields()
	if len(keys) == 0 {
		return nil, nil
	}
	ts := make([]types.DataType, len(keys))
	for i, k := range keys {
		ts[i] = k.Type
	}
	vals, err := binrow.Deserialize(ts, row)
	if err != nil {
		return nil, fmt.Errorf("restore sequence numbers of schema %d: partition: %w", schemaID, err)
	}
	allowed := make(map[string][]any, len(keys))
	for i, k := range keys {
		allowed[k.Name] = []any{vals[i]}
	}
	return partition.In(keys, allowed)
}
