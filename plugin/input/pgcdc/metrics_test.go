package pgcdc

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/io" // json_api
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

// metricValues reads json_api's /metrics: name{labels} → value.
func metricValues(t *testing.T, mux *http.ServeMux) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var all map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &all); err != nil {
		t.Fatalf("metrics JSON: %v", err)
	}
	out := map[string]float64{}
	for k, v := range all {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

func metricSum(all map[string]float64, name, label string) float64 {
	total := 0.0
	for k, v := range all {
		if strings.HasPrefix(k, name+"{") && strings.Contains(k, label) {
			total += v
		}
	}
	return total
}

// TestMetrics: rows per operation, transactions, snapshot progress, lag
// and the confirmed position are exported.
func TestMetrics(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "INSERT INTO orders SELECT g, 'new', g, NULL FROM generate_series(1, 300) g")
	sb := service.NewStreamBuilder()
	mux := http.NewServeMux()
	sb.SetHTTPMux(mux)
	if err := sb.SetMetricsYAML("json_api: {}"); err != nil {
		t.Fatal(err)
	}
	c := runStreamWith(t, sb, baseYAML(db, "tables: [ public.orders ]\nsnapshot_chunk_pages: 1\nslot_monitor_interval: 100ms\n"), nil)
	c.waitFor(t, "snapshot", func(evs []event) bool { return len(evs) == 300 })
	db.Exec("INSERT INTO orders VALUES (1000, 'new', 1, NULL)")
	db.Exec("UPDATE orders SET status = 'x' WHERE id <= 2")
	db.Exec("DELETE FROM orders WHERE id = 3")
	c.waitFor(t, "stream", func(evs []event) bool { return len(evs) == 304 })
	var m map[string]float64
	deadline := 50
	for i := 0; ; i++ {
		m = metricValues(t, mux)
		if metricSum(m, MetricConfirmedLSN, "") > 0 && metricSum(m, MetricInFlight, "") == 0 || i > deadline {
			break
		}
		time.Sleep(100 * time.Millisecond) // polling the next status update
	}
	for _, w := range []struct {
		name, label string
		want        float64
	}{
		{MetricRows, `operation="read"`, 300}, {MetricRows, `operation="insert"`, 1}, {MetricRows, `operation="update"`, 2},
		{MetricRows, `operation="delete"`, 1}, {MetricTransactions, "", 3},
	} {
		if got := metricSum(m, w.name, w.label); got != w.want {
			t.Errorf("%s %s = %v, want %v", w.name, w.label, got, w.want)
		}
	}
	if chunks, done := metricSum(m, MetricSnapshotChunks, ""), metricSum(m, MetricSnapshotChunksDone, ""); chunks < 2 || done != chunks {
		t.Errorf("snapshot chunks %v, done %v", chunks, done)
	}
	if metricSum(m, MetricConfirmedLSN, "") <= 0 {
		t.Errorf("confirmed LSN metric %v", metricSum(m, MetricConfirmedLSN, ""))
	}
	for _, name := range []string{MetricLagBytes, MetricSlotRetained, MetricSlotSafeWAL} {
		if _, ok := findKey(m, name); !ok {
			t.Errorf("no %s", name)
		}
	}
	if v, _ := findKey(m, MetricSlotSafeWAL); v != -1 {
		t.Errorf("%s = %v, want -1 (no max_slot_wal_keep_size)", MetricSlotSafeWAL, v)
	}
}

func findKey(m map[string]float64, name string) (float64, bool) {
	for k, v := range m {
		if strings.HasPrefix(k, name+"{") || k == name {
			return v, true
		}
	}
	return 0, false
}
