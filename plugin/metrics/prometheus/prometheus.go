// Package prometheus registers the `prometheus` metrics exporter: every
// Benthos metric (the engine's own and the paimon plugins') is kept in a
// client_golang registry and served in the Prometheus text format on the
// Benthos HTTP server at `/metrics` (and `/stats`).
//
// benthos/v4 ships no Prometheus exporter (it lives in Redpanda Connect), so
// this package is the binary's equivalent of Connect's, configured the same
// way: `metrics: { prometheus: {} }`.
//
// Import it for its side effect:
//
//	import _ "github.com/benthos-paimon/benthos-paimon/plugin/metrics/prometheus"
package prometheus

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// Config field names.
const (
	fieldUseHistogramTiming = "use_histogram_timing"
	fieldHistogramBuckets   = "histogram_buckets"
	fieldAddProcessMetrics  = "add_process_metrics"
	fieldAddGoMetrics       = "add_go_metrics"
)

// DefaultBuckets are the upper bounds, in seconds, of the timer histograms
// when histogram_buckets is empty. They are finer than client_golang's
// DefBuckets between 100 ms and 1 s, where commit latency and freshness
// targets (p95 <= 300 ms) sit, and reach a minute for commits on slow stores.
var DefaultBuckets = []float64{
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75,
	1, 2.5, 5, 10, 30, 60,
}

// summaryObjectives are the quantiles of timers when histograms are off.
var summaryObjectives = map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}

// ConfigSpec returns the spec of the `prometheus` metrics exporter.
func ConfigSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Summary("Serves all metrics at `/metrics` (and `/stats`) on the HTTP server in the Prometheus text format.").
		Description(`
Counters and gauges keep the names Benthos gives them, sanitised to Prometheus' rules (characters other than letters, digits, `+"`_`"+` and `+"`:`"+` become `+"`_`"+`). Timers, which Benthos measures in nanoseconds, are exported in **seconds**, as histograms by default so that quantiles can be computed across instances with `+"`histogram_quantile`"+`; a trailing `+"`_ns`"+` in a timer's name becomes `+"`_seconds`"+` (other timer names get `+"`_seconds`"+` appended), so `+"`output_latency_ns`"+` is served as `+"`output_latency_seconds_bucket`"+`, `+"`_sum`"+` and `+"`_count`"+`. Unlike Redpanda Connect's exporter, which keeps `+"`_ns`"+` on second-valued histograms, the unit in the name is always the unit of the value.

The endpoint is served by the Benthos HTTP server (`+"`http.address`"+`, `+"`0.0.0.0:4195`"+` by default). To rename or drop metrics, or to add a prefix, use the top-level `+"`metrics.mapping`"+` (for example `+"`root = \"myapp_\" + this`"+`).

A metric registered twice under one name with different label names or another type (possible only through a mapping that merges names) is reported once as an error in the logs and not exported.`).
		Fields(
			service.NewBoolField(fieldUseHistogramTiming).
				Description("Export timers as histograms (true) or as summaries with the 0.5, 0.9 and 0.99 quantiles (false). Summaries cannot be aggregated across instances.").
				Default(true).Advanced(),
			service.NewFloatListField(fieldHistogramBuckets).
				Description("Upper bounds of the timer histogram buckets, in seconds, ascending. Empty means the built-in buckets: 1 ms to 60 s, dense between 100 ms and 1 s.").
				Default([]any{}).Advanced(),
			service.NewBoolField(fieldAddProcessMetrics).
				Description("Also export process metrics: CPU seconds, resident memory, open file descriptors (`process_*`).").
				Default(false).Advanced(),
			service.NewBoolField(fieldAddGoMetrics).
				Description("Also export Go runtime metrics: goroutines, heap, GC pauses (`go_*`).").
				Default(false).Advanced(),
		).
		Example("Scrape the pipeline", "Serves `/metrics` on 127.0.0.1:4195.", `
http:
  address: 127.0.0.1:4195
metrics:
  prometheus: {}
`)
}

func init() {
	service.MustRegisterMetricsExporter("prometheus", ConfigSpec(), func(conf *service.ParsedConfig, log *service.Logger) (service.MetricsExporter, error) {
		o, err := optionsFromConfig(conf)
		if err != nil {
			return nil, err
		}
		return New(o, log)
	})
}

// Options configure an Exporter. The zero value exports timers as summaries
// with no process or Go metrics; [ConfigSpec]'s defaults turn histograms on.
type Options struct {
	// UseHistogramTiming exports timers as histograms in seconds, else as summaries.
	UseHistogramTiming bool
	// HistogramBuckets are the bucket upper bounds in seconds; empty means [DefaultBuckets].
	HistogramBuckets []float64
	// AddProcessMetrics registers client_golang's process collector.
	AddProcessMetrics bool
	// AddGoMetrics registers client_golang's Go runtime collector.
	AddGoMetrics bool
}

func optionsFromConfig(conf *service.ParsedConfig) (Options, error) {
	var o Options
	var err error
	if o.UseHistogramTiming, err = conf.FieldBool(fieldUseHistogramTiming); err != nil {
		return o, err
	}
	if o.HistogramBuckets, err = conf.FieldFloatList(fieldHistogramBuckets); err != nil {
		return o, err
	}
	if o.AddProcessMetrics, err = conf.FieldBool(fieldAddProcessMetrics); err != nil {
		return o, err
	}
	if o.AddGoMetrics, err = conf.FieldBool(fieldAddGoMetrics); err != nil {
		return o, err
	}
	return o, nil
}

// Exporter implements [service.MetricsExporter] on its own client_golang
// registry (never the global default one, so several streams in one process
// do not collide). Safe for concurrent use: Benthos components create and
// update metrics from many goroutines.
type Exporter struct {
	reg     *prometheus.Registry
	log     *service.Logger
	hist    bool
	buckets []float64

	mu      sync.Mutex
	vecs    map[string]*family
	refused map[string]bool // names already reported as conflicting
}

// family is one registered metric name: its kind, label names and vector.
type family struct {
	kind      string // "counter", "gauge", "timer"
	labelKeys []string
	counter   *prometheus.CounterVec
	gauge     *prometheus.GaugeVec
	timer     prometheus.ObserverVec
}

// New returns an Exporter. It fails if the histogram buckets are not
// strictly ascending. log may be nil.
func New(o Options, log *service.Logger) (*Exporter, error) {
	buckets := o.HistogramBuckets
	if len(buckets) == 0 {
		buckets = DefaultBuckets
	}
	for i := 1; i < len(buckets); i++ {
		if buckets[i] <= buckets[i-1] {
			return nil, fmt.Errorf("prometheus metrics: %s must be strictly ascending, got %v", fieldHistogramBuckets, buckets)
		}
	}
	e := &Exporter{
		reg:     prometheus.NewRegistry(),
		log:     log,
		hist:    o.UseHistogramTiming,
		buckets: slices.Clone(buckets),
		vecs:    map[string]*family{},
		refused: map[string]bool{},
	}
	if o.AddProcessMetrics {
		if err := e.reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, fmt.Errorf("prometheus metrics: register process collector: %w", err)
		}
	}
	if o.AddGoMetrics {
		if err := e.reg.Register(collectors.NewGoCollector()); err != nil {
			return nil, fmt.Errorf("prometheus metrics: register go collector: %w", err)
		}
	}
	return e, nil
}

// Registry returns the registry holding the exported metrics, for tests and
// for embedding the exporter in another HTTP server.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// HandlerFunc serves the registry in the Prometheus exposition format.
// Benthos mounts it at `/metrics` and `/stats` on its HTTP server (it looks
// the method up on the exporter by type assertion).
func (e *Exporter) HandlerFunc() http.HandlerFunc {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP
}

// Close releases nothing: the registry lives as long as the exporter.
func (e *Exporter) Close(context.Context) error { return nil }

// NewCounterCtor implements [service.MetricsExporter].
func (e *Exporter) NewCounterCtor(name string, labelKeys ...string) service.MetricsExporterCounterCtor {
	f := e.family("counter", SanitizeName(name), labelKeys)
	if f == nil {
		return func(...string) service.MetricsExporterCounter { return noop{} }
	}
	return func(labelValues ...string) service.MetricsExporterCounter {
		c, err := f.counter.GetMetricWithLabelValues(labelValues...)
		if err != nil {
			e.warnLabels(name, err)
			return noop{}
		}
		return counter{c}
	}
}

// NewGaugeCtor implements [service.MetricsExporter].
func (e *Exporter) NewGaugeCtor(name string, labelKeys ...string) service.MetricsExporterGaugeCtor {
	f := e.family("gauge", SanitizeName(name), labelKeys)
	if f == nil {
		return func(...string) service.MetricsExporterGauge { return noop{} }
	}
	return func(labelValues ...string) service.MetricsExporterGauge {
		g, err := f.gauge.GetMetricWithLabelValues(labelValues...)
		if err != nil {
			e.warnLabels(name, err)
			return noop{}
		}
		return gauge{g}
	}
}

// NewTimerCtor implements [service.MetricsExporter]. Values arrive in
// nanoseconds and are observed in seconds under [TimerName].
func (e *Exporter) NewTimerCtor(name string, labelKeys ...string) service.MetricsExporterTimerCtor {
	f := e.family("timer", TimerName(name), labelKeys)
	if f == nil {
		return func(...string) service.MetricsExporterTimer { return noop{} }
	}
	return func(labelValues ...string) service.MetricsExporterTimer {
		o, err := f.timer.GetMetricWithLabelValues(labelValues...)
		if err != nil {
			e.warnLabels(name, err)
			return noop{}
		}
		return timer{o}
	}
}

// family returns the vector registered under name, creating it on first
// use. Benthos asks for the same name once per component (every output
// registers output_sent), so a second request with the same kind and label
// keys shares the vector. A conflicting request returns nil after one
// logged error: a broken metric must not stop the pipeline.
func (e *Exporter) family(kind, name string, rawKeys []string) *family {
	keys := make([]string, len(rawKeys))
	for i, k := range rawKeys {
		keys[i] = SanitizeLabel(k)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.vecs[name]; ok {
		if f.kind == kind && slices.Equal(f.labelKeys, keys) {
			return f
		}
		e.refuse(name, fmt.Errorf("already registered as a %s with labels %v, now asked for a %s with labels %v", f.kind, f.labelKeys, kind, keys))
		return nil
	}
	if e.refused[name] {
		return nil
	}
	help := "Benthos metric " + name + "."
	f := &family{kind: kind, labelKeys: keys}
	var c prometheus.Collector
	switch kind {
	case "counter":
		f.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, keys)
		c = f.counter
	case "gauge":
		f.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, keys)
		c = f.gauge
	default:
		help = "Benthos timer " + name + ", in seconds."
		if e.hist {
			v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: e.buckets}, keys)
			f.timer, c = v, v
		} else {
			v := prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: name, Help: help, Objectives: summaryObjectives}, keys)
			f.timer, c = v, v
		}
	}
	if err := e.reg.Register(c); err != nil {
		// Duplicate label names after sanitising, or a name clashing with
		// another family's series (x_count of a histogram x).
		e.refuse(name, err)
		return nil
	}
	e.vecs[name] = f
	return f
}

func (e *Exporter) refuse(name string, err error) {
	if e.refused[name] {
		return
	}
	e.refused[name] = true
	if e.log != nil {
		e.log.Errorf("prometheus metrics: metric %q is not exported: %v", name, err)
	}
}

func (e *Exporter) warnLabels(name string, err error) {
	if e.log != nil {
		e.log.Errorf("prometheus metrics: metric %q: %v", name, err)
	}
}

// TimerName is the exported name of a Benthos timer: sanitised, with a
// trailing "_ns" replaced by "_seconds", or "_seconds" appended.
func TimerName(name string) string {
	n := SanitizeName(name)
	n = strings.TrimSuffix(n, "_ns")
	if !strings.HasSuffix(n, "_seconds") {
		n += "_seconds"
	}
	return n
}

// SanitizeName maps name onto the Prometheus metric name alphabet
// [a-zA-Z_:][a-zA-Z0-9_:]*: other bytes become '_', a leading digit gets a
// '_' prefix, and the empty name becomes "_".
func SanitizeName(name string) string {
	return sanitize(name, true)
}

// SanitizeLabel maps a label name onto [a-zA-Z_][a-zA-Z0-9_]* the same way
// and, since names starting with "__" are reserved by Prometheus, turns a
// leading "__" into "_".
func SanitizeLabel(name string) string {
	s := sanitize(name, false)
	for strings.HasPrefix(s, "__") {
		s = s[1:]
	}
	return s
}

func sanitize(name string, colon bool) string {
	if name == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(name) + 1)
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', colon && c == ':':
			b.WriteRune(c)
		case c >= '0' && c <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c)
		default:
			b.WriteByte('_') // one per character, however many bytes it takes
		}
	}
	return b.String()
}

type counter struct{ c prometheus.Counter }

// Incr adds count; a negative count (never sent by Benthos) is ignored
// because Prometheus counters only go up.
func (c counter) Incr(count int64) {
	if count > 0 {
		c.c.Add(float64(count))
	}
}

func (c counter) IncrFloat64(count float64) {
	if count > 0 {
		c.c.Add(count)
	}
}

type gauge struct{ g prometheus.Gauge }

// Set and SetFloat64 are all Benthos calls: it keeps Incr/Decr totals itself.
func (g gauge) Set(v int64)          { g.g.Set(float64(v)) }
func (g gauge) SetFloat64(v float64) { g.g.Set(v) }

type timer struct{ o prometheus.Observer }

func (t timer) Timing(nanos int64) { t.o.Observe(float64(nanos) / 1e9) }

// noop stands in for a metric that could not be registered.
type noop struct{}

func (noop) Incr(int64)          {}
func (noop) IncrFloat64(float64) {}
func (noop) Set(int64)           {}
func (noop) SetFloat64(float64)  {}
func (noop) Timing(int64)        {}
