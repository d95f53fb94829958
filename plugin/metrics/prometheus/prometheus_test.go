package prometheus_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/benthos-paimon/benthos-paimon/plugin/metrics/prometheus"
)

func newExporter(t *testing.T, o prometheus.Options) *prometheus.Exporter {
	t.Helper()
	e, err := prometheus.New(o, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func TestCounterGaugeTimerExposition(t *testing.T) {
	e := newExporter(t, prometheus.Options{UseHistogramTiming: true})

	rows := e.NewCounterCtor("paimon_rows_written", "label", "path")
	rows("", "root.output").Incr(5)
	rows("", "root.output").Incr(7)
	rows("out2", "root.output").Incr(1)
	rows("out2", "root.output").(interface{ IncrFloat64(float64) }).IncrFloat64(0.5)

	snap := e.NewGaugeCtor("paimon_last_snapshot_id")()
	snap.Set(41)
	snap.Set(42)
	ratio := e.NewGaugeCtor("fill_ratio")()
	ratio.(interface{ SetFloat64(float64) }).SetFloat64(0.25)

	lat := e.NewTimerCtor("paimon_commit_latency_ns", "label")("w")
	lat.Timing((150 * time.Millisecond).Nanoseconds())
	lat.Timing((2 * time.Second).Nanoseconds())
	lat.Timing(int64(500 * time.Microsecond))

	fams := scrape(t, e.HandlerFunc())

	if got := value(t, fams, "paimon_rows_written", "label", "", "path", "root.output"); got != 12 {
		t.Errorf("paimon_rows_written{label=\"\"} = %v, want 12", got)
	}
	if got := value(t, fams, "paimon_rows_written", "label", "out2"); got != 1.5 {
		t.Errorf("paimon_rows_written{label=\"out2\"} = %v, want 1.5", got)
	}
	if typ := fams["paimon_rows_written"].GetType(); typ != dto.MetricType_COUNTER {
		t.Errorf("paimon_rows_written type %v, want COUNTER", typ)
	}
	if got := value(t, fams, "paimon_last_snapshot_id"); got != 42 {
		t.Errorf("paimon_last_snapshot_id = %v, want 42", got)
	}
	if typ := fams["paimon_last_snapshot_id"].GetType(); typ != dto.MetricType_GAUGE {
		t.Errorf("paimon_last_snapshot_id type %v, want GAUGE", typ)
	}
	if got := value(t, fams, "fill_ratio"); got != 0.25 {
		t.Errorf("fill_ratio = %v, want 0.25", got)
	}

	if _, ok := fams["paimon_commit_latency_ns"]; ok {
		t.Errorf("timer exported under its nanosecond name")
	}
	count, sum, buckets := histogram(t, fams, "paimon_commit_latency_seconds", "label", "w")
	if count != 3 {
		t.Errorf("histogram count = %d, want 3", count)
	}
	if want := 2.1505; math.Abs(sum-want) > 1e-9 {
		t.Errorf("histogram sum = %v s, want %v", sum, want)
	}
	for le, want := range map[float64]uint64{0.001: 1, 0.1: 1, 0.15: 2, 0.2: 2, 1: 2, 2.5: 3, 60: 3} {
		if got := buckets[le]; got != want {
			t.Errorf("bucket le=%v: %d, want %d", le, got, want)
		}
	}
	if got := buckets[math.Inf(1)]; got != 3 {
		t.Errorf("bucket le=+Inf: %d, want 3", got)
	}
	if len(buckets) != len(prometheus.DefaultBuckets)+1 {
		t.Errorf("%d buckets, want %d and +Inf", len(buckets), len(prometheus.DefaultBuckets))
	}
}

func TestSummaryTiming(t *testing.T) {
	e := newExporter(t, prometheus.Options{UseHistogramTiming: false})
	tm := e.NewTimerCtor("output_latency_ns")()
	for i := 1; i <= 100; i++ {
		tm.Timing(int64(i) * int64(time.Millisecond))
	}
	fams := scrape(t, e.HandlerFunc())
	m := find(t, fams, "output_latency_seconds")
	s := m.GetSummary()
	if s == nil {
		t.Fatalf("output_latency_seconds is %v, want a summary", fams["output_latency_seconds"].GetType())
	}
	if s.GetSampleCount() != 100 || math.Abs(s.GetSampleSum()-5.05) > 1e-9 {
		t.Errorf("summary count %d sum %v, want 100 and 5.05", s.GetSampleCount(), s.GetSampleSum())
	}
	for _, q := range s.GetQuantile() {
		if q.GetQuantile() == 0.5 && math.Abs(q.GetValue()-0.050) > 0.006 {
			t.Errorf("p50 = %v s, want about 0.050", q.GetValue())
		}
	}
}

func TestCustomBuckets(t *testing.T) {
	e := newExporter(t, prometheus.Options{UseHistogramTiming: true, HistogramBuckets: []float64{0.5, 1}})
	e.NewTimerCtor("x")().Timing(int64(700 * time.Millisecond))
	_, _, buckets := histogram(t, scrape(t, e.HandlerFunc()), "x_seconds")
	want := map[float64]uint64{0.5: 0, 1: 1, math.Inf(1): 1}
	if len(buckets) != 3 || buckets[0.5] != want[0.5] || buckets[1] != want[1] || buckets[math.Inf(1)] != 1 {
		t.Errorf("buckets %v, want %v", buckets, want)
	}

	if _, err := prometheus.New(prometheus.Options{HistogramBuckets: []float64{1, 0.5}}, nil); err == nil {
		t.Errorf("New accepted descending buckets")
	}
}

func TestSameNameSharesVector(t *testing.T) {
	e := newExporter(t, prometheus.Options{})
	// Benthos asks once per component for its built-in names.
	a := e.NewCounterCtor("output_sent", "label", "path")
	b := e.NewCounterCtor("output_sent", "label", "path")
	a("a", "root.output.broker.outputs.0").Incr(3)
	b("b", "root.output.broker.outputs.1").Incr(4)
	a("a", "root.output.broker.outputs.0").Incr(1)
	fams := scrape(t, e.HandlerFunc())
	if got := value(t, fams, "output_sent", "label", "a"); got != 4 {
		t.Errorf("output_sent{label=a} = %v, want 4", got)
	}
	if got := value(t, fams, "output_sent", "label", "b"); got != 4 {
		t.Errorf("output_sent{label=b} = %v, want 4", got)
	}
}

func TestConflictsAreDroppedNotFatal(t *testing.T) {
	e := newExporter(t, prometheus.Options{UseHistogramTiming: true})
	e.NewCounterCtor("dup")().Incr(2)
	e.NewGaugeCtor("dup")().Set(99)                // another type: dropped
	e.NewCounterCtor("dup", "extra")("v").Incr(50) // other label keys: dropped
	e.NewCounterCtor("dup")().Incr(1)              // same shape: still works

	e.NewCounterCtor("lbl", "a", "b")("only-one").Incr(1) // wrong arity: no panic, dropped
	e.NewCounterCtor("twice", "a-b", "a.b")("x", "y").Incr(1)

	e.NewTimerCtor("lat")().Timing(1)
	e.NewCounterCtor("lat_seconds_count")().Incr(1) // collides with the histogram's series

	fams := scrape(t, e.HandlerFunc())
	if got := value(t, fams, "dup"); got != 3 {
		t.Errorf("dup = %v, want 3", got)
	}
	if typ := fams["dup"].GetType(); typ != dto.MetricType_COUNTER {
		t.Errorf("dup type %v, want COUNTER", typ)
	}
	if f, ok := fams["lbl"]; ok && len(f.GetMetric()) != 0 {
		t.Errorf("lbl has samples %v, want none", f.GetMetric())
	}
	if _, ok := fams["twice"]; ok {
		t.Errorf("metric with duplicate sanitised label names exported")
	}
	// Which of two colliding series client_golang keeps depends on gather
	// order; what matters is that one survives and nothing panics.
	if _, ok := fams["lat_seconds"]; ok {
		if c, _, _ := histogram(t, fams, "lat_seconds"); c != 1 {
			t.Errorf("lat_seconds count %d, want 1", c)
		}
	} else if _, ok := fams["lat_seconds_count"]; !ok {
		t.Errorf("neither the lat_seconds histogram nor the colliding lat_seconds_count counter was exported")
	}
}

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, name, label, timer string }{
		{"output_sent", "output_sent", "output_sent", "output_sent_seconds"},
		{"output_latency_ns", "output_latency_ns", "output_latency_ns", "output_latency_seconds"},
		{"a.b-c/d", "a_b_c_d", "a_b_c_d", "a_b_c_d_seconds"},
		{"ns:sub", "ns:sub", "ns_sub", "ns:sub_seconds"},
		{"9lives", "_9lives", "_9lives", "_9lives_seconds"},
		{"__reserved", "__reserved", "_reserved", "__reserved_seconds"},
		{"wait_seconds", "wait_seconds", "wait_seconds", "wait_seconds"},
		{"ünï", "_n_", "_n_", "_n__seconds"},
		{"", "_", "_", "__seconds"},
	} {
		if got := prometheus.SanitizeName(tc.in); got != tc.name {
			t.Errorf("SanitizeName(%q) = %q, want %q", tc.in, got, tc.name)
		}
		if got := prometheus.SanitizeLabel(tc.in); got != tc.label {
			t.Errorf("SanitizeLabel(%q) = %q, want %q", tc.in, got, tc.label)
		}
		if got := prometheus.TimerName(tc.in); got != tc.timer {
			t.Errorf("TimerName(%q) = %q, want %q", tc.in, got, tc.timer)
		}
	}
}

func TestRuntimeCollectors(t *testing.T) {
	e := newExporter(t, prometheus.Options{AddGoMetrics: true, AddProcessMetrics: true})
	fams := scrape(t, e.HandlerFunc())
	if got := value(t, fams, "go_goroutines"); got < 1 {
		t.Errorf("go_goroutines = %v", got)
	}
	if got := value(t, fams, "process_resident_memory_bytes"); got <= 0 {
		t.Errorf("process_resident_memory_bytes = %v", got)
	}
	plain := scrape(t, newExporter(t, prometheus.Options{}).HandlerFunc())
	if len(plain) != 0 {
		t.Errorf("exporter without collectors exports %d families", len(plain))
	}
}

func TestConfigParse(t *testing.T) {
	env := service.NewEnvironment()
	for _, tc := range []struct {
		yaml string
		ok   bool
	}{
		{`prometheus: {}`, true},
		{`prometheus: { use_histogram_timing: false, histogram_buckets: [0.1, 1], add_go_metrics: true, add_process_metrics: true }`, true},
		{`prometheus: { histogram_buckets: [1, 0.1] }`, false},
		{`prometheus: { use_histogram_timming: false }`, false},
	} {
		sb := env.NewStreamBuilder()
		must(t, sb.SetLoggerYAML(`level: warn`))
		err := sb.SetMetricsYAML(tc.yaml)
		if err == nil {
			err = sb.AddInputYAML(`generate: { count: 1, interval: "", mapping: 'root = {}' }`)
		}
		if err == nil {
			err = sb.AddOutputYAML(`drop: {}`)
		}
		var s *service.Stream
		if err == nil {
			s, err = sb.Build()
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = s.Run(ctx)
			cancel()
		}
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.yaml, err, tc.ok)
		}
	}
}

// TestBenthosPipelineMetrics runs a stream with `metrics: {prometheus: {}}`
// and checks Benthos' own metrics as served on the stream's HTTP mux.
func TestBenthosPipelineMetrics(t *testing.T) {
	sb, mux := newScrapedStream(t)
	must(t, sb.AddInputYAML(`
label: gen
generate:
  count: 250
  interval: ""
  batch_size: 50
  mapping: 'root = {"n": counter()}'
`))
	must(t, sb.AddOutputYAML(`drop: {}`))
	s, err := sb.Build()
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must(t, s.Run(ctx))

	for _, path := range []string{"/metrics", "/stats"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "# TYPE output_sent counter") {
			t.Errorf("GET %s: %d\n%s", path, rec.Code, rec.Body.String())
		}
	}
	fams := scrape(t, mux)
	if got := value(t, fams, "input_received", "label", "gen", "path", "root.input"); got != 250 {
		t.Errorf("input_received = %v, want 250", got)
	}
	if got := value(t, fams, "output_sent", "path", "root.output"); got != 250 {
		t.Errorf("output_sent = %v, want 250", got)
	}
	if got := value(t, fams, "output_batch_sent", "path", "root.output"); got != 5 {
		t.Errorf("output_batch_sent = %v, want 5", got)
	}
	if c, _, _ := histogram(t, fams, "output_latency_seconds", "path", "root.output"); c != 5 {
		t.Errorf("output_latency_seconds count = %d, want 5 (one per batch)", c)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
