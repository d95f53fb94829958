package lakecore

import (
	"context"
	"fmt"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
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
	s := t.Schema()
	return write.NewTableWriter(t.fio, t.path, s, write.OptionsFromSchema(s), t.sequenceRestorer())
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

// sequenceRestorer answers from the live files of the latest snapshot,
// read once per snapshot id: AbstractFileStoreWrite restores a bucket's
// files and continues after DataFileMeta.getMaxSequenceNumber.
func (t *Table) sequenceRestorer() write.SequenceRestorer {
	var (
		mu     sync.Mutex
		loaded int64 = -1
		maxSeq map[string]int64
	)
	return func(ctx context.Context, partition []byte, bucket int32) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		id, ok, err := t.snapshots.LatestID(ctx)
		if err != nil {
			return 0, err
		}
		if !ok {
			return -1, nil
		}
		if id != loaded {
			snap, err := t.snapshots.Get(ctx, id)
			if err != nil {
				return 0, err
			}
			live, err := t.planner.LiveEntries(ctx, snap, nil)
			if err != nil {
				return 0, err
			}
			maxSeq = make(map[string]int64)
			for _, e := range live {
				k := bucketKey(e.Partition, e.Bucket)
				if cur, ok := maxSeq[k]; !ok || e.File.MaxSequenceNumber > cur {
					maxSeq[k] = e.File.MaxSequenceNumber
				}
			}
			loaded = id
		}
		if m, ok := maxSeq[bucketKey(partition, bucket)]; ok {
			return m, nil
		}
		return -1, nil
	}
}

func bucketKey(partition []byte, bucket int32) string {
	return fmt.Sprintf("%d/%x", bucket, partition)
}
