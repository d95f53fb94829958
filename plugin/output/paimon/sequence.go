package paimon

import (
	"context"
	"fmt"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// sequenceAllocator keeps the sequence numbers of a fixed-bucket table
// disjoint between the concurrent batches of this process.
//
// In a fixed-bucket table every (partition, bucket) numbers its rows
// consecutively across files (AppendOnlyWriter's LongCounter, restored from
// the bucket's files by AbstractFileStoreWrite); readers and compaction
// order a bucket's files by those numbers. Each in-flight batch has its own
// TableWriter, and a fresh writer continues after the highest number among
// the committed files, so two batches encoded at the same time would both
// start at the same number. The output therefore encodes the batches of a
// fixed-bucket table one at a time (writeMu; conversion of messages stays
// parallel, as does everything for bucket-unaware tables, which have no
// sequence to keep) and remembers the highest number it handed out per
// (partition, bucket), whether or not that batch is committed yet. A batch
// that fails leaves a gap, which Paimon tolerates.
//
// Its restorer and record run only inside writeMu, which also guards its
// state.
type sequenceAllocator struct {
	tbl *lakecore.Table

	// writeMu is held by a batch of a fixed-bucket table from its first
	// Write to its Prepare and record.
	writeMu sync.Mutex

	// issued is the highest sequence number written by this process per
	// bucketID.
	issued map[string]int64
	// committed caches the highest number among the live files of snapshot
	// loadedID per bucketID.
	committed map[string]int64
	loadedID  int64
}

func newSequenceAllocator(tbl *lakecore.Table) *sequenceAllocator {
	return &sequenceAllocator{tbl: tbl, issued: map[string]int64{}, loadedID: -1}
}

func bucketID(partition []byte, bucket int32) string {
	return fmt.Sprintf("%d/%x", bucket, partition)
}

// restorer is the SequenceRestorer of a batch's TableWriter: the larger of
// what this process issued and what the latest snapshot holds.
func (a *sequenceAllocator) restorer() write.SequenceRestorer {
	return func(ctx context.Context, partition []byte, bucket int32) (int64, error) {
		key := bucketID(partition, bucket)
		if n, ok := a.issued[key]; ok {
			return n, nil // at least the committed maximum: it was restored from it
		}
		if err := a.loadCommitted(ctx); err != nil {
			return 0, err
		}
		if n, ok := a.committed[key]; ok {
			return n, nil
		}
		return -1, nil
	}
}

// keyValueRestorer is the sequence floor of a batch's KeyValueWriter on a
// primary-key table: the larger of what this process issued and what the
// latest snapshot holds, read again when the latest snapshot changed, so
// that a batch refused for another writer's commit to its bucket
// (commit.ErrSequenceConflict) numbers after that writer when it is
// written again.
func (a *sequenceAllocator) keyValueRestorer() write.SequenceRestorer {
	return func(ctx context.Context, partition []byte, bucket int32) (int64, error) {
		key := bucketID(partition, bucket)
		if err := a.loadCommitted(ctx); err != nil {
			return 0, err
		}
		n := int64(-1)
		if c, ok := a.committed[key]; ok {
			n = c
		}
		if i, ok := a.issued[key]; ok {
			n = max(n, i)
		}
		return n, nil
	}
}

// loadCommitted reads the live files of the latest snapshot once per
// snapshot id.
func (a *sequenceAllocator) loadCommitted(ctx context.Context) error {
	snap, err := a.tbl.Snapshots().LatestExisting(ctx)
	if err != nil {
		return fmt.Errorf("restore sequence numbers: %w", err)
	}
	if snap == nil {
		a.committed, a.loadedID = map[string]int64{}, 0
		return nil
	}
	if snap.ID == a.loadedID {
		return nil
	}
	live, err := a.tbl.Planner().LiveEntries(ctx, snap, nil)
	if err != nil {
		return fmt.Errorf("restore sequence numbers from snapshot %d: %w", snap.ID, err)
	}
	m := make(map[string]int64)
	for _, e := range live {
		k := bucketID(e.Partition, e.Bucket)
		if cur, ok := m[k]; !ok || e.File.MaxSequenceNumber > cur {
			m[k] = e.File.MaxSequenceNumber
		}
	}
	a.committed, a.loadedID = m, snap.ID
	return nil
}

// record notes the sequence numbers a prepared batch used.
func (a *sequenceAllocator) record(msgs []commit.Message) {
	for _, m := range msgs {
		k := bucketID(m.Partition, m.Bucket)
		for _, f := range m.NewFiles {
			if cur, ok := a.issued[k]; !ok || f.MaxSequenceNumber > cur {
				a.issued[k] = f.MaxSequenceNumber
			}
		}
	}
}
