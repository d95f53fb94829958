package pgcdc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

func markerExists(t *testing.T, db *pgtest.DB) bool {
	t.Helper()
	return db.QueryString(fmt.Sprintf("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s'", markerName(slotName(db)))) == "1"
}

// TestSnapshotRedoneAfterCrash: the input stops in the middle of the
// snapshot with batches unacknowledged. The marker slot says the snapshot
// did not finish, so the next start reads the tables again on a fresh
// snapshot (which already sees the change made meanwhile), then streams
// from the slot's consistent point: that change arrives again as an
// update, and the applied result equals SELECT. The marker is gone once the
// snapshot is acknowledged.
func TestSnapshotRedoneAfterCrash(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "INSERT INTO orders SELECT g, 'new', g, NULL FROM generate_series(1, 3000) g")
	yaml := baseYAML(db, "tables: [ public.orders ]\nsnapshot_chunk_pages: 2\nsnapshot_batch_size: 100\n")
	in := newInput(t, yaml)
	connect(t, in)
	start := confirmedFlush(t, db)
	if !markerExists(t, db) {
		t.Fatal("no marker slot during the snapshot")
	}
	first := readTxns(t, in, 3) // 300 rows, none acknowledged
	if first[0].events[0].Op != "read" {
		t.Fatalf("first event %+v", first[0].events[0])
	}
	db.Exec("UPDATE orders SET status = 'changed' WHERE id = 2999")
	if err := in.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !markerExists(t, db) || confirmedFlush(t, db) != start {
		t.Fatalf("after the crash: marker %v, confirmed %s (start %s)", markerExists(t, db), confirmedFlush(t, db), start)
	}

	in2 := newInput(t, yaml)
	connect(t, in2)
	evs := readEvents(t, in2, 3001)
	if n := countOp(evs, "read"); n != 3000 {
		t.Fatalf("second snapshot: %d rows, want 3000", n)
	}
	var sawChanged bool
	for _, e := range evs {
		if e.Row["id"] == jsonNumber(2999) && e.Op == "read" && e.Row["status"] == "changed" {
			sawChanged = true
		}
	}
	if !sawChanged {
		t.Fatal("the second snapshot is not a fresh one: row 2999 without the change made after the first")
	}
	last := evs[len(evs)-1]
	if last.Op != "update" || last.Row["id"] != jsonNumber(2999) {
		t.Fatalf("after the snapshot: %+v, want the update of 2999 streamed from the consistent point", last)
	}
	equalRows(t, "applied vs SELECT", applied(evs, "orders", "id", "status", "amount", "note"), ordersSelect(db))
	eventually(t, 10*time.Second, "marker slot dropped once the snapshot was acknowledged", func() bool { return !markerExists(t, db) })
}

// TestSnapshotNotRepeated: once a snapshot was acknowledged, a restart
// streams only.
func TestSnapshotNotRepeated(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "INSERT INTO orders SELECT g, 'new', g, NULL FROM generate_series(1, 100) g")
	yaml := baseYAML(db, "tables: [ public.orders ]\n")
	in := newInput(t, yaml)
	connect(t, in)
	readEvents(t, in, 100)
	eventually(t, 10*time.Second, "marker slot dropped", func() bool { return !markerExists(t, db) })
	_ = in.Close(context.Background())
	in2 := newInput(t, yaml)
	connect(t, in2)
	db.Exec("INSERT INTO orders VALUES (101, 'new', 1, NULL)")
	e := readEvents(t, in2, 1)[0]
	if e.Op != "insert" || e.Row["id"] != jsonNumber(101) {
		t.Fatalf("after restart: %+v, want only the new insert", e)
	}
}

// TestInitialOnly: snapshot: initial_only reads the tables without a slot
// or publication and ends the input.
func TestInitialOnly(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "INSERT INTO orders SELECT g, 'new', g, NULL FROM generate_series(1, 500) g")
	c := runStream(t, baseYAML(db, "tables: [ public.orders ]\nsnapshot: initial_only\n"), nil)
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the input did not end")
	}
	c.stream = nil
	equalRows(t, "snapshot vs SELECT", applied(c.snapshot(), "orders", "id", "status", "amount", "note"), ordersSelect(db))
	if n := db.QueryString("SELECT count(*) FROM pg_replication_slots"); n != "0" {
		t.Fatalf("%s slots left", n)
	}
}

// TestTemporarySlot: a temporary slot snapshots and streams, and is gone
// when the input closes.
func TestTemporarySlot(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "INSERT INTO orders VALUES (1, 'new', 1, NULL)")
	in := newInput(t, baseYAML(db, "tables: [ public.orders ]\ntemporary_slot: true\n"))
	connect(t, in)
	readEvents(t, in, 1)
	db.Exec("INSERT INTO orders VALUES (2, 'new', 2, NULL)")
	if e := readEvents(t, in, 1)[0]; e.Op != "insert" {
		t.Fatalf("%+v", e)
	}
	_ = in.Close(context.Background())
	eventually(t, 10*time.Second, "temporary slot gone after Close", func() bool {
		return db.QueryString("SELECT count(*) FROM pg_replication_slots") == "0"
	})
}

// TestRelationChange: after ADD COLUMN and ALTER COLUMN TYPE the messages
// carry the new column and the schema metadata follows.
func TestRelationChange(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in := newInput(t, streamOnly(db, ""))
	connect(t, in)
	db.Exec("INSERT INTO orders VALUES (1, 'new', 1, NULL)")
	readEvents(t, in, 1)
	db.Exec("ALTER TABLE orders ADD COLUMN qty int; ALTER TABLE orders ALTER COLUMN amount TYPE numeric(12,3)")
	db.Exec("INSERT INTO orders VALUES (2, 'new', 2, NULL, 7)")
	e := readEvents(t, in, 1)[0]
	if e.Row["qty"] != jsonNumber(7) || e.Row["amount"] != "2.000" {
		t.Fatalf("row %v", e.Row)
	}
	pt := e.Meta["paimon_types"].(map[string]any)
	if pt["qty"] != "INT" || pt["amount"] != "DECIMAL(12, 3)" {
		t.Fatalf("paimon_types %v", pt)
	}
}

// TestIdleInTransactionTimeoutOnRole: the guide's pitfall #36. The role
// has idle_in_transaction_session_timeout = 1s and statement_timeout =
// 1s, and the pipeline takes several seconds to acknowledge the snapshot,
// so the snapshot workers sit idle inside their REPEATABLE READ
// transactions and the exported snapshot waits; the input's session
// settings override the role's, and the whole snapshot arrives.
func TestIdleInTransactionTimeoutOnRole(t *testing.T) {
	db := pgtest.New(t)
	role := db.Name + "_slow"
	db.Exec(ordersDDL + "INSERT INTO orders SELECT g, 'new', g, NULL FROM generate_series(1, 3000) g")
	db.Exec(fmt.Sprintf("CREATE ROLE %s WITH LOGIN REPLICATION SUPERUSER", role))
	db.Exec(fmt.Sprintf("ALTER ROLE %s SET idle_in_transaction_session_timeout = '1s'", role))
	db.Exec(fmt.Sprintf("ALTER ROLE %s SET statement_timeout = '1s'", role))
	t.Cleanup(func() {
		db.Exec("DROP OWNED BY " + role)
		db.Exec("DROP ROLE " + role)
	})
	dsn := strings.Replace(db.DSN, "postgres@", role+"@", 1)
	in := newInput(t, fmt.Sprintf("dsn: %s\nslot_name: %s_slot\nstatus_interval: 100ms\nheartbeat_interval: 0s\ntables: [ public.orders ]\n"+
		"snapshot_chunk_pages: 2\nsnapshot_batch_size: 500\n", dsn, db.Name))
	connect(t, in)
	got := 0
	for got < 3000 {
		b, ok := readBatch(t, in, 30*time.Second)
		if !ok {
			t.Fatalf("snapshot stalled after %d rows: %v", got, in.Failure())
		}
		got += len(b.events)
		time.Sleep(700 * time.Millisecond) // slower than the role's timeouts, in all
		_ = b.ack(context.Background(), nil)
	}
	if f := in.Failure(); f != nil {
		t.Fatalf("the session failed: %v", f)
	}
	db.Exec("INSERT INTO orders VALUES (5000, 'after', 1, NULL)")
	if e := readEvents(t, in, 1)[0]; e.Op != "insert" {
		t.Fatalf("after the snapshot: %+v", e)
	}
}
