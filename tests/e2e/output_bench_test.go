package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Throughput of the paimon output against Benthos' file output on the same
// generated messages.
//
//	go test ./tests/e2e -run '^$' -bench 'GenerateTo' -benchtime 3x
//	BENCH_OUTPUT=1 go test ./tests/e2e -run TestOutputThroughputRatio -v   # medians and the ratio
//
// Both pipelines read the same generate input (eventsInput: five fields
// computed by a Bloblang mapping, plus the mapping deriving dt), so the
// difference is the sink: JSON lines appended to one file, or Parquet files
// in five partitions committed as Paimon snapshots. A third pipeline drops
// the messages, measuring what the input alone costs.

// benchSink is a sink of the throughput comparison.
type benchSink struct {
	name string
	// yaml returns the output config writing into dir.
	yaml func(dir string) string
}

var benchSinks = []benchSink{
	{"paimon", func(dir string) string {
		return eventsOutput(dir, `
    maintenance:
      enabled: false
    batching:
      count: 10000
      period: 1s
`)
	}},
	{"file", func(dir string) string {
		return fmt.Sprintf(`
file:
  path: %s
  codec: lines
`, filepath.Join(dir, "events.jsonl"))
	}},
	// The input's own ceiling: messages generated, mapped and dropped.
	{"drop", func(string) string { return "drop: {}\n" }},
}

// pipelineThroughput runs generate -> sink for n messages and returns the
// rows per second from the stream's start to its end.
func pipelineThroughput(tb testing.TB, sink benchSink, n int) float64 {
	tb.Helper()
	dir := tb.TempDir()
	sb := service.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: warn"); err != nil {
		tb.Fatal(err)
	}
	if err := sb.AddInputYAML(eventsInput(n)); err != nil {
		tb.Fatal(err)
	}
	if err := sb.AddOutputYAML(sink.yaml(dir)); err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	runStream(tb, sb, 10*time.Minute)
	return float64(n) / time.Since(start).Seconds()
}

// benchRows is the number of messages per pipeline run.
const benchRows = 200_000

func BenchmarkGenerateTo(b *testing.B) {
	for _, s := range benchSinks {
		b.Run(s.name, func(b *testing.B) {
			var total float64
			for i := 0; i < b.N; i++ {
				total += pipelineThroughput(b, s, benchRows)
			}
			b.ReportMetric(total/float64(b.N), "rows/s")
		})
	}
}

// TestOutputThroughputRatio runs both pipelines alternately (BENCH_RUNS
// times, default 5, BENCH_ROWS messages each, default 200,000) and logs
// the median rows per second of each and their ratio. It runs only with
// BENCH_OUTPUT=1; BENCH_MIN_RATIO fails it below a ratio.
func TestOutputThroughputRatio(t *testing.T) {
	if os.Getenv("BENCH_OUTPUT") != "1" {
		t.Skip("set BENCH_OUTPUT=1 to compare the paimon and file outputs")
	}
	runs, rows := envInt(t, "BENCH_RUNS", 5), envInt(t, "BENCH_ROWS", benchRows)
	got := map[string][]float64{}
	for r := 0; r < runs; r++ {
		for _, s := range benchSinks {
			v := pipelineThroughput(t, s, rows)
			got[s.name] = append(got[s.name], v)
			t.Logf("run %d %-6s %8.0f rows/s", r+1, s.name, v)
		}
	}
	p, f, d := median(got["paimon"]), median(got["file"]), median(got["drop"])
	t.Logf("median over %d runs of %d rows: paimon %.0f rows/s, file %.0f rows/s, drop %.0f rows/s; paimon/file %.2f, paimon/drop %.2f",
		runs, rows, p, f, d, p/f, p/d)
	if s := os.Getenv("BENCH_MIN_RATIO"); s != "" {
		min, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		if p/f < min {
			t.Errorf("ratio %.2f below %.2f", p/f, min)
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q is not a positive number", name, s)
	}
	return n
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
