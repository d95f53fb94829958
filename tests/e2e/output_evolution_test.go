package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// evolvingInput generates ids from+1..from+n; from the second third on
// each event has a `prefix+"country"` string field, from the last third also a
// whole number `prefix+"score"`, an array `prefix+"tags"` and `shared`.
func evolvingInput(from, n int, prefix string) string {
	return fmt.Sprintf(`
generate:
  count: %[2]d
  interval: ""
  batch_size: 500
  mapping: |
    let id = counter() + %[1]d
    root.id = $id
    root.dt = "2024-06-0" + (1 + $id %% 3).string()
    root.%[3]scountry = if $id > %[1]d + %[2]d / 3 { "c" + ($id %% 7).string() }
    root.%[3]sscore = if $id > %[1]d + 2 * %[2]d / 3 { $id * 10 }
    root.%[3]stags = if $id > %[1]d + 2 * %[2]d / 3 { ["t", $id.string()] }
    root.shared = if $id > %[1]d + 2 * %[2]d / 3 { "s" + $id.string() }
    root = root.filter(kv -> kv.value != null)
`, from, n, prefix)
}

func evolvingOutput(warehouse, label string) string {
	return fmt.Sprintf(`
label: %s
paimon:
    warehouse: %s
    table: evolving
    create_table:
      enabled: true
      schema:
        - { name: id, type: BIGINT NOT NULL }
        - { name: dt, type: STRING }
      partition_keys: [ dt ]
    schema_evolution: true
    batching:
      count: 700
      period: 200ms
`, label, warehouse)
}

// checkEvolved asserts the rows from+1..from+n of evolvingInput(prefix).
func checkEvolved(t *testing.T, cols map[string]int, byID map[int64][]any, from, n int, prefix string) {
	t.Helper()
	bad := 0
	for id := int64(from + 1); id <= int64(from+n); id++ {
		r, ok := byID[id]
		if !ok {
			t.Fatalf("id %d missing", id)
		}
		var country, score, tags, shared any
		if id > int64(from+n/3) {
			country = fmt.Sprintf("c%d", id%7)
		}
		if id > int64(from+2*n/3) {
			score, tags, shared = id*10, fmt.Sprintf(`["t","%d"]`, id), fmt.Sprintf("s%d", id)
		}
		want := map[string]any{prefix + "country": country, prefix + "score": score, prefix + "tags": tags, "shared": shared,
			"dt": fmt.Sprintf("2024-06-0%d", 1+id%3)}
		for name, w := range want {
			if got := r[cols[name]]; fmt.Sprint(got) != fmt.Sprint(w) {
				if bad++; bad < 5 {
					t.Errorf("id %d: %s = %#v, want %#v", id, name, got, w)
				}
			}
		}
	}
}

func readEvolved(t *testing.T, wh string, total int) (map[string]int, map[string]types.DataType, map[int64][]any) {
	t.Helper()
	tbl, rows := readTable(t, wh, "default", "evolving")
	cols, typs := map[string]int{}, map[string]types.DataType{}
	for i, f := range tbl.Schema().Fields {
		cols[f.Name], typs[f.Name] = i, f.Type
	}
	byID := map[int64][]any{}
	for _, r := range rows {
		id := r[cols["id"]].(int64)
		if _, dup := byID[id]; dup {
			t.Errorf("id %d twice", id)
		}
		byID[id] = r
	}
	if len(rows) != total {
		t.Errorf("%d rows, want %d", len(rows), total)
	}
	return cols, typs, byID
}

// TestOutputSchemaEvolution: fields that appear in the stream become
// nullable columns typed from their first values, and earlier rows read
// them as NULL.
func TestOutputSchemaEvolution(t *testing.T) {
	const n = 6000
	wh := t.TempDir()
	sb := service.NewStreamBuilder()
	logs := captureLogs(sb, 0)
	if err := sb.AddInputYAML(evolvingInput(0, n, "")); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML(evolvingOutput(wh, "")); err != nil {
		t.Fatal(err)
	}
	runStream(t, sb, 2*time.Minute)

	cols, typs, byID := readEvolved(t, wh, n)
	for name, want := range map[string]string{"country": "STRING", "score": "BIGINT", "tags": "STRING", "shared": "STRING"} {
		if got := typs[name]; got.String() != want || !got.Nullable {
			t.Errorf("column %s has type %v, want nullable %s", name, got, want)
		}
	}
	checkEvolved(t, cols, byID, 0, n, "")
	if !logs.contains("Schema evolution: added columns") {
		t.Errorf("no schema change logged:\n%s", logs)
	}
}

// TestOutputTwoWritersOneTable: two outputs with different labels (so
// different commit users) append to one table at the same time, each adding
// its own columns and both adding the same one. Every row lands once, the
// snapshots of each user carry increasing identifiers, and the schema has
// each column once.
func TestOutputTwoWritersOneTable(t *testing.T) {
	const n = 5000
	wh := t.TempDir()
	var wg sync.WaitGroup
	for i, w := range []struct{ label, prefix string }{{"writer_a", "a_"}, {"writer_b", "b_"}} {
		sb := service.NewStreamBuilder()
		if err := sb.SetLoggerYAML("level: none"); err != nil {
			t.Fatal(err)
		}
		if err := sb.AddInputYAML(evolvingInput(i*n, n, w.prefix)); err != nil {
			t.Fatal(err)
		}
		if err := sb.AddOutputYAML(evolvingOutput(wh, w.label)); err != nil {
			t.Fatal(err)
		}
		stream, err := sb.Build()
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := stream.Run(ctx); err != nil {
				t.Errorf("%s: %v", w.label, err)
			}
		}()
	}
	wg.Wait()

	cols, _, byID := readEvolved(t, wh, 2*n)
	checkEvolved(t, cols, byID, 0, n, "a_")
	checkEvolved(t, cols, byID, n, n, "b_")
	if len(cols) != 2+2*3+1 {
		t.Errorf("columns %v", cols)
	}

	tbl, _ := readTable(t, wh, "default", "evolving")
	checkIdentifiers(t, tbl)
	ctx := context.Background()
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]int{}
	for _, id := range ids {
		s, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		users[s.CommitUser]++
	}
	if len(users) != 2 || users["benthos-paimon-default.evolving-writer_a"] == 0 || users["benthos-paimon-default.evolving-writer_b"] == 0 {
		t.Errorf("snapshots per commit user: %v", users)
	}
}
