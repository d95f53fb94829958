package pgcdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

// streamOnly is the config of the tests that drive the input themselves:
// no snapshot, one transaction per batch.
func streamOnly(db *pgtest.DB, extra string) string {
	return baseYAML(db, "tables: [ public.orders ]\nsnapshot: never\nmax_batch_rows: 1\n"+extra)
}

// readTxns reads n batches (one transaction each) without acking them.
func readTxns(t *testing.T, in *Input, n int) []batchOf {
	t.Helper()
	var out []batchOf
	for len(out) < n {
		b, ok := readBatch(t, in, 30*time.Second)
		if !ok {
			t.Fatalf("got %d of %d transactions", len(out), n)
		}
		out = append(out, b)
	}
	return out
}

// TestRestartResumesFromConfirmed: five single-row transactions; the first
// two are acknowledged, the rest are not when the input stops (a crash as
// far as the slot can tell). The slot confirms exactly the end of the
// second; a new input delivers the third, fourth and fifth, nothing
// before and nothing lost.
func TestRestartResumesFromConfirmed(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in := newInput(t, streamOnly(db, ""))
	connect(t, in)
	for i := 1; i <= 5; i++ {
		db.Exec(fmt.Sprintf("INSERT INTO orders VALUES (%d, 'new', %d, NULL)", i, i))
	}
	txns := readTxns(t, in, 5)
	for i, b := range txns {
		if len(b.events) != 1 || b.events[0].Row["id"] != jsonNumber(i+1) {
			t.Fatalf("transaction %d: %+v", i+1, b.events)
		}
	}
	for _, b := range txns[:2] {
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	second := txns[1].events[0].LSN
	waitConfirmed(t, db, "want the end of the second transaction "+second, func(l string) bool { return l == second })
	time.Sleep(300 * time.Millisecond) // three more status updates: still there
	if got := confirmedFlush(t, db); got != second {
		t.Fatalf("confirmed_flush_lsn moved to %s past the unacknowledged third transaction (second ends at %s)", got, second)
	}
	if err := in.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	in2 := newInput(t, streamOnly(db, ""))
	connect(t, in2)
	again := readEvents(t, in2, 3)
	for i, e := range again {
		if e.Row["id"] != jsonNumber(i+3) || e.Position != txns[i+2].events[0].Position {
			t.Fatalf("after restart, event %d: id %v position %s; want id %d position %s", i, e.Row["id"], e.Position, i+3, txns[i+2].events[0].Position)
		}
	}
}

// TestAckContiguity: acknowledgements out of order never move the flush
// position past a gap: with T2 and T4 acked and T1 not, the slot stays
// below T1's end; acking T1 moves it to T2's end exactly (T3 still open);
// acking T3 moves it to T4's end or beyond.
func TestAckContiguity(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in := newInput(t, streamOnly(db, ""))
	connect(t, in)
	for i := 1; i <= 4; i++ {
		db.Exec(fmt.Sprintf("INSERT INTO orders VALUES (%d, 'new', %d, NULL)", i, i))
	}
	txns := readTxns(t, in, 4)
	ack := func(i int) {
		if err := txns[i].ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	ack(1)
	ack(3)
	time.Sleep(500 * time.Millisecond)
	// (An idle advance from before T1 began may be sent; nothing at or
	// past T1's end.)
	if got := confirmedFlush(t, db); lsnCmp(t, db, got, txns[0].events[0].LSN) >= 0 {
		t.Fatalf("with T1 unacknowledged, confirmed_flush_lsn moved to %s, past T1's end %s", got, txns[0].events[0].LSN)
	}
	ack(0)
	waitConfirmed(t, db, "want T2's end "+txns[1].events[0].LSN, func(l string) bool { return l == txns[1].events[0].LSN })
	time.Sleep(300 * time.Millisecond)
	if got := confirmedFlush(t, db); got != txns[1].events[0].LSN {
		t.Fatalf("with T3 unacknowledged, confirmed_flush_lsn %s passed T2's end %s", got, txns[1].events[0].LSN)
	}
	ack(2)
	waitConfirmed(t, db, "want at least T4's end", func(l string) bool { return lsnCmp(t, db, l, txns[3].events[0].LSN) >= 0 })
}

// TestIdleSlotAdvance: with nothing captured in flight, writes to a table
// outside the publication (and heartbeats) move confirmed_flush_lsn, so an
// idle slot does not retain WAL.
func TestIdleSlotAdvance(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "CREATE TABLE other (id int PRIMARY KEY, v text)")
	in := newInput(t, streamOnly(db, "heartbeat_interval: 200ms\n"))
	connect(t, in)
	start := confirmedFlush(t, db)
	db.Exec("INSERT INTO other SELECT g, md5(g::text) FROM generate_series(1, 10000) g")
	now := db.QueryString("SELECT pg_current_wal_insert_lsn()") // not the write position: commits are asynchronous in pgtest
	waitConfirmed(t, db, "want it past the other table's writes at "+now, func(l string) bool { return lsnCmp(t, db, l, now) >= 0 })
	if lsnCmp(t, db, now, start) <= 0 {
		t.Fatalf("no WAL written? %s vs %s", now, start)
	}
	// An unacknowledged captured transaction stops the idle advance.
	db.Exec("INSERT INTO orders VALUES (1, 'new', 1, NULL)")
	b := readTxns(t, in, 1)[0]
	db.Exec("INSERT INTO other SELECT g, 'x' FROM generate_series(10001, 20000) g")
	time.Sleep(500 * time.Millisecond) // five status updates
	// A position reached by idle advance before the transaction began may
	// still be sent; nothing at or past the transaction's end.
	if got := confirmedFlush(t, db); lsnCmp(t, db, got, b.events[0].LSN) >= 0 {
		t.Fatalf("confirmed_flush_lsn moved to %s with transaction %s unacknowledged", got, b.events[0].LSN)
	}
	if err := b.ack(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	waitConfirmed(t, db, "want it past the acked transaction", func(l string) bool { return lsnCmp(t, db, l, b.events[0].LSN) >= 0 })
}

// TestNackRestartsFromSlot: with auto_replay_nacks off, a nacked
// transaction is not confirmed; the input restarts from the slot and
// delivers it again.
func TestNackRestartsFromSlot(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in := newInput(t, streamOnly(db, "auto_replay_nacks: false\n"))
	connect(t, in)
	db.Exec("INSERT INTO orders VALUES (1, 'new', 1, NULL)")
	db.Exec("INSERT INTO orders VALUES (2, 'new', 2, NULL)")
	txns := readTxns(t, in, 2)
	_ = txns[0].ack(context.Background(), nil)
	_ = txns[1].ack(context.Background(), fmt.Errorf("sink down"))
	evs := readEvents(t, in, 1) // reconnects
	if evs[0].Row["id"] != jsonNumber(2) || evs[0].Position != txns[1].events[0].Position {
		t.Fatalf("after the nack: %+v, want transaction 2 again", evs[0])
	}
	if f := in.Failure(); f == nil {
		t.Fatal("no failure recorded for the nack")
	}
}

// TestTrackerContiguity is the tracker's rule without a server.
func TestTrackerContiguity(t *testing.T) {
	tr := newTxnTracker(100)
	e1, e2, e3 := tr.Begin(), tr.Begin(), tr.Begin()
	for _, e := range []*txnEntry{e1, e2, e3} {
		tr.Add(e)
	}
	tr.Seal(e1, 110)
	tr.Seal(e2, 120)
	tr.Seal(e3, 130)
	tr.Ack(e2)
	tr.Ack(e3)
	if tr.Position() != 100 || tr.AdvanceIdle(500) {
		t.Fatalf("position %d with the first unacked", tr.Position())
	}
	tr.Ack(e1)
	if tr.Position() != 130 || tr.InFlight() != 0 {
		t.Fatalf("position %d, in flight %d", tr.Position(), tr.InFlight())
	}
	// An empty transaction (no captured rows) retires on Seal.
	e4 := tr.Begin()
	tr.Seal(e4, 140)
	if tr.Position() != 140 {
		t.Fatalf("position %d after an empty transaction", tr.Position())
	}
	if !tr.AdvanceIdle(200) || tr.Position() != 200 || tr.AdvanceIdle(150) {
		t.Fatalf("idle advance: %d", tr.Position())
	}
	var _ pglogrepl.LSN = tr.Position()
}

func jsonNumber(i int) any { return jsonNum(fmt.Sprint(i)) }

// TestStreamKillAndRestart: a Benthos stream whose output accepts the
// first transactions and then hangs is stopped hard (its pending messages
// never acknowledged); a second stream on the same slot delivers every
// transaction from the first unacknowledged one on: nothing is lost.
func TestStreamKillAndRestart(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	yaml := streamOnly(db, "")
	hang := make(chan struct{})
	defer close(hang)
	c1 := runStream(t, yaml, func(evs []event) error {
		for _, e := range evs {
			if id, _ := e.Row["id"].(json.Number).Int64(); id > 5 {
				<-hang
				return errors.New("killed")
			}
		}
		return nil
	})
	waitSlotActive(t, db)
	for i := 1; i <= 10; i++ {
		db.Exec(fmt.Sprintf("INSERT INTO orders VALUES (%d, 'new', %d, NULL)", i, i))
	}
	c1.waitFor(t, "the first five", func(evs []event) bool { return len(evs) == 5 })
	if err := c1.stream.StopWithin(time.Second); err == nil {
		t.Log("stream stopped within the timeout")
	}
	c1.stream = nil
	c2 := runStream(t, yaml, nil)
	evs := c2.waitFor(t, "the rest", func(evs []event) bool {
		for _, e := range evs {
			if e.Row["id"] == jsonNumber(10) {
				return true
			}
		}
		return false
	})
	if first := evs[0].Row["id"]; first != jsonNumber(6) {
		t.Fatalf("after the kill the stream resumed at id %v, want 6 (the first unacknowledged)", first)
	}
}

// waitSlotActive waits until the test's slot is streaming (its changes
// from then on are captured).
func waitSlotActive(t *testing.T, db *pgtest.DB) {
	t.Helper()
	eventually(t, 20*time.Second, "slot active", func() bool {
		return db.QueryString(fmt.Sprintf("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s' AND active", slotName(db))) == "1"
	})
}

// TestHeartbeatAdvancesSlot: with no writes at all, heartbeats
// (pg_logical_emit_message) alone move confirmed_flush_lsn.
func TestHeartbeatAdvancesSlot(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in := newInput(t, streamOnly(db, "heartbeat_interval: 100ms\n"))
	connect(t, in)
	start := confirmedFlush(t, db)
	// Within 5 s: without heartbeats only the running-xacts record the
	// background writer logs every 15 s would move it.
	began := time.Now()
	eventually(t, 5*time.Second, "confirmed_flush_lsn moved by heartbeats from "+start, func() bool {
		return lsnCmp(t, db, confirmedFlush(t, db), start) > 0
	})
	t.Logf("moved after %s", time.Since(began).Round(time.Millisecond))
}
