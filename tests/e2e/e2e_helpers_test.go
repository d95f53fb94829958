// Package e2e runs benthos-paimon pipelines end to end: YAML configs
// through service.NewStreamBuilder (in process, with the real plugins) and
// through the built binary, against local warehouses and the S3 test
// server. The tests are fast by default; the benchmarks and the throughput
// comparison run only when asked (see output_bench_test.go).
package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/paimon"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

// TestMain removes the binary the tests run (binarytest.Path builds it on
// first use, so runs that need no binary do not pay for the build).
func TestMain(m *testing.M) {
	code := pgtest.Run(m) // stops the PostgreSQL cluster of the pg_cdc tests, if one was started
	binarytest.Remove()
	os.Exit(code)
}

// streamMetrics serves the stream's json_api metrics to the test.
type streamMetrics struct{ mux *http.ServeMux }

// withMetrics makes sb export its metrics through json_api into the
// returned handle.
func withMetrics(t testing.TB, sb *service.StreamBuilder) *streamMetrics {
	t.Helper()
	m := &streamMetrics{mux: http.NewServeMux()}
	sb.SetHTTPMux(m.mux)
	if err := sb.SetMetricsYAML("json_api: {}"); err != nil {
		t.Fatal(err)
	}
	return m
}

// get returns the value of the metric named name summed over its label
// sets (json_api renders `paimon_commits{label="",path="root.output"}`),
// the median for timers, or -1 when it is absent.
func (m *streamMetrics) get(t testing.TB, name string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var all map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &all); err != nil {
		t.Fatalf("metrics JSON: %v: %s", err, rec.Body.String())
	}
	total, found := 0.0, false
	for k, v := range all {
		base := k
		if i := strings.IndexByte(k, '{'); i >= 0 {
			base = k[:i]
		}
		if base != name {
			continue
		}
		switch x := v.(type) {
		case float64:
			total += x
			found = true
		case map[string]any: // timers: json_api renders percentiles; take the median
			if c, ok := x["p50"].(float64); ok {
				total += c
				found = true
			}
		}
	}
	if !found {
		return -1
	}
	return total
}

// logBuffer collects a stream's log lines.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, strings.TrimSpace(string(p)))
	return len(p), nil
}

// contains reports whether a line contains s.
func (b *logBuffer) contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// captureLogs sends sb's logs at level and above into the returned buffer.
func captureLogs(sb *service.StreamBuilder, level slog.Level) *logBuffer {
	b := &logBuffer{}
	sb.SetLogger(slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: level})))
	return b
}

// runStream builds and runs sb until its input ends, failing the test after
// timeout.
func runStream(t testing.TB, sb *service.StreamBuilder, timeout time.Duration) {
	t.Helper()
	stream, err := sb.Build()
	if err != nil {
		t.Fatalf("build stream: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := stream.Run(ctx); err != nil {
		t.Fatalf("run stream: %v", err)
	}
}

// readTable returns every row of the latest snapshot of a local table.
func readTable(t testing.TB, warehouse, db, table string) (*lakecore.Table, [][]any) {
	t.Helper()
	ctx := context.Background()
	tbl, err := lakecore.Open(ctx, warehouse, db, table)
	if err != nil {
		t.Fatalf("open table: %v", err)
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatalf("read table: %v", err)
	}
	return tbl, rows
}

// liveEntries returns the live files of tbl's latest snapshot.
func liveEntries(t testing.TB, tbl *lakecore.Table) []manifest.Entry {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live, err := tbl.Planner().LiveEntries(ctx, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// column returns the index of the named column of tbl's schema.
func column(t testing.TB, tbl *lakecore.Table, name string) int {
	t.Helper()
	for i, f := range tbl.Schema().Fields {
		if f.Name == name {
			return i
		}
	}
	t.Fatalf("table has no column %q", name)
	return -1
}
