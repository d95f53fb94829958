package prometheus_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output"
)

// TestPaimonOutputMetricsEndToEnd runs generate -> paimon with the
// prometheus exporter, scrapes /metrics from the stream's HTTP mux and
// checks every output metric against the table as lakecore reads it back.
func TestPaimonOutputMetricsEndToEnd(t *testing.T) {
	const rows = 3000
	warehouse := t.TempDir()

	sb := service.NewStreamBuilder()
	mux := http.NewServeMux()
	sb.SetHTTPMux(mux)
	must(t, sb.SetMetricsYAML(`prometheus: {}`))
	must(t, sb.SetLoggerYAML(`level: warn`))
	must(t, sb.AddInputYAML(`
generate:
  count: 3000
  interval: ""
  batch_size: 250
  mapping: |
    let n = counter()
    root.id = $n
    root.name = "row-%d".format($n)
    root.dt = ["2026-01-01", "2026-01-02", "2026-01-03"].index($n % 3)
`))
	must(t, sb.AddOutputYAML(`
label: lake
paimon:
  warehouse: `+warehouse+`
  database: db
  table: events
  create_table:
    enabled: true
    schema:
      - { name: id, type: BIGINT NOT NULL }
      - { name: name, type: STRING }
      - { name: dt, type: STRING NOT NULL }
    partition_keys: [ dt ]
  batching:
    count: 250
  max_in_flight: 2
`))
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
	lake := []string{"label", "lake", "path", "root.output"}
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
	rb := service.NewStreamBuilder()
	rmux := http.NewServeMux()
	rb.SetHTTPMux(rmux)
	must(t, rb.SetMetricsYAML(`prometheus: {}`))
	must(t, rb.SetLoggerYAML(`level: warn`))
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
	must(t, rs.Run(ctx))
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
	for _, name := range []string{"paimon_input_consumer_errors", "paimon_input_rows_dropped", "paimon_input_snapshots_expired"} {
		if f, ok := fams[name]; ok {
			t.Errorf("%s exported with %v, want no sample", name, f.GetMetric())
		}
	}
}
