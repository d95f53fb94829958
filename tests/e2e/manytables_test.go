package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestManyTablesPipeline lands one change stream spread over three tables
// through one output block with an interpolated table (a database sync):
// each table is created from its first message (columns from the `schema`
// metadata, primary key from the `pk` metadata; the third table has
// neither and is an append table with columns inferred from the values),
// and each primary-key table's merged rows equal its replayed changes.
//
// With table_idle_timeout 1ns every table's sink is closed after each
// batch and opened again by the next: commit identifiers and sequence
// numbers continue from the table.
func TestManyTablesPipeline(t *testing.T) {
	for _, idle := range []string{"10m", "1ns"} {
		t.Run("idle="+idle, func(t *testing.T) { testManyTables(t, idle) })
	}
}

func testManyTables(t *testing.T, idle string) {
	wh := t.TempDir()
	const n = 900
	sb := service.NewStreamBuilder()
	sb.SetThreads(1) // more pipeline threads may reorder batches, and the order of a key's changes matters
	if err := sb.AddInputYAML(fmt.Sprintf(`
generate:
  count: %d
  interval: ""
  batch_size: 30
  mapping: |
    let i = counter()
    let k = ($i * 7) %% 50
    let t = ["orders", "customers", "audit"].index($i %% 3)
    meta table = $t
    meta operation = if $t != "audit" && $i %% 9 == 0 { "delete" } else if $i %% 2 == 0 { "update" } else { "insert" }
    meta pk = if $t != "audit" { "id" } else { deleted() }
    meta schema = if $t != "audit" { {"type": "OBJECT", "children": [
      {"name": "id", "type": "INT64"},
      {"name": "v", "type": "STRING", "optional": true},
      {"name": "amount", "type": "STRING", "optional": true, "paimon_type": "DECIMAL(10,2)"}
    ]} } else { deleted() }
    root = if $t != "audit" && $i %% 9 == 0 { {"id": $k} } else { {"id": $k, "v": "v-%%d".format($i), "amount": "%%d.25".format($i)} }
`, n)); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML(fmt.Sprintf(`
paimon:
    warehouse: %s
    database: sync
    table: ${! @table }
    batching: { count: 60 }
    table_idle_timeout: %s
    create_table:
      enabled: true
      bucket: 2
    maintenance: { enabled: false }
`, wh, idle)); err != nil {
		t.Fatal(err)
	}
	runStream(t, sb, time.Minute)

	for r, name := range []string{"orders", "customers", "audit"} { // counter() % 3 picks the table
		tbl, rows := readTable(t, wh, "sync", name)
		s := tbl.Schema()
		if name == "audit" {
			if tbl.HasPrimaryKey() || len(rows) != n/3 {
				t.Fatalf("audit: primary keys %v, %d rows, want an append table of %d", s.PrimaryKeys, len(rows), n/3)
			}
			continue
		}
		if fmt.Sprint(s.PrimaryKeys) != "[id]" || s.Fields[2].Type.String() != "DECIMAL(10, 2)" || s.Fields[0].Type.String() != "BIGINT NOT NULL" {
			t.Fatalf("%s: schema %+v", name, s)
		}
		want := map[int64]string{}
		for i := 1; i <= n; i++ {
			if i%3 != r {
				continue
			}
			k := int64((i * 7) % 50)
			if i%9 == 0 {
				delete(want, k)
			} else {
				want[k] = fmt.Sprintf("v-%d %d.25", i, i)
			}
		}
		got := map[int64]string{}
		for _, row := range rows {
			got[row[0].(int64)] = fmt.Sprintf("%v %v", row[1], row[2])
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s rows %v\nwant %v", name, got, want)
		}
	}
}
