package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// tableRows reads shop.<table> of warehouse wh with lakecore: the named
// columns of each row joined by "|", NULL as NULL, timestamps as UTC
// "2006-01-02 15:04:05.000000", sorted; nil if the table does not exist
// yet. keep, when set, filters the rows (given by column name).
func tableRows(t *testing.T, wh, table string, keep func(map[string]any) bool, cols ...string) []string {
	t.Helper()
	tbl, err := lakecore.Open(context.Background(), wh, "shop", table)
	if err != nil {
		return nil
	}
	rows, err := tbl.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	fields := tbl.Schema().Fields
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		byName := map[string]any{}
		for i, f := range fields {
			byName[f.Name] = r[i]
		}
		if keep != nil && !keep(byName) {
			continue
		}
		vals := make([]string, len(cols))
		for i, c := range cols {
			v, ok := byName[c]
			switch tv := v.(type) {
			case nil:
				vals[i] = "NULL"
				if !ok {
					t.Fatalf("%s has no column %s", table, c)
				}
			case types.Timestamp:
				vals[i] = tv.Time().UTC().Format("2006-01-02 15:04:05.000000")
			default:
				vals[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(vals, "|"))
	}
	sort.Slice(out, func(i, j int) bool { return rowLess(out[i], out[j]) })
	return out
}

// waitRows waits until got() equals the rows of query (in rowLess order),
// failing with both when it does not within 60 s or the example exits.
func (p *exampleProcess) waitRows(t *testing.T, db *pgtest.DB, what, query string, got func() []string) {
	t.Helper()
	want := db.QueryStrings(query)
	sort.Slice(want, func(i, j int) bool { return rowLess(want[i], want[j]) })
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-p.exited:
			t.Fatalf("the example exited: %v\n%s", err, p.out.String())
		default:
		}
		g := got()
		if strings.Join(g, "\n") == strings.Join(want, "\n") {
			if len(want) == 0 {
				t.Fatalf("%s: the query returned no rows: a vacuous comparison", what)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Paimon %d rows, SELECT %d\n got %v\nwant %v\n%s", what, len(g), len(want), diffHead(g, want), diffHead(want, g), p.out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rowLess orders rows by keyLess, then as strings: a total order when
// the first column is not unique.
func rowLess(a, b string) bool {
	if keyLess(a, b) || keyLess(b, a) {
		return keyLess(a, b)
	}
	return a < b
}

// diffHead returns the first rows of a that b lacks.
func diffHead(a, b []string) []string {
	in := map[string]bool{}
	for _, r := range b {
		in[r] = true
	}
	var out []string
	for _, r := range a {
		if !in[r] {
			out = append(out, r)
		}
	}
	return head(out)
}

// TestPostgresWideTableExampleRuns runs examples/postgres_wide_table_to_paimon.yaml
// with the binary: orders and shipments, each writing its own columns of
// shop.order_wide through partial-update with sequence groups. After the
// snapshot and after a stream of updates (one setting a column to NULL),
// shipment deletes, order deletes, key changes and a transaction touching
// both tables, the Paimon table equals orders LEFT JOIN shipments.
func TestPostgresWideTableExampleRuns(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE orders (order_id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(10,2), status text NOT NULL);
		CREATE TABLE shipments (order_id bigint PRIMARY KEY REFERENCES orders, carrier text, tracking text, shipped_at timestamptz);
		CREATE PUBLICATION paimon_order_wide FOR TABLE orders, shipments;
		INSERT INTO orders SELECT g, 'c' || g, g * 1.5, 'new' FROM generate_series(1, 200) g;
		INSERT INTO shipments SELECT g, 'dhl', 't' || g, '2024-05-01 10:00:00.123456+00'::timestamptz + g * interval '1 minute'
			FROM generate_series(3, 200, 3) g`)
	wh := t.TempDir()
	p := startExampleFile(t, "postgres_wide_table_to_paimon.yaml", db, wh)
	const join = `SELECT o.order_id, o.customer, o.amount, o.status, s.carrier, s.tracking,
		to_char(s.shipped_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') FROM orders o LEFT JOIN shipments s USING (order_id)`
	got := func() []string {
		return tableRows(t, wh, "order_wide", nil, "order_id", "customer", "amount", "status", "carrier", "tracking", "shipped_at")
	}
	p.waitRows(t, db, "after the snapshot", join, got)

	db.Exec("UPDATE orders SET status = 'paid', amount = amount + 1 WHERE order_id % 4 = 0")
	db.Exec("UPDATE shipments SET carrier = NULL, tracking = 'x' || order_id WHERE order_id % 9 = 0") // NULL must overwrite
	db.Exec("INSERT INTO shipments SELECT g, 'ups', 'u' || g, now() FROM generate_series(1, 90, 3) g")
	db.Exec("DELETE FROM shipments WHERE order_id % 5 = 0")
	db.Exec("DELETE FROM orders WHERE order_id % 5 = 0")
	db.Exec("UPDATE orders SET order_id = order_id + 10000 WHERE order_id % 7 = 0 AND NOT EXISTS (SELECT FROM shipments s WHERE s.order_id = orders.order_id)")
	db.Exec(`BEGIN;
		INSERT INTO orders VALUES (1000, 'late', NULL, 'new');
		INSERT INTO shipments VALUES (1000, 'fedex', NULL, NULL);
		UPDATE orders SET status = 'shipped' WHERE order_id = 1000;
		UPDATE shipments SET tracking = 'f1000', shipped_at = '2024-06-01 00:00:00+00' WHERE order_id = 1000;
		DELETE FROM shipments WHERE order_id = 3;
		COMMIT`)
	p.waitRows(t, db, "after the stream", join, got)
}

// TestPostgresMetricsExampleRuns runs examples/postgres_metrics_to_paimon.yaml
// with the binary: per-minute counts and sums of orders through the
// aggregation merge engine. After inserts across midnight (two dt
// partitions), amount updates, updates moving created_at to another
// minute, deletes and key changes, the Paimon table's minutes with orders
// equal SELECT ... GROUP BY minute; minutes emptied by deletes hold zeros.
func TestPostgresMetricsExampleRuns(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE orders (order_id bigint PRIMARY KEY, amount numeric(10,2) NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
		ALTER TABLE orders REPLICA IDENTITY FULL;
		CREATE PUBLICATION paimon_order_metrics FOR TABLE orders`)
	db.Exec("SELECT pg_create_logical_replication_slot('paimon_order_metrics', 'pgoutput')") // not in the DDL's transaction
	wh := t.TempDir()
	p := startExampleFile(t, "postgres_metrics_to_paimon.yaml", db, wh)
	const agg = `SELECT to_char(m, 'YYYY-MM-DD'), to_char(m, 'YYYY-MM-DD HH24:MI:SS.US'), count(*), sum(amount)
		FROM (SELECT date_trunc('minute', created_at AT TIME ZONE 'UTC') m, amount FROM orders) o GROUP BY m`
	nonEmpty := func(r map[string]any) bool { return r["orders"] != int64(0) }
	got := func() []string {
		return tableRows(t, wh, "order_metrics", nonEmpty, "dt", "minute", "orders", "amount")
	}

	db.Exec("INSERT INTO orders SELECT g, g * 0.25, '2024-05-01 23:30:00+00'::timestamptz + g * interval '17 seconds' FROM generate_series(1, 300) g")
	p.waitRows(t, db, "after the inserts", agg, got)
	db.Exec("UPDATE orders SET amount = amount + 1 WHERE order_id % 4 = 0")
	db.Exec("UPDATE orders SET created_at = created_at + interval '3 minutes' WHERE order_id % 6 = 0")
	db.Exec("DELETE FROM orders WHERE order_id % 5 = 0 OR order_id BETWEEN 100 AND 110") // empties some minutes
	db.Exec("UPDATE orders SET order_id = order_id + 1000 WHERE order_id % 11 = 0")
	db.Exec(`BEGIN; INSERT INTO orders VALUES (5000, 9.99, '2024-05-02 00:00:59.999+00');
		UPDATE orders SET amount = 10.01 WHERE order_id = 5000; COMMIT`)
	p.waitRows(t, db, "after the stream", agg, got)
	if zero := tableRows(t, wh, "order_metrics", func(r map[string]any) bool { return r["orders"] == int64(0) }, "minute", "amount"); len(zero) == 0 ||
		!strings.HasSuffix(zero[0], "|0.00") {
		t.Fatalf("minutes emptied by deletes: %v, want rows with amount 0.00", zero)
	}
}

// TestPostgresAuditExampleRuns runs examples/postgres_audit_to_paimon.yaml
// with the binary, SIGKILLed once while transactions commit and started
// again. The oracle is a trigger logging every row change (a key change as
// a delete and an insert, as pgoutput reports it) into a table outside the
// captured schema: the Paimon table's (xid, table, operation, key) rows
// equal the trigger's, as a multiset, so nothing is lost or appended twice;
// every update carries its old row (REPLICA IDENTITY FULL) and every row a
// commit time.
func TestPostgresAuditExampleRuns(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2));
		CREATE TABLE customers (id bigint PRIMARY KEY, name text);
		ALTER TABLE orders REPLICA IDENTITY FULL;
		CREATE PUBLICATION paimon_audit FOR TABLE orders, customers;
		CREATE SCHEMA oracle;
		CREATE TABLE oracle.audit (xid bigint, tbl text, op text, key text);
		CREATE FUNCTION oracle.log() RETURNS trigger LANGUAGE plpgsql AS $$
		DECLARE x bigint := txid_current() % 4294967296; t text := 'public.' || TG_TABLE_NAME;
		BEGIN
			IF TG_OP = 'INSERT' THEN INSERT INTO oracle.audit VALUES (x, t, 'insert', NEW.id::text);
			ELSIF TG_OP = 'DELETE' THEN INSERT INTO oracle.audit VALUES (x, t, 'delete', OLD.id::text);
			ELSIF OLD.id <> NEW.id THEN INSERT INTO oracle.audit VALUES (x, t, 'delete', OLD.id::text), (x, t, 'insert', NEW.id::text);
			ELSE INSERT INTO oracle.audit VALUES (x, t, 'update', NEW.id::text);
			END IF;
			RETURN NULL;
		END $$;
		CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON orders FOR EACH ROW EXECUTE FUNCTION oracle.log();
		CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON customers FOR EACH ROW EXECUTE FUNCTION oracle.log();
		INSERT INTO orders VALUES (0, 'before the slot', NULL)`) // not archived: snapshot never
	wh := t.TempDir()
	p := startExampleFile(t, "postgres_audit_to_paimon.yaml", db, wh)
	waitSlotActive(t, db, "paimon_audit", true)
	db.Exec("TRUNCATE oracle.audit")
	write := func(from, to int) {
		for i := from; i < to; i++ {
			db.Exec(fmt.Sprintf(`INSERT INTO orders VALUES (%d, 'new', %d.25); INSERT INTO customers VALUES (%d, 'c%d')
				ON CONFLICT (id) DO UPDATE SET name = excluded.name`, i, i, i%20, i))
			if i%3 == 0 {
				db.Exec(fmt.Sprintf("UPDATE orders SET status = 'paid' WHERE id BETWEEN %d AND %d", i-2, i))
			}
			if i%5 == 0 {
				db.Exec(fmt.Sprintf("DELETE FROM orders WHERE id = %d; UPDATE orders SET id = id + 100000 WHERE id = %d", i-1, i-2))
			}
		}
	}
	write(1, 60)
	time.Sleep(1500 * time.Millisecond) // some of it committed to Paimon, some not
	write(60, 80)
	p.stop(syscall.SIGKILL)
	write(80, 100)
	p = startExampleFile(t, "postgres_audit_to_paimon.yaml", db, wh)
	write(100, 120)
	const oracle = "SELECT xid, tbl, op, key FROM oracle.audit"
	p.waitRows(t, db, "after a SIGKILL and a restart", oracle, func() []string {
		return tableRows(t, wh, "audit_log", nil, "xid", "table_name", "operation", "row_key")
	})
	bad := tableRows(t, wh, "audit_log", func(r map[string]any) bool {
		return r["commit_time"] == nil || r["lsn_position"] == "" || r["operation"] == "update" && r["table_name"] == "public.orders" && r["before"] == nil
	}, "lsn_position", "operation", "row_key")
	if len(bad) > 0 {
		t.Fatalf("rows without commit time, position, or an update's old row: %v", head(bad))
	}
	var upd string
	for _, r := range tableRows(t, wh, "audit_log", func(r map[string]any) bool { return r["operation"] == "update" && r["table_name"] == "public.orders" }, "before", "row") {
		upd = r
		break
	}
	if !strings.Contains(upd, `"status":"new"`) || !strings.Contains(upd, `"status":"paid"`) {
		t.Fatalf("an update's before|row: %s, want the old status new and the new status paid", upd)
	}
}
