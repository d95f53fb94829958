package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/pgcdc"
)

// TestPgCDCToPaimon: pg_cdc → paimon into a primary-key table (row kinds
// from the operation metadata): a snapshot of 3 000 rows, then inserts,
// updates, deletes and key changes; lakecore's read of the table equals
// SELECT of the source. The oracle is Postgres itself.
func TestPgCDCToPaimon(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2), note text);
		INSERT INTO orders SELECT g, 'new', g * 1.25, CASE WHEN g % 5 = 0 THEN NULL ELSE 'n' || g END FROM generate_series(1, 3000) g`)
	wh := t.TempDir()
	sb := service.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: WARN"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddInputYAML(fmt.Sprintf(`
pg_cdc:
  dsn: %s
  tables: [ public.orders ]
  slot_name: %s_slot
  status_interval: 200ms
  heartbeat_interval: 0s
`, db.DSN, db.Name)); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML(fmt.Sprintf(`
paimon:
  warehouse: %s
  database: shop
  table: orders
  batching: { count: 1000, period: 200ms }
  create_table:
    enabled: true
    schema:
      - { name: id, type: BIGINT }
      - { name: status, type: STRING NOT NULL }
      - { name: amount, type: "DECIMAL(10, 2)" }
      - { name: note, type: STRING }
    primary_keys: [ id ]
    bucket: 2
`, wh)); err != nil {
		t.Fatal(err)
	}
	stream, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- stream.Run(context.Background()) }()
	defer func() {
		_ = stream.StopWithin(10 * time.Second)
		<-done
	}()

	read := func() []string {
		tbl, err := lakecore.Open(context.Background(), wh, "shop", "orders")
		if err != nil {
			return nil
		}
		rows, err := tbl.ReadAll(context.Background(), 0)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out := make([]string, 0, len(rows))
		for _, r := range rows {
			cols := make([]string, len(r))
			for i, v := range r {
				if v == nil {
					cols[i] = "NULL"
				} else {
					cols[i] = fmt.Sprint(v)
				}
			}
			out = append(out, strings.Join(cols, "|"))
		}
		sort.Slice(out, func(i, j int) bool { return keyLess(out[i], out[j]) })
		return out
	}
	selectAll := func() []string {
		return db.QueryStrings("SELECT id, status, amount, note FROM orders ORDER BY id")
	}
	waitEqual := func(what string) {
		t.Helper()
		want := strings.Join(selectAll(), "\n")
		deadline := time.Now().Add(60 * time.Second)
		for {
			got := read()
			if strings.Join(got, "\n") == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the Paimon table (%d rows) never matched SELECT (%d rows)", what, len(got), strings.Count(want, "\n")+1)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitEqual("after the snapshot")
	db.Exec(`UPDATE orders SET status = 'paid', amount = amount + 1 WHERE id % 4 = 0`)
	db.Exec(`DELETE FROM orders WHERE id % 9 = 0`)
	db.Exec(`UPDATE orders SET id = id + 100000 WHERE id % 11 = 0`)
	db.Exec(`INSERT INTO orders SELECT g, 'late', NULL, 'x' FROM generate_series(5000, 5100) g`)
	waitEqual("after the stream")
}

// keyLess orders "|"-joined rows by their numeric first column.
func keyLess(a, b string) bool {
	ka, _, _ := strings.Cut(a, "|")
	kb, _, _ := strings.Cut(b, "|")
	if len(ka) != len(kb) {
		return len(ka) < len(kb)
	}
	return ka < kb
}
