package lakecore

import (
	"context"
	"fmt"
	"sort"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// PartitionStats is what one partition holds in a snapshot: its live data
// files, as Paimon's $partitions system table counts them (record_count,
// file_size_in_bytes, file_count).
type PartitionStats struct {
	// Partition names the partition; its fields are empty for an
	// unpartitioned table.
	Partition *binrow.Partition
	// Buckets is the number of buckets with live files.
	Buckets int
	// Files, Rows and Bytes total the live data files.
	Files, Rows, Bytes int64
	// SortedRunsMax is, for a primary-key table, the most sorted runs of
	// one of its buckets: each level-0 file is a run, each higher level
	// one (what a merged read of the bucket merges, and what universal
	// compaction's num-sorted-run.compaction-trigger counts). 0 for append
	// tables.
	SortedRunsMax int
}

// PartitionStats returns the partitions with live data files in snap
// (which must not be nil), sorted by name; an unpartitioned table has one
// entry. Partitions are named with the current schema's options. It reads
// every manifest of the snapshot, as a full scan plan does: under a
// second of CPU for 100,000 live files (docs/BENCHMARKS.md, Planning).
func (t *Table) PartitionStats(ctx context.Context, snap *snapshot.Snapshot) ([]PartitionStats, error) {
	entries, err := t.planner.LiveEntries(ctx, snap, nil)
	if err != nil {
		return nil, err
	}
	sch := t.Schema()
	o, err := sch.Opts().PartitionOptions()
	if err != nil {
		return nil, fmt.Errorf("partition stats of snapshot %d: %w", snap.ID, err)
	}
	namer := binrow.NewPartitionNamer(sch.PartitionFields(), o)

	type acc struct {
		PartitionStats
		buckets map[int32]bool
		l0      map[int32]int            // level-0 files per bucket
		levels  map[int32]map[int32]bool // levels above 0 per bucket
	}
	keyed := len(sch.PrimaryKeys) > 0
	byPart := map[string]*acc{}
	for _, e := range entries {
		a := byPart[string(e.Partition)]
		if a == nil {
			p, err := namer.Of(e.Partition)
			if err != nil {
				return nil, fmt.Errorf("file %s of snapshot %d: %w", e.File.FileName, snap.ID, err)
			}
			a = &acc{PartitionStats: PartitionStats{Partition: p}, buckets: map[int32]bool{},
				l0: map[int32]int{}, levels: map[int32]map[int32]bool{}}
			byPart[string(e.Partition)] = a
		}
		a.Files++
		a.Rows += e.File.RowCount
		a.Bytes += e.File.FileSize
		a.buckets[e.Bucket] = true
		switch {
		case !keyed:
		case e.File.Level == 0:
			a.l0[e.Bucket]++
		default:
			if a.levels[e.Bucket] == nil {
				a.levels[e.Bucket] = map[int32]bool{}
			}
			a.levels[e.Bucket][e.File.Level] = true
		}
	}
	out := make([]PartitionStats, 0, len(byPart))
	for _, a := range byPart {
		a.Buckets = len(a.buckets)
		for b := range a.buckets {
			if keyed {
				a.SortedRunsMax = max(a.SortedRunsMax, a.l0[b]+len(a.levels[b]))
			}
		}
		out = append(out, a.PartitionStats)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition.Name < out[j].Partition.Name })
	return out, nil
}
