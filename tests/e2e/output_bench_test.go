package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
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

// throughput is one pipeline run: rows per second of wall time, and per
// second of CPU time of the whole test process (user + system, steadier on
// a shared machine than wall time).
type throughput struct{ wall, cpu float64 }

// pipelineThroughput runs generate -> sink for n messages and measures it
// from the stream's start to its end.
func pipelineThroughput(tb testing.TB, sink benchSink, n int) throughput {
	tb.Helper()
	dir := tb.TempDir()
	sb := eventsStream(tb, n, sink.yaml(dir))
	start, cpu0 := time.Now(), cputime.Process()
	runStream(tb, sb, 10*time.Minute)
	return throughput{wall: float64(n) / time.Since(start).Seconds(), cpu: float64(n) / (cputime.Process() - cpu0).Seconds()}
}

// benchRows is the number of messages per pipeline run.
const benchRows = 200_000

func BenchmarkGenerateTo(b *testing.B) {
	for _, s := range benchSinks {
		b.Run(s.name, func(b *testing.B) {
			var wall, cpu float64
			for i := 0; i < b.N; i++ {
				r := pipelineThroughput(b, s, benchRows)
				wall, cpu = wall+r.wall, cpu+r.cpu
			}
			b.ReportMetric(wall/float64(b.N), "rows/s")
			b.ReportMetric(cpu/float64(b.N), "rows/cpu-s")
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
	wall, cpu := map[string][]float64{}, map[string][]float64{}
	for r := 0; r < runs; r++ {
		for _, s := range benchSinks {
			v := pipelineThroughput(t, s, rows)
			wall[s.name] = append(wall[s.name], v.wall)
			cpu[s.name] = append(cpu[s.name], v.cpu)
			t.Logf("run %d %-6s %8.0f rows/s %8.0f rows/cpu-s", r+1, s.name, v.wall, v.cpu)
		}
	}
	for _, m := range []struct {
		unit string
		v    map[string][]float64
	}{{"rows/s", wall}, {"rows/cpu-s", cpu}} {
		p, f, d := median(m.v["paimon"]), median(m.v["file"]), median(m.v["drop"])
		t.Logf("median over %d runs of %d rows, %s: paimon %.0f, file %.0f, drop %.0f; paimon/file %.2f, paimon/drop %.2f",
			runs, rows, m.unit, p, f, d, p/f, p/d)
	}
	p, f := median(wall["paimon"]), median(wall["file"])
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

func envInt(t testing.TB, name string, def int) int {
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
