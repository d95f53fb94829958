package prometheus_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// newScrapedStream returns a stream builder with the prometheus exporter
// and warn-level logs whose HTTP endpoints (/metrics among them) are
// served by the returned mux.
func newScrapedStream(t *testing.T) (*service.StreamBuilder, *http.ServeMux) {
	t.Helper()
	sb := service.NewStreamBuilder()
	mux := http.NewServeMux()
	sb.SetHTTPMux(mux)
	must(t, sb.SetMetricsYAML(`prometheus: {}`))
	must(t, sb.SetLoggerYAML(`level: warn`))
	return sb, mux
}

// scrape GETs /metrics from h and parses the exposition text, so the tests
// check what a Prometheus server would see, not the registry's internals.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", rec.Code, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct == "" {
		t.Fatalf("GET /metrics: no Content-Type")
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, rec.Body.String())
	}
	return fams
}

// find returns the sample of family name whose labels include all of
// labels (name, value pairs), failing the test if there is not exactly one.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		names := make([]string, 0, len(fams))
		for n := range fams {
			names = append(names, n)
		}
		t.Fatalf("metric %s not exported; have %v", name, names)
	}
	var found *dto.Metric
	for _, m := range f.GetMetric() {
		if hasLabels(m, labels) {
			if found != nil {
				t.Fatalf("metric %s%v: more than one sample", name, labels)
			}
			found = m
		}
	}
	if found == nil {
		t.Fatalf("metric %s has no sample with labels %v", name, labels)
	}
	return found
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		ok := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// value is a counter's, gauge's or untyped sample's value.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	m := find(t, fams, name, labels...)
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	t.Fatalf("metric %s is not a counter or gauge", name)
	return 0
}

// histogram returns a histogram sample's count, sum and cumulative bucket
// counts by upper bound.
func histogram(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) (count uint64, sum float64, buckets map[float64]uint64) {
	t.Helper()
	m := find(t, fams, name, labels...)
	h := m.GetHistogram()
	if h == nil {
		t.Fatalf("metric %s is not a histogram (type %v)", name, fams[name].GetType())
	}
	buckets = map[float64]uint64{}
	for _, b := range h.GetBucket() {
		buckets[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	return h.GetSampleCount(), h.GetSampleSum(), buckets
}
