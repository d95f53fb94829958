package paimon

import (
	"sort"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
)

// tableMetrics publishes what the latest snapshot holds
// (maintenance.table_metrics): table totals, and files and bytes per
// partition for at most limit partitions. Benthos cannot delete a series,
// so a partition keeps its series while it exists and is set to 0 once it
// is gone; then its place is free again. It is used by the maintenance
// goroutine only.
type tableMetrics struct {
	files, bytes, rows, partitions, maxFiles gauge
	sortedRuns                               gauge // primary-key tables
	partFiles, partBytes                     gauge // labelled by partition

	limit   int
	tracked map[string]bool // partition names with a series
}

// gauge is what tableMetrics needs of *service.MetricGauge.
type gauge interface {
	Set(value int64, labelValues ...string)
}

func newTableMetrics(m *service.Metrics, limit int) *tableMetrics {
	return &tableMetrics{
		files:      m.NewGauge("paimon_table_files"),
		bytes:      m.NewGauge("paimon_table_bytes"),
		rows:       m.NewGauge("paimon_table_rows"),
		partitions: m.NewGauge("paimon_table_partitions"),
		maxFiles:   m.NewGauge("paimon_table_partition_files_max"),
		sortedRuns: m.NewGauge("paimon_table_sorted_runs_max"),
		partFiles:  m.NewGauge("paimon_partition_files", "partition"),
		partBytes:  m.NewGauge("paimon_partition_bytes", "partition"),
		limit:      limit,
		tracked:    map[string]bool{},
	}
}

// publish sets the gauges from the partition stats of the latest snapshot
// (nil for a table without snapshots).
func (tm *tableMetrics) publish(stats []lakecore.PartitionStats, partitioned bool) {
	var files, bytes, rows, maxFiles, runs int64
	for _, s := range stats {
		files += s.Files
		bytes += s.Bytes
		rows += s.Rows
		maxFiles = max(maxFiles, s.Files)
		runs = max(runs, int64(s.SortedRunsMax))
	}
	tm.sortedRuns.Set(runs)
	tm.files.Set(files)
	tm.bytes.Set(bytes)
	tm.rows.Set(rows)
	tm.partitions.Set(int64(len(stats)))
	tm.maxFiles.Set(maxFiles)
	if !partitioned {
		return
	}
	report, gone := tm.track(stats)
	for _, s := range report {
		tm.partFiles.Set(s.Files, s.Partition.Name)
		tm.partBytes.Set(s.Bytes, s.Partition.Name)
	}
	for _, name := range gone {
		tm.partFiles.Set(0, name)
		tm.partBytes.Set(0, name)
	}
}

// track updates the tracked partitions: those no longer in stats are
// returned in gone (and untracked), the tracked ones still present in
// report, and free places (up to limit) go to the untracked partitions
// with the most files, ties by name.
func (tm *tableMetrics) track(stats []lakecore.PartitionStats) (report []lakecore.PartitionStats, gone []string) {
	present := make(map[string]bool, len(stats))
	var candidates []lakecore.PartitionStats
	for _, s := range stats {
		present[s.Partition.Name] = true
		if tm.tracked[s.Partition.Name] {
			report = append(report, s)
		} else {
			candidates = append(candidates, s)
		}
	}
	for name := range tm.tracked {
		if !present[name] {
			gone = append(gone, name)
			delete(tm.tracked, name)
		}
	}
	sort.Strings(gone)
	sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].Files > candidates[j].Files })
	for _, s := range candidates {
		if len(tm.tracked) >= tm.limit {
			break
		}
		tm.tracked[s.Partition.Name] = true
		report = append(report, s)
	}
	return report, gone
}
