package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
)

// Debezium JSON into a primary-key table, against the append path on the
// same messages.
//
//	go test ./tests/e2e -run '^$' -bench 'Debezium' -benchtime 3x
//
// The messages are Debezium change events without the schema wrapper
// (schemas.enable=false), 80 % inserts of new keys and 20 % updates of
// earlier ones, read from a JSON-lines file. "primary-key" lands them with
// cdc_format debezium-json in a deduplicate table with 4 buckets; "append"
// maps each event to its after image and appends it to a table of the same
// columns, the way an audit archive lands them; "drop" reads and parses
// them only, the input's ceiling.

// debeziumLines writes n events to a file in dir and returns its path.
func debeziumLines(tb testing.TB, dir string, n int) string {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	keys := 0
	for i := range n {
		after := func(id int) string {
			return fmt.Sprintf(`{"id":%d,"customer":"c-%d","status":"s%d","amount":"%d.%02d","updated":%d}`,
				id, id%997, i%7, i%10000, i%100, 1_764_547_200_000+int64(i))
		}
		if keys == 0 || rng.IntN(5) != 0 {
			fmt.Fprintf(&b, `{"before":null,"after":%s,"op":"c","ts_ms":%d,"source":{"db":"shop","table":"orders"}}`+"\n", after(keys), i)
			keys++
			continue
		}
		id := rng.IntN(keys)
		fmt.Fprintf(&b, `{"before":%s,"after":%s,"op":"u","ts_ms":%d,"source":{"db":"shop","table":"orders"}}`+"\n", after(id), after(id), i)
	}
	p := filepath.Join(dir, "debezium.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

const debeziumSchema = `
      schema:
        - { name: id, type: BIGINT }
        - { name: customer, type: STRING }
        - { name: status, type: STRING }
        - { name: amount, type: "DECIMAL(12, 2)" }
        - { name: updated, type: BIGINT }`

// debeziumSinks are the pipelines compared: processors and output.
var debeziumSinks = []struct{ name, pipeline, output string }{
	{"primary-key", "", `
  paimon:
    warehouse: %s
    table: orders
    cdc_format: debezium-json
    maintenance: { enabled: false }
    batching: { count: 10000, period: 1s }
    create_table:
      enabled: true` + debeziumSchema + `
      primary_keys: [ id ]
      bucket: 4
`},
	{"append", `
pipeline:
  processors:
    - mapping: root = this.after
`, `
  paimon:
    warehouse: %s
    table: orders
    maintenance: { enabled: false }
    batching: { count: 10000, period: 1s }
    create_table:
      enabled: true` + debeziumSchema + `
`},
	{"drop", `
pipeline:
  processors:
    - mapping: root = this
`, "\n  drop: {}\n%.0s"},
}

func BenchmarkDebeziumThroughput(b *testing.B) {
	const n = 200_000
	in := debeziumLines(b, b.TempDir(), n)
	for _, s := range debeziumSinks {
		b.Run(s.name, func(b *testing.B) {
			var wall, cpu float64
			for b.Loop() {
				sb := service.NewStreamBuilder()
				_ = sb.SetLoggerYAML("level: WARN")
				inMust(b, sb.SetYAML(fmt.Sprintf(`
input:
  file:
    paths: [ %s ]
    scanner: { lines: {} }
%s
output:`+s.output, in, s.pipeline, b.TempDir())))
				start, cpu0 := time.Now(), cputime.Process()
				runStream(b, sb, 10*time.Minute)
				wall += float64(n) / time.Since(start).Seconds()
				cpu += float64(n) / (cputime.Process() - cpu0).Seconds()
			}
			b.ReportMetric(wall/float64(b.N), "msgs/s")
			b.ReportMetric(cpu/float64(b.N), "msgs/cpu-s")
		})
	}
}

// BenchmarkDebeziumFreshness measures change-in to visible: 200 Debezium
// events/s (20 % updates) stamped with their creation time go through
// cdc_format into a deduplicate primary-key table with 100 ms batching,
// and a paimon input with discovery_interval 100 ms tails it in the same
// process; the latency of a change is from its creation to its arrival at
// the input's consumer. p50, p95 and p99 over 15 s after 2 s of warm-up.
func BenchmarkDebeziumFreshness(b *testing.B) {
	for b.Loop() {
		debeziumFreshness(b, b.TempDir())
	}
}

func debeziumFreshness(b *testing.B, wh string) {
	measureFreshness(b, `generate:
  interval: 5ms
  mapping: |
    let i = counter()
    let row = {"id": if $i % 5 == 0 { $i / 5 } else { $i }, "sent": now().ts_unix_nano()}
    root = {"before": if $i % 5 == 0 { $row } else { null }, "after": $row, "op": if $i % 5 == 0 { "u" } else { "c" }}
`, fmt.Sprintf(`paimon:
    warehouse: %s
    table: fresh
    cdc_format: debezium-json
    batching: { period: 100ms }
    maintenance: { enabled: false }
    create_table:
      enabled: true
      schema: [ { name: id, type: BIGINT }, { name: sent, type: BIGINT } ]
      primary_keys: [ id ]
      bucket: 4
`, wh), fmt.Sprintf("paimon:\n    warehouse: %s\n    table: fresh\n    scan_mode: latest\n    discovery_interval: 100ms\n", wh), nil)
}
