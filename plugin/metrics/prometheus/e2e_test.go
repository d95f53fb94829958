package prometheus_test

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/paimon"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

// generateRows is a generate input of 3,000 rows (id, name, dt) in
// batches of 250, spread over three dt partitions.
const generateRows = `generate:
  count: 3000
  interval: ""
  batch_size: 250
  mapping: |
    let n = counter()
    root.id = $n
    root.name = "row-%d".format($n)
    root.dt = ["2026-01-01", "2026-01-02", "2026-01-03"].index($n % 3)`

// lakeOutput is the paimon output labelled lake that creates db.events,
// partitioned by dt and with the table options (a YAML flow map), in
// warehouse and commits batches of 250; extra is one more line of its
// fields.
func lakeOutput(warehouse, options, extra string) string {
	return `
label: lake
paimon:
  warehouse: ` + warehouse + `
  database: db
  table: events
  create_table:
    enabled: true
    schema:
      - { name: id, type: BIGINT NOT NULL }
      - { name: name, type: STRING }
      - { name: dt, type: STRING NOT NULL }
    partition_keys: [ dt ]
    options: ` + options + `
  batching:
    count: 250
  ` + extra + "\n"
}

// lake are the labels of the lake output's series.
var lake = []string{"label", "lake", "path", "root.output"}

// startLive runs the generated rows into output and keeps the stream (and
// so the output) running after them until the test ends; it returns the
// stream's HTTP mux.
func startLive(t *testing.T, output string) *http.ServeMux {
	t.Helper()
	sb, mux := newScrapedStream(t)
	must(t, sb.AddInputYAML(`
sequence:
  inputs:
    - `+strings.ReplaceAll(generateRows, "\n", "\n      ")+`
    - generate:
        interval: 1h
        mapping: root = deleted()
`))
	must(t, sb.AddOutputYAML(output))
	s, err := sb.Build()
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(ctx) }()
	t.Cleanup(func() {
		must(t, s.Stop(context.Background()))
		<-runErr
		cancel()
	})
	return mux
}

// waitFor scrapes mux until cond holds for what it returns, failing after
// a minute.
func waitFor(t *testing.T, mux *http.ServeMux, what string, cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		fams := scrape(t, mux)
		if cond(fams) {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sample returns the value of the lake output's series of a counter or
// gauge, and whether it exists.
func sample(fams map[string]*dto.MetricFamily, name string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		if hasLabels(m, lake) {
			if m.Counter != nil {
				return m.GetCounter().GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// TestPaimonOutputMetricsEndToEnd runs generate -> paimon with the
// prometheus exporter, scrapes /metrics from the stream's HTTP mux and
// checks every output metric against the table as lakecore reads it back.
func TestPaimonOutputMetricsEndToEnd(t *testing.T) {
	const rows = 3000
	warehouse := t.TempDir()

	sb, mux := newScrapedStream(t)
	must(t, sb.AddInputYAML(generateRows))
	must(t, sb.AddOutputYAML(lakeOutput(warehouse, "{}", "max_in_flight: 2")))
	s, err := sb.Build()
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must(t, s.Run(ctx))

	tbl, err := lakecore.Open(ctx, warehouse, "db", "events")
	must(t, err)
	snap, err := tbl.Snapshots().Latest(ctx)
	must(t, err)
	plan, err := tbl.Planner().Full(ctx, snap, nil)
	must(t, err)
	var files, bytes int64
	for _, sp := range plan.Splits {
		for _, f := range sp.Files {
			files++
			bytes += f.FileSize
		}
	}
	if snap.TotalRecordCount == nil || *snap.TotalRecordCount != rows {
		t.Fatalf("table holds %v rows, want %d", snap.TotalRecordCount, rows)
	}
	if len(plan.Splits) != 3 {
		t.Errorf("table has %d splits, want 3 (one per dt)", len(plan.Splits))
	}

	fams := scrape(t, mux)
	check := func(name string, want float64) {
		t.Helper()
		if got := value(t, fams, name, lake...); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("paimon_rows_written", rows)
	check("paimon_files_written", float64(files))
	check("paimon_bytes_written", float64(bytes))
	// A fresh table with no maintenance: every commit is one snapshot.
	check("paimon_commits", float64(snap.ID))
	check("paimon_last_snapshot_id", float64(snap.ID))
	// A labelled series exists from its first increment on, so counters
	// that never moved are absent (PromQL: `or vector(0)`).
	for _, name := range []string{"paimon_commit_retries", "paimon_commit_failures", "paimon_rows_rejected"} {
		if f, ok := fams[name]; ok {
			t.Errorf("%s exported with %v, want no sample", name, f.GetMetric())
		}
	}
	check("output_sent", rows)
	count, sum, _ := histogram(t, fams, "paimon_commit_latency_seconds", lake...)
	if count != uint64(snap.ID) {
		t.Errorf("paimon_commit_latency_seconds count = %d, want %d (one per commit)", count, snap.ID)
	}
	if sum <= 0 || sum > 120 {
		t.Errorf("paimon_commit_latency_seconds sum = %v s", sum)
	}
	if snap.ID < 2 {
		t.Errorf("only %d snapshots for %d batches: group commit cannot merge all of them", snap.ID, rows/250)
	}
	t.Logf("%d rows, %d commits, %d files, %d bytes, mean commit %.1f ms", rows, snap.ID, files, bytes, 1000*sum/float64(count))

	// Read it back snapshot by snapshot with the paimon input.
	rb, rmux := newScrapedStream(t)
	must(t, rb.AddInputYAML(`
label: tail
paimon:
  warehouse: `+warehouse+`
  database: db
  table: events
  scan_mode: from-snapshot
  scan_snapshot_id: 1
  bounded: true
  consumer_id: metrics-test
`))
	must(t, rb.AddOutputYAML(`drop: {}`))
	rs, err := rb.Build()
	must(t, err)
	first, err := tbl.Snapshots().Get(ctx, 1)
	must(t, err)
	readStart := time.Now()
	must(t, rs.Run(ctx))
	readEnd := time.Now()
	fams = scrape(t, rmux)
	tail := []string{"label", "tail", "path", "root.input"}
	checkIn := func(name string, want float64) {
		t.Helper()
		if got := value(t, fams, name, tail...); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	checkIn("paimon_input_rows", rows)
	checkIn("input_received", rows)
	checkIn("paimon_input_files", float64(files))
	checkIn("paimon_input_snapshots", float64(snap.ID))
	checkIn("paimon_input_consumer_next_snapshot", float64(snap.ID+1))
	if lag := value(t, fams, "paimon_input_lag_ms", tail...); lag < 0 || lag > 120_000 {
		t.Errorf("paimon_input_lag_ms = %v", lag)
	}
	// Freshness: one observation per batch, each between the reader's
	// start minus the last commit and its end minus the first commit.
	batches := value(t, fams, "output_batch_sent", "path", "root.output")
	count, sum, buckets := histogram(t, fams, "paimon_input_freshness_seconds", tail...)
	if float64(count) != batches || count == 0 {
		t.Errorf("paimon_input_freshness_seconds count = %d, want %v (one per batch)", count, batches)
	}
	lo := readStart.Sub(time.UnixMilli(snap.TimeMillis)).Seconds() - 0.001
	hi := readEnd.Sub(time.UnixMilli(first.TimeMillis)).Seconds() + 0.001
	if sum < float64(count)*lo || sum > float64(count)*hi {
		t.Errorf("paimon_input_freshness_seconds sum = %v s for %d batches, want each within [%.3f, %.3f] s", sum, count, lo, hi)
	}
	t.Logf("freshness: %d batches, mean %.1f ms, bounds [%.1f, %.1f] ms", count, 1000*sum/float64(count), 1000*lo, 1000*hi)
	for le, n := range buckets {
		if (le < lo && n != 0) || (le >= hi && n != count) {
			t.Errorf("paimon_input_freshness_seconds bucket le=%v holds %d of %d, but every batch is within [%.3f, %.3f] s", le, n, count, lo, hi)
		}
	}
	// One scan per snapshot, all within the read.
	scans, scanSum, _ := histogram(t, fams, "paimon_input_scan_duration_seconds", tail...)
	if scans != uint64(snap.ID) || scanSum <= 0 || scanSum > readEnd.Sub(readStart).Seconds() {
		t.Errorf("paimon_input_scan_duration_seconds: %d scans taking %v s, want %d within the %v read", scans, scanSum, snap.ID, readEnd.Sub(readStart))
	}
	for _, name := range []string{"paimon_input_consumer_errors", "paimon_input_rows_dropped", "paimon_input_snapshots_expired"} {
		if f, ok := fams[name]; ok {
			t.Errorf("%s exported with %v, want no sample", name, f.GetMetric())
		}
	}
}

// TestPaimonTableMetricsEndToEnd runs generate -> paimon with the table
// metrics on and a limit of two partition series, scrapes /metrics while
// the pipeline runs until the gauges describe every row, and checks them
// against the table's partition stats.
func TestPaimonTableMetricsEndToEnd(t *testing.T) {
	const rows = 3000
	warehouse := t.TempDir()

	mux := startLive(t, lakeOutput(warehouse, "{}", "maintenance: {interval: 0s, partition_metrics_limit: 2}"))
	fams := waitFor(t, mux, "paimon_table_rows to reach every row", func(fams map[string]*dto.MetricFamily) bool {
		v, ok := sample(fams, "paimon_table_rows")
		return ok && v == rows
	})

	ctx := context.Background()
	tbl, err := lakecore.Open(ctx, warehouse, "db", "events")
	must(t, err)
	snap, err := tbl.Snapshots().Latest(ctx)
	must(t, err)
	stats, err := tbl.PartitionStats(ctx, snap)
	must(t, err)
	if len(stats) != 3 {
		t.Fatalf("%d partitions, want 3", len(stats))
	}
	var files, bytes, maxFiles int64
	for _, p := range stats {
		files += p.Files
		bytes += p.Bytes
		maxFiles = max(maxFiles, p.Files)
	}
	check := func(name string, want int64, labels ...string) {
		t.Helper()
		if got := value(t, fams, name, append(labels, lake...)...); got != float64(want) {
			t.Errorf("%s%v = %v, want %d", name, labels, got, want)
		}
	}
	check("paimon_table_files", files)
	check("paimon_table_bytes", bytes)
	check("paimon_table_partitions", 3)
	check("paimon_table_partition_files_max", maxFiles)
	// Every commit wrote one file per partition, so the three tie and the
	// two places go to the first two by name.
	for _, p := range stats[:2] {
		check("paimon_partition_files", p.Files, "partition", p.Partition.Name)
		check("paimon_partition_bytes", p.Bytes, "partition", p.Partition.Name)
	}
	for _, m := range fams["paimon_partition_files"].GetMetric() {
		if hasLabels(m, []string{"partition", stats[2].Partition.Name}) {
			t.Errorf("partition %s has a series beyond partition_metrics_limit: %v", stats[2].Partition.Name, m)
		}
	}
	t.Logf("%d files, %d bytes in 3 partitions after %d snapshots", files, bytes, snap.ID)
}

// TestPaimonMaintenanceMetricsEndToEnd runs generate -> paimon with the
// output's maintenance expiring snapshots (retaining 3) in one pipeline
// and compacting (5 files or more per partition) in another, waits until
// the maintenance has nothing left to do, and checks its counters against
// the snapshots it left.
func TestPaimonMaintenanceMetricsEndToEnd(t *testing.T) {
	ctx := context.Background()
	t.Run("expiry", func(t *testing.T) {
		warehouse := t.TempDir()
		mux := startLive(t, lakeOutput(warehouse, `{snapshot.num-retained.min: "3", snapshot.num-retained.max: "3"}`,
			"maintenance: {interval: 0s}"))
		fams := waitFor(t, mux, "expiry down to 3 snapshots after every row", func(fams map[string]*dto.MetricFamily) bool {
			rows, _ := sample(fams, "paimon_table_rows")
			last, _ := sample(fams, "paimon_last_snapshot_id")
			expired, _ := sample(fams, "paimon_snapshots_expired")
			return rows == 3000 && expired == last-3
		})
		tbl, err := lakecore.Open(ctx, warehouse, "db", "events")
		must(t, err)
		ids, err := tbl.Snapshots().ListIDs(ctx)
		must(t, err)
		last, _ := sample(fams, "paimon_last_snapshot_id")
		if len(ids) != 3 || float64(ids[2]) != last || value(t, fams, "paimon_snapshots_expired", lake...) != float64(ids[0]-1) {
			t.Errorf("snapshots %v left, last committed %v, paimon_snapshots_expired %v", ids, last, value(t, fams, "paimon_snapshots_expired", lake...))
		}
		if _, ok := sample(fams, "paimon_maintenance_failures"); ok {
			t.Errorf("paimon_maintenance_failures exported: %v", fams["paimon_maintenance_failures"])
		}
	})
	t.Run("compaction", func(t *testing.T) {
		warehouse := t.TempDir()
		mux := startLive(t, lakeOutput(warehouse, `{compaction.min.file-num: "5"}`,
			"maintenance: {interval: 0s}\n  compaction: {enabled: true}"))
		// Each batch writes one file per partition, 12 in all; compaction
		// leaves fewer than 5 per partition, and then has nothing to do.
		var stable map[string]float64
		fams := waitFor(t, mux, "compaction to settle after every row", func(fams map[string]*dto.MetricFamily) bool {
			now := map[string]float64{}
			for _, n := range []string{"paimon_table_rows", "paimon_table_partition_files_max", "paimon_compactions",
				"paimon_compaction_files_rewritten", "paimon_compaction_bytes_rewritten", "paimon_compaction_files_written", "paimon_commits"} {
				now[n], _ = sample(fams, n)
			}
			settled := now["paimon_table_rows"] == 3000 && now["paimon_commits"] > 0 && now["paimon_compactions"] > 0 &&
				now["paimon_table_partition_files_max"] < 5 && maps.Equal(now, stable)
			stable = now
			if !settled {
				time.Sleep(200 * time.Millisecond) // two scrapes apart agree: nothing ran in between
			}
			return settled
		})
		tbl, err := lakecore.Open(ctx, warehouse, "db", "events")
		must(t, err)
		ids, err := tbl.Snapshots().ListIDs(ctx)
		must(t, err)
		var compactions, rewritten, rewrittenBytes, written int64
		for _, id := range ids {
			s, err := tbl.Snapshots().Get(ctx, id)
			must(t, err)
			if s.CommitKind != snapshot.CommitCompact {
				continue
			}
			compactions++
			metas, err := manifest.ReadFileMetas(ctx, tbl.FileIO(), tbl.Path(), s.DeltaManifestList)
			must(t, err)
			for _, m := range metas {
				entries, err := manifest.ReadEntries(ctx, tbl.FileIO(), tbl.Path(), m.FileName)
				must(t, err)
				for _, e := range entries {
					if e.Kind == manifest.FileKindDelete {
						rewritten++
						rewrittenBytes += e.File.FileSize
					} else {
						written++
					}
				}
			}
		}
		check := func(name string, want int64) {
			t.Helper()
			if got := value(t, fams, name, lake...); got != float64(want) {
				t.Errorf("%s = %v, want %d", name, got, want)
			}
		}
		check("paimon_compactions", compactions)
		check("paimon_compaction_files_rewritten", rewritten)
		check("paimon_compaction_bytes_rewritten", rewrittenBytes)
		check("paimon_compaction_files_written", written)
		t.Logf("%d snapshots, %d COMPACT: %d files rewritten into %d", len(ids), compactions, rewritten, written)
	})
}
