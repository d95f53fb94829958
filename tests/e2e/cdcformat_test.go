package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// cdcRow is a row of the test table: id BIGINT, v STRING, n BIGINT.
type cdcRow struct {
	ID int64
	V  string
	N  int64
}

// cdcOp is one change of the random stream: the row before (nil for an
// insert) and after (nil for a delete).
type cdcOp struct{ before, after *cdcRow }

// randomChanges returns n changes over 40 keys: inserts of absent keys,
// updates and deletes of present ones, and the state they leave.
func randomChanges(seed uint64, n int) ([]cdcOp, map[int64]cdcRow) {
	rng := rand.New(rand.NewPCG(seed, 7))
	state := map[int64]cdcRow{}
	var ops []cdcOp
	for i := range n {
		id := int64(rng.IntN(40))
		old, ok := state[id]
		switch {
		case !ok:
			r := cdcRow{id, fmt.Sprintf("v%d", i), int64(i)}
			state[id] = r
			ops = append(ops, cdcOp{nil, &r})
		case rng.IntN(4) == 0:
			delete(state, id)
			ops = append(ops, cdcOp{&old, nil})
		default:
			r := cdcRow{id, fmt.Sprintf("v%d", i), int64(i)}
			state[id] = r
			ops = append(ops, cdcOp{&old, &r})
		}
	}
	return ops, state
}

func (r *cdcRow) native() map[string]any {
	if r == nil {
		return nil
	}
	return map[string]any{"id": r.ID, "v": r.V, "n": r.N}
}

func (r *cdcRow) text() map[string]any { // Canal sends every value as text
	if r == nil {
		return nil
	}
	return map[string]any{"id": fmt.Sprint(r.ID), "v": r.V, "n": fmt.Sprint(r.N)}
}

// envelope encodes op in format f as the format's producers do.
func envelope(t *testing.T, f string, op cdcOp) string {
	var v any
	kind := 0 // 0 insert, 1 update, 2 delete
	if op.before != nil && op.after != nil {
		kind = 1
	} else if op.after == nil {
		kind = 2
	}
	switch f {
	case "debezium-json":
		v = map[string]any{"before": op.before.native(), "after": op.after.native(), "op": []string{"c", "u", "d"}[kind],
			"source": map[string]any{"db": "shop", "table": "orders"}, "ts_ms": 1}
	case "canal-json":
		typ := []string{"INSERT", "UPDATE", "DELETE"}[kind]
		data := op.after.text()
		var old any
		if kind == 1 {
			// Canal's old image holds the changed columns only.
			old = []any{map[string]any{"v": op.before.V, "n": fmt.Sprint(op.before.N)}}
		}
		if kind == 2 {
			data = op.before.text()
		}
		v = map[string]any{"data": []any{data}, "old": old, "type": typ, "database": "shop", "table": "orders",
			"pkNames": []string{"id"}, "isDdl": false, "mysqlType": map[string]string{"id": "bigint", "v": "varchar(64)", "n": "bigint"}}
	case "maxwell-json":
		typ := []string{"insert", "update", "delete"}[kind]
		data := op.after.native()
		var old any
		if kind == 1 {
			old = map[string]any{"v": op.before.V, "n": op.before.N}
		}
		if kind == 2 {
			data = op.before.native()
		}
		v = map[string]any{"database": "shop", "table": "orders", "type": typ, "data": data, "old": old,
			"primary_key_columns": []string{"id"}}
	case "ogg-json":
		v = map[string]any{"table": "SHOP.ORDERS", "op_type": []string{"I", "U", "D"}[kind],
			"before": op.before.native(), "after": op.after.native(), "primary_keys": []string{"id"}}
	default:
		t.Fatalf("format %s", f)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCDCFormatsPipeline lands the same random change stream, encoded in
// each CDC format, in a primary-key table through YAML (cdc_format, no
// mapping); the merged table equals the stream's final state, and the
// paimon input's changelog (changelog-producer input) replayed onto an
// empty map gives it too.
func TestCDCFormatsPipeline(t *testing.T) {
	ops, want := randomChanges(42, 1500)
	for _, f := range []string{"debezium-json", "canal-json", "maxwell-json", "ogg-json"} {
		t.Run(f, func(t *testing.T) {
			dir := t.TempDir()
			var lines []string
			for _, op := range ops {
				lines = append(lines, envelope(t, f, op))
			}
			lines = append(lines, "") // a tombstone writes nothing
			in := filepath.Join(dir, "changes.jsonl")
			if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			wh := filepath.Join(dir, "wh")
			sb := service.NewStreamBuilder()
			if err := sb.SetYAML(fmt.Sprintf(`
input:
  file:
    paths: [ %s ]
    scanner: { lines: {} }
pipeline:
  threads: 1 # more threads may reorder batches, and the order of a key's changes matters
output:
  paimon:
    warehouse: %s
    table: orders
    cdc_format: %s
    batching: { count: 100, period: 50ms }
    create_table:
      enabled: true
      schema:
        - { name: id, type: BIGINT }
        - { name: v, type: STRING }
        - { name: n, type: BIGINT }
      primary_keys: [ id ]
      bucket: 4
      options: { changelog-producer: input }
`, in, wh, f)); err != nil {
				t.Fatal(err)
			}
			runStream(t, sb, time.Minute)
			_, rows := readTable(t, wh, "default", "orders")
			got := map[int64]cdcRow{}
			for _, r := range rows {
				got[r[0].(int64)] = cdcRow{r[0].(int64), r[1].(string), r[2].(int64)}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("merged table %v\nwant %v", got, want)
			}

			// The changelog, replayed.
			var mu sync.Mutex
			replay := map[int64]cdcRow{}
			tail := service.NewStreamBuilder()
			tail.SetThreads(1) // more pipeline threads may reorder batches, and the order of a key's changes matters
			tail.SetThreads(1) // more pipeline threads may reorder batches, and the order of a key's changes matters
			if err := tail.AddInputYAML(fmt.Sprintf(`
paimon:
    warehouse: %s
    table: orders
    bounded: true
    scan_mode: from-snapshot
    scan_snapshot_id: 1
`, wh)); err != nil {
				t.Fatal(err)
			}
			if err := tail.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
				v, err := m.AsStructured()
				if err != nil {
					return err
				}
				row := v.(map[string]any)
				kind, _ := m.MetaGet("paimon_row_kind")
				id, _ := row["id"].(int64)
				mu.Lock()
				defer mu.Unlock()
				switch kind {
				case "+I", "+U":
					n, _ := row["n"].(int64)
					replay[id] = cdcRow{id, row["v"].(string), n}
				case "-D", "-U":
					delete(replay, id)
				default:
					return fmt.Errorf("row kind %q", kind)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			runStream(t, tail, time.Minute)
			if fmt.Sprint(replay) != fmt.Sprint(want) {
				t.Fatalf("changelog replayed %v\nwant %v", replay, want)
			}
		})
	}
}
