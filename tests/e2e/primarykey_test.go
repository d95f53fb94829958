package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// cdcInput generates n changes to keys 0..49 in the shape Benthos CDC
// inputs give: the row as the message, its operation as metadata (insert,
// update or delete; a delete carries only the key). The change of counter
// value i is decided by i alone, so the expected table is computed the
// same way (expectedCDC).
func cdcInput(n int) string {
	return fmt.Sprintf(`
generate:
  count: %d
  interval: ""
  batch_size: 25
  mapping: |
    let i = counter()
    let k = ($i * 7) %% 50
    meta operation = if $i %% 9 == 0 { "delete" } else if $i %% 2 == 0 { "update" } else { "insert" }
    root = if $i %% 9 == 0 { {"id": $k} } else { {"id": $k, "v": "v-%%d".format($i), "n": $i} }
`, n)
}

// expectedCDC replays cdcInput's changes onto a map (deduplicate: the
// last change of a key wins, a delete removes it).
func expectedCDC(n int) map[int64]string {
	m := map[int64]string{}
	for i := 1; i <= n; i++ {
		k := int64((i * 7) % 50)
		if i%9 == 0 {
			delete(m, k)
		} else {
			m[k] = fmt.Sprintf("v-%d", i)
		}
	}
	return m
}

// TestPrimaryKeyPipeline lands a change stream with operation metadata in a
// primary-key table through YAML (create_table.primary_keys, bucket 2,
// inline compaction by the maintenance goroutine) and checks the merged
// table against the replayed changes; then the paimon input tails the
// table from its first snapshot and its changelog (row kinds in
// paimon_row_kind) applied to an empty map gives the same state.
func TestPrimaryKeyPipeline(t *testing.T) {
	wh := t.TempDir()
	const n = 600
	sb := service.NewStreamBuilder()
	sb.SetThreads(1) // more pipeline threads may reorder batches, and the order of a key's changes matters
	if err := sb.AddInputYAML(cdcInput(n)); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML(fmt.Sprintf(`
paimon:
    warehouse: %s
    table: orders
    batching: { count: 50 }
    create_table:
      enabled: true
      schema:
        - { name: id, type: BIGINT }
        - { name: v, type: STRING }
        - { name: n, type: BIGINT NOT NULL }
      primary_keys: [ id ]
      bucket: 2
      options: { changelog-producer: input, num-sorted-run.compaction-trigger: "3" }
    maintenance: { enabled: true, interval: 0s }
    compaction: { enabled: true }
`, wh)); err != nil {
		t.Fatal(err)
	}
	runStream(t, sb, time.Minute)

	tbl, rows := readTable(t, wh, "default", "orders")
	want := expectedCDC(n)
	got := map[int64]string{}
	for _, r := range rows {
		got[r[0].(int64)] = r[1].(string)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("table rows %v\nwant %v", got, want)
	}
	if !tbl.HasPrimaryKey() || len(tbl.Schema().PrimaryKeys) != 1 {
		t.Fatalf("table schema %+v", tbl.Schema())
	}

	// Tail it: the changelog from snapshot 1, applied in order.
	var mu sync.Mutex
	state := map[string]string{}
	kinds := map[string]int{}
	in := service.NewStreamBuilder()
	in.SetThreads(1) // more pipeline threads may reorder batches, and the order of a key's changes matters
	if err := in.AddInputYAML(fmt.Sprintf(`
paimon:
    warehouse: %s
    table: orders
    bounded: true
    scan_mode: from-snapshot
    scan_snapshot_id: 1
`, wh)); err != nil {
		t.Fatal(err)
	}
	if err := in.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		v, err := m.AsStructured()
		if err != nil {
			return err
		}
		row := v.(map[string]any)
		kind, _ := m.MetaGet("paimon_row_kind")
		op, _ := m.MetaGet("operation")
		mu.Lock()
		defer mu.Unlock()
		kinds[kind+" "+op]++
		key := fmt.Sprint(row["id"])
		switch kind {
		case "+I", "+U":
			state[key] = fmt.Sprint(row["v"])
		case "-D":
			delete(state, key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	runStream(t, in, time.Minute)
	var g, w []string
	for k, v := range state {
		g = append(g, k+"="+v)
	}
	for k, v := range want {
		w = append(w, fmt.Sprintf("%d=%s", k, v))
	}
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, ",") != strings.Join(w, ",") {
		t.Errorf("changelog applied to an empty map:\n %v\nwant\n %v", g, w)
	}
	if kinds["-D delete"] == 0 || kinds["+U update_after"] == 0 || kinds["+I insert"] == 0 {
		t.Errorf("row kinds of the changelog %v: want +I, +U and -D", kinds)
	}
}
