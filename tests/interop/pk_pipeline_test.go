//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

// TestJavaReadsCDCPipeline runs a YAML pipeline (file input, the paimon
// output with cdc_format debezium-json, source_position, a partitioned
// primary-key table with changelog-producer input) over a random Debezium
// change stream; Java Paimon 1.4.2 and 2.0.0 read every snapshot exactly
// as lakecore does, and the last equals the stream's final state.
func TestJavaReadsCDCPipeline(t *testing.T) {
	requireOracles(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	type row struct {
		ID     int64  `json:"id"`
		Region string `json:"region"`
		Name   string `json:"name"`
		Amount string `json:"amount"`
	}
	state := map[string]row{}
	var lines []string
	for i := range 2000 {
		id, region := int64(rng.IntN(60)), []string{"eu", "us"}[rng.IntN(2)]
		key := fmt.Sprint(id, region)
		old, exists := state[key]
		next := row{id, region, fmt.Sprintf("n%d", i), fmt.Sprintf("%d.%02d", i, i%100)}
		ev := map[string]any{"source": map[string]any{"db": "shop", "table": "orders"}, "ts_ms": i}
		switch {
		case !exists:
			ev["before"], ev["after"], ev["op"] = nil, next, "c"
			state[key] = next
		case rng.IntN(4) == 0:
			ev["before"], ev["after"], ev["op"] = old, nil, "d"
			delete(state, key)
		default:
			ev["before"], ev["after"], ev["op"] = old, next, "u"
			state[key] = next
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	in := filepath.Join(dir, "changes.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wh := filepath.Join(dir, "wh")
	sb := service.NewStreamBuilder()
	if err := sb.SetYAML(fmt.Sprintf(`
logger: { level: WARN }
input:
  file:
    paths: [ %s ]
    scanner: { lines: {} }
pipeline:
  threads: 1
  processors:
    - mapping: |
        meta off = counter()
output:
  paimon:
    warehouse: %s
    database: interop
    table: cdc_orders
    cdc_format: debezium-json
    source_position: { stream: changes, offset: '${! @off }' }
    batching: { count: 150, period: 50ms }
    create_table:
      enabled: true
      schema:
        - { name: id, type: BIGINT }
        - { name: region, type: STRING }
        - { name: name, type: STRING }
        - { name: amount, type: "DECIMAL(10, 2)" }
      partition_keys: [ region ]
      primary_keys: [ id, region ]
      bucket: 3
      options: { changelog-producer: input }
    compaction: { enabled: true }
    maintenance: { enabled: true, interval: 0s }
`, in, wh)); err != nil {
		t.Fatal(err)
	}
	stream, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := stream.Run(ctx); err != nil {
		t.Fatal(err)
	}

	tb, err := lakecore.Open(ctx, wh, "interop", "cdc_orders")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tb.Snapshots().ListIDs(ctx)
	if err != nil || len(ids) < 5 {
		t.Fatalf("snapshots %v %v", ids, err)
	}
	ref := tableRef{wh, "interop", "cdc_orders"}
	var last []string
	for _, id := range ids {
		rows, err := tb.ReadAll(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want, err := canonicalRows(tb.Schema().Fields, rows)
		if err != nil {
			t.Fatal(err)
		}
		sortCodePoints(want)
		last = want
		for _, o := range []string{java1, java2} {
			got, err := oracleRead(o, ref, readOpts{snapshot: id})
			if err != nil {
				t.Fatalf("%s reads %s snapshot %d: %v", o, ref, id, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("table %s, snapshot %d, writer the paimon output, reader %s: rows differ\n got  %d:\n  %s\n want %d (lakecore):\n  %s",
					ref, id, o, len(got), strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
			}
		}
	}
	if len(last) != len(state) {
		t.Errorf("the last snapshot has %d rows, the change stream leaves %d", len(last), len(state))
	}
}
