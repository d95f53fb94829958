package paimon

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"   // file input
	_ "github.com/redpanda-data/benthos/v4/public/components/pure" // drop output
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
)

// CPU the paimon output adds to a file input, per message (issue #19,
// goal 1): the same JSON lines of a payment event read by the file input
// into the paimon output and into drop, alternately.
//
//	PIPELINE_BENCH=1 go test ./plugin/output/paimon -run TestPipelineCPU -v
//
// PIPELINE_ROWS (default 200,000) lines, PIPELINE_RUNS (default 3) rounds,
// PIPELINE_BATCH (default 10,000) messages per batch of the output;
// PIPELINE_INPUT_BATCH=n batches the input's lines by n (a broker input),
// so that Benthos tracks one transaction per n messages.

// paymentTable is the 8-column payment event, partitioned by day.
const paymentTable = `
    create_table:
      enabled: true
      schema:
        - { name: id, type: BIGINT NOT NULL }
        - { name: ts, type: TIMESTAMP(3) WITH LOCAL TIME ZONE }
        - { name: user, type: STRING }
        - { name: merchant, type: STRING }
        - { name: amount, type: "DECIMAL(10, 2)" }
        - { name: currency, type: CHAR(3) }
        - { name: status, type: STRING }
        - { name: dt, type: STRING NOT NULL }
      partition_keys: [ dt ]
`

// writePaymentLines writes n JSON lines of payment events into a file.
func writePaymentLines(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	statuses := []string{"authorized", "captured", "refunded", "declined"}
	currencies := []string{"EUR", "USD", "GBP", "CHF"}
	base := time.Date(2024, 5, 30, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		t := base.Add(time.Duration(i) * 1300 * time.Millisecond)
		fmt.Fprintf(w, `{"id":%d,"ts":"%s","user":"user-%d","merchant":"merchant-%d","amount":"%d.%02d","currency":"%s","status":"%s","dt":"%s"}`+"\n",
			i+1, t.Format("2006-01-02T15:04:05.000Z"), i%9973, i%211, i%5000, i%100,
			currencies[i%4], statuses[i%len(statuses)], t.Format("2006-01-02"))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// runFilePipeline reads the lines at path into output and returns the CPU
// and wall time it took.
func runFilePipeline(tb testing.TB, path, output string) (cpu, wall time.Duration) {
	tb.Helper()
	sb := service.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: warn"); err != nil {
		tb.Fatal(err)
	}
	input := fmt.Sprintf("file:\n  paths: [ %s ]\n  scanner:\n    lines: {}\n", path)
	if n := os.Getenv("PIPELINE_INPUT_BATCH"); n != "" {
		input = fmt.Sprintf("broker:\n  inputs:\n    - file:\n        paths: [ %s ]\n        scanner:\n          lines: {}\n  batching:\n    count: %s\n    period: 100ms\n", path, n)
	}
	if err := sb.AddInputYAML(input); err != nil {
		tb.Fatal(err)
	}
	if err := sb.AddOutputYAML(output); err != nil {
		tb.Fatal(err)
	}
	stream, err := sb.Build()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start, cpu0 := time.Now(), cputime.Process()
	if err := stream.Run(ctx); err != nil {
		tb.Fatal(err)
	}
	return cputime.Process() - cpu0, time.Since(start)
}

func paimonOutputYAML(warehouse string, batch int) string {
	return fmt.Sprintf(`
paimon:
    warehouse: %s
    table: payments
%s
    maintenance:
      enabled: false
    batching:
      count: %d
      period: 1s
`, warehouse, paymentTable, batch)
}

func TestPipelineCPU(t *testing.T) {
	if os.Getenv("PIPELINE_BENCH") != "1" {
		t.Skip("set PIPELINE_BENCH=1 to measure file -> paimon against file -> drop")
	}
	rows, runs, batch := 200_000, 3, 10_000
	for name, p := range map[string]*int{"PIPELINE_ROWS": &rows, "PIPELINE_RUNS": &runs, "PIPELINE_BATCH": &batch} {
		if s := os.Getenv(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q", name, s)
			}
			*p = n
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "payments.jsonl")
	writePaymentLines(t, path, rows)
	var perMsg, overBatched, ratios, batchedRatios, dropUs, batchedUs, paimonUs []float64
	for r := 0; r < runs; r++ {
		dcpu, dwall := runFilePipeline(t, path, "drop: {}\n")
		// Benthos' own cost of batching and acknowledging, without our
		// output: the same batches into drop.
		bcpu, bwall := runFilePipeline(t, path, fmt.Sprintf("broker:\n  outputs: [ drop: {} ]\n  batching:\n    count: %d\n    period: 1s\n", batch))
		pcpu, pwall := runFilePipeline(t, path, paimonOutputYAML(filepath.Join(dir, fmt.Sprintf("wh%d", r)), batch))
		d := float64(dcpu.Microseconds()) / float64(rows)
		p := float64(pcpu.Microseconds()) / float64(rows)
		dropUs, paimonUs = append(dropUs, d), append(paimonUs, p)
		perMsg = append(perMsg, p-d)
		ratios = append(ratios, dwall.Seconds()/pwall.Seconds())
		bd := float64(bcpu.Microseconds()) / float64(rows)
		batchedUs = append(batchedUs, bd)
		overBatched = append(overBatched, p-bd)
		batchedRatios = append(batchedRatios, bwall.Seconds()/pwall.Seconds())
		t.Logf("round %d: drop %.2f µs CPU/msg (%.0f rows/s), batched drop %.2f µs (%.0f rows/s), paimon %.2f µs CPU/msg (%.0f rows/s): "+
			"output adds %.2f µs to drop, %.2f µs to batched drop; rows/s ratio to drop %.2f, to batched drop %.2f",
			r+1, d, float64(rows)/dwall.Seconds(), bd, float64(rows)/bwall.Seconds(), p, float64(rows)/pwall.Seconds(),
			p-d, p-bd, dwall.Seconds()/pwall.Seconds(), bwall.Seconds()/pwall.Seconds())
	}
	t.Logf("median of %d rounds of %d rows: drop %.2f µs, batched drop %.2f µs, paimon %.2f µs CPU/msg; output adds %.2f µs CPU/msg "+
		"to drop, %.2f µs to batched drop (the output's own share); paimon/drop rows/s %.2f, paimon/batched drop %.2f",
		runs, rows, medianOf(dropUs), medianOf(batchedUs), medianOf(paimonUs), medianOf(perMsg), medianOf(overBatched),
		medianOf(ratios), medianOf(batchedRatios))
}

func medianOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
