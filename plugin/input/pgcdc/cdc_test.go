package pgcdc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

const ordersDDL = `CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2), note text);`

const ordersCols = "id, status, amount, note"

func ordersSelect(db *pgtest.DB) []string {
	return db.QueryStrings("SELECT " + ordersCols + " FROM orders ORDER BY id")
}

// TestSnapshotThenStreamEqualsSelect: a real Benthos stream snapshots 2 500
// rows in several chunks, then streams inserts, updates and deletes; the
// rows applied by key equal SELECT of the source, the snapshot rows are
// `read` without lsn_position, and lsn_position strictly increases over
// the streamed rows.
func TestSnapshotThenStreamEqualsSelect(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + `INSERT INTO orders SELECT g, 'new', g * 1.5, CASE WHEN g % 3 = 0 THEN NULL ELSE 'n' || g END FROM generate_series(1, 2500) g`)
	c := runStream(t, baseYAML(db, "tables: [ public.orders ]\nsnapshot_chunk_pages: 4\nsnapshot_workers: 3\n"), nil)
	c.waitFor(t, "the snapshot", func(evs []event) bool { return len(evs) >= 2500 })
	db.Exec(`UPDATE orders SET status = 'paid', amount = 99.99 WHERE id % 10 = 0;
		DELETE FROM orders WHERE id % 7 = 0;
		INSERT INTO orders VALUES (10001, 'new', 1.00, NULL), (10002, 'new', 2.00, 'x');
		BEGIN; UPDATE orders SET note = 'multi' WHERE id < 50; INSERT INTO orders VALUES (10003, 'late', NULL, NULL); COMMIT;`)
	want := ordersSelect(db)
	evs := c.waitFor(t, "the stream", func(evs []event) bool {
		return strings.Join(applied(evs, "orders", "id", "status", "amount", "note"), "\n") == strings.Join(want, "\n")
	})
	equalRows(t, "applied events vs SELECT", applied(evs, "orders", "id", "status", "amount", "note"), want)

	chunks := map[string]bool{}
	var last []uint64
	for i, e := range evs {
		if e.Table != "orders" || e.PK != "id" || e.Identity != "default" {
			t.Fatalf("event %d: metadata %+v", i, e.Meta)
		}
		if _, ok := e.Meta["schema"].(map[string]any); !ok {
			t.Fatalf("event %d: no common schema: %v", i, e.Meta["schema"])
		}
		if e.Op == "read" {
			if p, ok := e.Meta["lsn_position"]; !ok || p != "" || e.Chunk == "" {
				t.Fatalf("snapshot event %d: lsn_position %q, chunk %q", i, e.Position, e.Chunk)
			}
			chunks[e.Chunk] = true
			continue
		}
		pos := parsePosition(t, e.Position)
		if last != nil && !positionLess(last, pos) {
			t.Fatalf("event %d: lsn_position %s not above %v", i, e.Position, last)
		}
		last = pos
		if _, ok := e.Meta["xid"].(int64); !ok {
			t.Fatalf("event %d: xid %v", i, e.Meta["xid"])
		}
		if ms, _ := e.Meta["commit_ts_ms"].(int64); ms < time.Now().Add(-time.Hour).UnixMilli() {
			t.Fatalf("event %d: commit_ts_ms %v", i, e.Meta["commit_ts_ms"])
		}
	}
	if len(chunks) < 3 {
		t.Fatalf("snapshot read in %d chunks, want several: %v", len(chunks), chunks)
	}
	if n := countOp(evs, "delete"); n != 2500/7 {
		t.Fatalf("%d deletes, want %d", n, 2500/7)
	}
}

func parsePosition(t testing.TB, s string) []uint64 {
	t.Helper()
	parts := strings.Split(s, ".")
	if len(parts) != 2 {
		t.Fatalf("lsn_position %q: want <lsn>.<seq>", s)
	}
	out := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			t.Fatalf("lsn_position %q: %v", s, err)
		}
		out[i] = v
	}
	return out
}

func positionLess(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// TestSnapshotUnderConcurrentWrites: inserts, updates, deletes and key
// changes run while the snapshot is read (and before it is acknowledged);
// afterwards the applied events equal SELECT.
func TestSnapshotUnderConcurrentWrites(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + `INSERT INTO orders SELECT g, 'new', g, 'n' FROM generate_series(1, 20000) g`)
	// A slow consumer keeps the snapshot in flight while the writes run.
	c := runStream(t, baseYAML(db, "tables: [ public.orders ]\nsnapshot_chunk_pages: 16\nsnapshot_batch_size: 100\n"), func([]event) error {
		time.Sleep(2 * time.Millisecond)
		return nil
	})
	// The writes start once the slot exists (the first snapshot row is out)
	// and run while the rest of the snapshot is read and delivered.
	c.waitFor(t, "the first snapshot rows", func(evs []event) bool { return len(evs) > 0 })
	var wg sync.WaitGroup
	stop := make(chan struct{})
	conn := db.Conn()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := 1 + (i*7919)%20000
			sql := []string{
				fmt.Sprintf("UPDATE orders SET status = 'u%d' WHERE id = %d", i, id),
				fmt.Sprintf("DELETE FROM orders WHERE id = %d", id+1),
				fmt.Sprintf("INSERT INTO orders VALUES (%d, 'ins', 1, NULL) ON CONFLICT (id) DO UPDATE SET status = 'upsert'", 30000+i),
				fmt.Sprintf("UPDATE orders SET id = %d WHERE id = %d", 100000+i, id+2),
			}[i%4]
			_, _ = conn.Exec(context.Background(), sql)
		}
	}()
	c.waitFor(t, "more of the snapshot", func(evs []event) bool { return len(evs) > 5000 })
	close(stop)
	wg.Wait()
	want := ordersSelect(db)
	evs := c.waitFor(t, "convergence", func(evs []event) bool {
		return strings.Join(applied(evs, "orders", "id", "status", "amount", "note"), "\n") == strings.Join(want, "\n")
	})
	if countOp(evs, "read") != 20000 {
		t.Fatalf("%d snapshot rows, want the 20000 of the exported snapshot", countOp(evs, "read"))
	}
	// Streaming starts only after the whole snapshot was acknowledged.
	lastRead, firstChange := -1, -1
	for i, e := range evs {
		if e.Op == "read" {
			lastRead = i
		} else if firstChange < 0 {
			firstChange = i
		}
	}
	if firstChange < 0 || firstChange < lastRead {
		t.Fatalf("first streamed change at %d, last snapshot row at %d", firstChange, lastRead)
	}
}

// TestSchemaCapturesTablesCreatedLater: with `schema` and a publication
// FOR TABLES IN SCHEMA, a table created after the input started is
// captured from its first change (with its primary key and schema
// metadata), not skipped; a table of another schema stays skipped.
func TestSchemaCapturesTablesCreatedLater(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "INSERT INTO orders VALUES (1, 'new', 1, NULL); CREATE SCHEMA other;" +
		fmt.Sprintf("CREATE PUBLICATION %s_slot FOR TABLES IN SCHEMA public, other", db.Name))
	c := runStream(t, baseYAML(db, "schema: public\n"), nil)
	c.waitFor(t, "the snapshot", func(evs []event) bool { return len(evs) >= 1 })
	db.Exec(`CREATE TABLE refunds (id bigint PRIMARY KEY, order_id bigint, amount numeric(10,2));
		INSERT INTO refunds VALUES (1, 1, 0.50), (2, 1, 0.25);
		CREATE TABLE other.elsewhere (id bigint PRIMARY KEY);
		INSERT INTO other.elsewhere VALUES (1);
		UPDATE refunds SET amount = 0.75 WHERE id = 2;
		DELETE FROM refunds WHERE id = 1;
		INSERT INTO orders VALUES (2, 'new', 2, NULL);`)
	evs := c.waitFor(t, "the new table's changes", func(evs []event) bool {
		return slices.ContainsFunc(evs, func(e event) bool { return e.Table == "orders" && e.Op == "insert" })
	})
	if got, want := applied(evs, "refunds", "id", "order_id", "amount"), []string{"2|1|0.75"}; !slices.Equal(got, want) {
		t.Errorf("refunds applied %v, want %v", got, want)
	}
	ops := ""
	for _, e := range evs {
		if e.Table == "elsewhere" {
			t.Errorf("a table of another schema was captured: %+v", e)
		}
		if e.Table != "refunds" {
			continue
		}
		ops += e.Op + " "
		schema, _ := e.Meta["schema"].(map[string]any)
		if e.PK != "id" || schema == nil || e.Meta["pg_schema"] != "public" {
			t.Errorf("refunds event metadata: pk %q, schema %v, %v", e.PK, schema, e.Meta)
		}
	}
	if ops != "insert insert update delete " {
		t.Errorf("refunds operations %q", ops)
	}
}
