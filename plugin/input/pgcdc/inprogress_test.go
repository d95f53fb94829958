package pgcdc

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
)

// The tests of streamed transactions (stream_in_progress) lower the
// walsender's logical_decoding_work_mem to 64kB (its minimum) through the
// DSN's startup parameters, so that a transaction of a few thousand rows
// is streamed (or, under protocol 1, spilled by the server).
const smallDecodingMem = "&logical_decoding_work_mem=64kB"

// streamedPair is two inputs on two slots created at the same point of
// one publication: one streams in-progress transactions, the other uses
// protocol 1 (stream_in_progress: off). Both must emit the same messages.
type streamedPair struct {
	db      *pgtest.DB
	on, off *Input
	spill   string // the streaming input's stream_spill_directory
}

// slots of a streamedPair.
func (p *streamedPair) slotOn() string  { return p.db.Name + "_slot" }
func (p *streamedPair) slotOff() string { return p.db.Name + "_v1" }

// streamedYAML is the config of an input on db's orders and items with a
// 64kB logical_decoding_work_mem, a publication made by the test, and the
// slot and mode given.
func streamedYAML(db *pgtest.DB, slot string, mode StreamMode, extra string) string {
	return fmt.Sprintf("dsn: %s%s\nslot_name: %s\npublication: %s_pub\ncreate_publication: false\nstatus_interval: 100ms\nheartbeat_interval: 0s\n"+
		"tables: [ public.orders, public.items ]\nsnapshot: never\nstream_in_progress: %s\n%s",
		db.DSN, smallDecodingMem, slot, db.Name, mode, extra)
}

const itemsDDL = `CREATE TABLE items (id bigint PRIMARY KEY, order_id bigint, sku text);`

func newStreamedPair(t *testing.T, extraOn string) *streamedPair {
	t.Helper()
	db := pgtest.New(t)
	db.Exec(ordersDDL + itemsDDL + "CREATE PUBLICATION " + db.Name + "_pub FOR TABLE orders, items")
	p := &streamedPair{db: db, spill: t.TempDir()}
	p.on = newInput(t, streamedYAML(db, p.slotOn(), StreamOn, "stream_spill_directory: "+p.spill+"\n"+extraOn))
	p.off = newInput(t, streamedYAML(db, p.slotOff(), StreamOff, ""))
	connect(t, p.on)
	connect(t, p.off)
	return p
}

// slotStats is a slot's row of pg_stat_replication_slots.
type slotStats struct{ spillTxns, spillBytes, streamTxns, streamBytes int64 }

func readSlotStats(t testing.TB, db *pgtest.DB, slot string) slotStats {
	t.Helper()
	row := db.QueryString("SELECT spill_txns || ' ' || spill_bytes || ' ' || stream_txns || ' ' || stream_bytes FROM pg_stat_replication_slots WHERE slot_name = '" + slot + "'")
	var s slotStats
	if _, err := fmt.Sscan(row, &s.spillTxns, &s.spillBytes, &s.streamTxns, &s.streamBytes); err != nil {
		t.Fatalf("pg_stat_replication_slots of %s: %q: %v", slot, row, err)
	}
	return s
}

// waitSlotStats waits until the slot's statistics satisfy ok (the
// walsender reports them when it has decoded a transaction or streamed a
// part of one).
func waitSlotStats(t testing.TB, db *pgtest.DB, slot, what string, ok func(slotStats) bool) slotStats {
	t.Helper()
	var s slotStats
	eventually(t, 30*time.Second, slot+": "+what, func() bool {
		s = readSlotStats(t, db, slot)
		return ok(s)
	})
	return s
}

// waitDecoded waits until the walsender of slot has decoded the WAL
// written so far (its sent_lsn, the end of the last record it read, is
// past the current insert position): every change of an open transaction
// beyond logical_decoding_work_mem has been streamed by then. The WAL is
// flushed first by a synchronous commit: the WAL writer leaves the last
// partial page of asynchronous commits and open transactions unflushed,
// and the walsender reads flushed WAL only.
func waitDecoded(t testing.TB, db *pgtest.DB, slot string) {
	t.Helper()
	lsn := db.QueryString("SELECT pg_current_wal_insert_lsn()")
	db.Exec("SET synchronous_commit = on; SELECT txid_current()")
	eventually(t, 30*time.Second, slot+" decoded up to "+lsn, func() bool {
		return db.QueryString(fmt.Sprintf(`SELECT count(*) FROM pg_stat_replication r JOIN pg_replication_slots s ON s.active_pid = r.pid
			WHERE s.slot_name = '%s' AND r.sent_lsn >= '%s'`, slot, lsn)) == "1"
	})
}

// checkServerSides: the streaming slot's transactions were streamed and
// never spilled by the server; the protocol 1 slot's were spilled and
// never streamed.
func (p *streamedPair) checkServerSides(t *testing.T) {
	t.Helper()
	on := waitSlotStats(t, p.db, p.slotOn(), "streamed", func(s slotStats) bool { return s.streamTxns > 0 })
	off := waitSlotStats(t, p.db, p.slotOff(), "spilled", func(s slotStats) bool { return s.spillTxns > 0 })
	if on.spillBytes != 0 || off.streamBytes != 0 {
		t.Fatalf("streaming slot %+v (want spill_bytes 0), protocol 1 slot %+v (want stream_bytes 0)", on, off)
	}
	t.Logf("server: streaming slot streamed %d bytes in %d transaction(s), spilled %d; protocol 1 slot spilled %d bytes in %d transaction(s)",
		on.streamBytes, on.streamTxns, on.spillBytes, off.spillBytes, off.spillTxns)
}

// describe renders an event with everything a downstream sees: table,
// operation, body, before, lsn, lsn_seq, lsn_position, xid, commit time.
func describe(e event) string {
	return fmt.Sprintf("%s %s %s before=%s lsn=%s seq=%d pos=%s xid=%v ts=%v", e.Table, e.Op, mustJSON(e.Row), mustJSON(e.Before), e.LSN, e.Seq, e.Position, e.Meta["xid"], e.Meta["commit_ts_ms"])
}

// readBoth reads n events from each input and fails unless both inputs
// emitted the same messages; it returns the streaming input's.
func (p *streamedPair) readBoth(t *testing.T, n int) []event {
	t.Helper()
	on, off := readEvents(t, p.on, n), readEvents(t, p.off, n)
	if len(on) != n || len(off) != n {
		t.Fatalf("%d events streamed, %d under protocol 1, want %d", len(on), len(off), n)
	}
	for i := range on {
		if a, b := describe(on[i]), describe(off[i]); a != b {
			t.Fatalf("event %d differs:\n streamed:   %s\n protocol 1: %s", i, a, b)
		}
	}
	return on
}

// expectQuiet fails if in emits anything within d.
func expectQuiet(t *testing.T, in *Input, d time.Duration, what string) {
	t.Helper()
	if b, ok := readBatch(t, in, d); ok {
		t.Fatalf("%s: %d events emitted: %v", what, len(b.events), describe(b.events[0]))
	}
}

// spillFiles lists the streaming input's spill files.
func (p *streamedPair) spillFiles(t *testing.T) []string {
	t.Helper()
	return spoolFiles(t, p.spill)
}

// txnConn is an open transaction on its own connection.
type txnConn struct {
	t    *testing.T
	conn *pgx.Conn
}

func beginTxn(t *testing.T, db *pgtest.DB) *txnConn {
	t.Helper()
	c := &txnConn{t: t, conn: db.Conn()}
	c.exec("BEGIN")
	return c
}

func (c *txnConn) exec(sql string) {
	c.t.Helper()
	if _, err := c.conn.Exec(context.Background(), sql); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
}

// ids returns the id column of events of table, in order.
func ids(t *testing.T, evs []event, table, op string) []int64 {
	t.Helper()
	var out []int64
	for _, e := range evs {
		if e.Table != table || e.Op != op {
			continue
		}
		id, err := e.Row["id"].(json.Number).Int64()
		if err != nil {
			t.Fatalf("id %v: %v", e.Row["id"], err)
		}
		out = append(out, id)
	}
	return out
}

// span is from..to, in order.
func span(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func equalIDs(t *testing.T, what string, got, want []int64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		g, w := fmt.Sprint(got), fmt.Sprint(want)
		t.Fatalf("%s: %d ids, want %d\n got: %.300s\nwant: %.300s", what, len(got), len(want), g, w)
	}
}

// TestStreamedTransaction: a large transaction is streamed by the server
// while it runs (stream_txns grows, spill_bytes stays 0) and kept by the
// input, in memory and in spill files beyond stream_buffer_memory; nothing
// of it is emitted before its commit; then it is emitted complete, once,
// in order, as one transaction whose messages (bodies, lsn, lsn_seq,
// lsn_position, xid, commit time) equal those protocol 1 gives on a second
// slot (which the server spilled instead); the spill files are gone after
// the commit and their directory after Close.
func TestStreamedTransaction(t *testing.T) {
	p := newStreamedPair(t, "stream_buffer_memory: 32kb\n")
	tx := beginTxn(t, p.db)
	tx.exec("INSERT INTO orders SELECT g, 'new', g, 'note ' || g FROM generate_series(1, 3000) g")
	waitSlotStats(t, p.db, p.slotOn(), "part of the open transaction streamed", func(s slotStats) bool { return s.streamTxns > 0 })
	tx.exec("UPDATE orders SET status = 'paid' WHERE id % 3 = 0")
	tx.exec("INSERT INTO items SELECT g, g, 'sku' || g FROM generate_series(1, 2000) g")
	tx.exec("DELETE FROM orders WHERE id % 10 = 0")
	eventually(t, 20*time.Second, "spill files of the open transaction", func() bool { return len(p.spillFiles(t)) > 0 })
	expectQuiet(t, p.on, 300*time.Millisecond, "before the commit")
	tx.exec("COMMIT")
	evs := p.readBoth(t, 3000+1000+2000+300)
	equalIDs(t, "inserts", ids(t, evs, "orders", "insert"), span(1, 3000))
	equalIDs(t, "items", ids(t, evs, "items", "insert"), span(1, 2000))
	for i, e := range evs {
		if e.Seq != int64(i+1) || e.LSN != evs[0].LSN {
			t.Fatalf("event %d: seq %d lsn %s, want one transaction (seq %d, lsn %s)", i, e.Seq, e.LSN, i+1, evs[0].LSN)
		}
	}
	p.checkServerSides(t)
	if f := p.spillFiles(t); len(f) != 0 {
		t.Fatalf("spill files after the commit: %v", f)
	}
	if err := p.on.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d, _ := filepath.Glob(filepath.Join(p.spill, lookupfile.DirPrefix+"*")); len(d) != 0 {
		t.Fatalf("spill directory left after Close: %v", d)
	}
}

// TestStreamedAbort: a large transaction streamed and then rolled back
// emits nothing, and its spill files are removed at the Stream Abort; the
// next transaction is emitted as usual.
func TestStreamedAbort(t *testing.T) {
	p := newStreamedPair(t, "stream_buffer_memory: 32kb\n")
	tx := beginTxn(t, p.db)
	tx.exec("INSERT INTO orders SELECT g, 'doomed', g, NULL FROM generate_series(1, 5000) g")
	eventually(t, 20*time.Second, "spill files of the open transaction", func() bool { return len(p.spillFiles(t)) > 0 })
	tx.exec("ROLLBACK")
	eventually(t, 20*time.Second, "spill files removed after the abort", func() bool { return len(p.spillFiles(t)) == 0 })
	p.db.Exec("INSERT INTO orders VALUES (7, 'after', 1, NULL)")
	evs := p.readBoth(t, 1)
	if evs[0].Row["status"] != "after" {
		t.Fatalf("first event after the abort: %s", describe(evs[0]))
	}
	expectQuiet(t, p.on, 300*time.Millisecond, "after the transaction following the abort")
	waitSlotStats(t, p.db, p.slotOn(), "the aborted transaction streamed", func(s slotStats) bool { return s.streamTxns > 0 })
}

// TestStreamedSubtransactionRollback: inside a streamed transaction,
// savepoints rolled back (nested ones, one whose rows were spilled to a
// file and one whose rows are still in memory) drop exactly their rows;
// released savepoints keep theirs. A table whose first change (and so its
// Relation message) came in a rolled back savepoint is still decoded
// later in the transaction: pgoutput sends its Relation again.
func TestStreamedSubtransactionRollback(t *testing.T) {
	p := newStreamedPair(t, "stream_buffer_memory: 128kb\n")
	tx := beginTxn(t, p.db)
	tx.exec("INSERT INTO orders SELECT g, 'kept', g, NULL FROM generate_series(1, 2000) g")
	tx.exec("SAVEPOINT a")
	tx.exec("INSERT INTO items SELECT g, g, 'gone' FROM generate_series(1, 3000) g")
	tx.exec("SAVEPOINT b")
	tx.exec("UPDATE orders SET status = 'gone' WHERE id <= 1000")
	waitDecoded(t, p.db, p.slotOn())
	if len(p.spillFiles(t)) == 0 {
		t.Fatal("no spill file: the rows of savepoint a were meant to be in one")
	}
	tx.exec("ROLLBACK TO a")
	tx.exec("INSERT INTO items SELECT g, g, 'kept' FROM generate_series(10001, 10500) g")
	tx.exec("SAVEPOINT c")
	tx.exec("DELETE FROM orders WHERE id <= 100")
	tx.exec("RELEASE c")
	tx.exec("SAVEPOINT d")
	tx.exec("INSERT INTO orders SELECT g, 'gone', g, NULL FROM generate_series(20001, 21500) g")
	waitDecoded(t, p.db, p.slotOn())
	tx.exec("ROLLBACK TO d")
	tx.exec("INSERT INTO orders VALUES (30000, 'kept', 1, NULL)")
	tx.exec("COMMIT")
	evs := p.readBoth(t, 2000+500+100+1)
	for _, e := range evs {
		if e.Row["status"] == "gone" || e.Row["sku"] == "gone" {
			t.Fatalf("a row of a rolled back savepoint: %s", describe(e))
		}
	}
	equalIDs(t, "orders inserts", ids(t, evs, "orders", "insert"), append(span(1, 2000), 30000))
	equalIDs(t, "items inserts", ids(t, evs, "items", "insert"), span(10001, 10500))
	equalIDs(t, "deletes", ids(t, evs, "orders", "delete"), span(1, 100))
	p.checkServerSides(t)
}

// TestStreamedInterleaved: two large transactions stream interleaved
// segments, and a small one commits while both are open; each is emitted
// whole at its commit, in commit order (the small one, then the one that
// committed first), as protocol 1 emits them.
func TestStreamedInterleaved(t *testing.T) {
	p := newStreamedPair(t, "stream_buffer_memory: 64kb\n")
	a, b := beginTxn(t, p.db), beginTxn(t, p.db)
	a.exec("INSERT INTO orders SELECT g, 'a', g, NULL FROM generate_series(1, 2000) g")
	b.exec("INSERT INTO orders SELECT g, 'b', g, NULL FROM generate_series(10001, 12000) g")
	a.exec("INSERT INTO orders SELECT g, 'a', g, NULL FROM generate_series(2001, 4000) g")
	b.exec("INSERT INTO items SELECT g, g, 'b' FROM generate_series(1, 2000) g")
	waitSlotStats(t, p.db, p.slotOn(), "both open transactions streamed", func(s slotStats) bool { return s.streamTxns >= 2 })
	p.db.Exec("INSERT INTO orders VALUES (50000, 'small', 1, NULL)")
	small := p.readBoth(t, 1)
	if small[0].Row["status"] != "small" {
		t.Fatalf("the small transaction is not first: %s", describe(small[0]))
	}
	a.exec("UPDATE orders SET note = 'a' WHERE id <= 500")
	b.exec("COMMIT")
	a.exec("COMMIT")
	evs := p.readBoth(t, 2000+2000+4000+500)
	equalIDs(t, "b's orders first", ids(t, evs[:2000], "orders", "insert"), span(10001, 12000))
	equalIDs(t, "then b's items", ids(t, evs[2000:4000], "items", "insert"), span(1, 2000))
	equalIDs(t, "then a's orders", ids(t, evs[4000:8000], "orders", "insert"), span(1, 4000))
	equalIDs(t, "and a's updates", ids(t, evs[8000:], "orders", "update"), span(1, 500))
	last := parsePosition(t, small[0].Position)
	for i, e := range evs {
		pos := parsePosition(t, e.Position)
		if !positionLess(last, pos) {
			t.Fatalf("event %d: lsn_position %s not above %v", i, e.Position, last)
		}
		last = pos
	}
	p.checkServerSides(t)
}

// TestStreamedRestart: the input stops while a streamed transaction is
// open (its spill files and directory go with it); a new input on the
// slot gets the transaction streamed again from its start and emits it
// once, complete. Then, with max_transaction_rows splitting it, the input
// stops after two of its parts are acknowledged: the slot is not
// confirmed past the transaction, and the next input emits it whole again
// with the same lsn_position values, so that the paimon output's
// source_position skips what was committed.
func TestStreamedRestart(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + itemsDDL + "CREATE PUBLICATION " + db.Name + "_pub FOR TABLE orders, items")
	spill := t.TempDir()
	yaml := streamedYAML(db, db.Name+"_slot", StreamAuto, "stream_spill_directory: "+spill+"\nstream_buffer_memory: 32kb\nmax_transaction_rows: 1000\nmax_batch_rows: 1000\n")
	in1 := newInput(t, yaml)
	connect(t, in1)
	tx := beginTxn(t, db)
	tx.exec("INSERT INTO orders SELECT g, 'first', g, NULL FROM generate_series(1, 4000) g")
	eventually(t, 20*time.Second, "spill files of the open transaction", func() bool { return len(spoolFiles(t, spill)) > 0 })
	if err := in1.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d, _ := filepath.Glob(filepath.Join(spill, "*")); len(d) != 0 {
		t.Fatalf("left after Close mid-stream: %v", d)
	}
	in2 := newInput(t, yaml)
	connect(t, in2)
	tx.exec("INSERT INTO orders SELECT g, 'second', g, NULL FROM generate_series(4001, 5000) g")
	tx.exec("COMMIT")
	var parts [][]event
	var acks []func()
	for n := 0; n < 5000; {
		b, ok := readBatch(t, in2, 30*time.Second)
		if !ok {
			t.Fatalf("after %d of 5000 rows: no batch", n)
		}
		parts = append(parts, b.events)
		ack := b.ack
		acks = append(acks, func() { _ = ack(context.Background(), nil) })
		n += len(b.events)
	}
	var first []event
	for _, part := range parts {
		first = append(first, part...)
	}
	equalIDs(t, "after the restart mid-stream", ids(t, first, "orders", "insert"), span(1, 5000))
	expectQuiet(t, in2, 300*time.Millisecond, "after the transaction")
	if len(parts) != 5 {
		t.Fatalf("%d parts, want 5 of max_transaction_rows 1000", len(parts))
	}
	acks[0]()
	acks[1]()
	if err := in2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := confirmedFlush(t, db)
	if lsnCmp(t, db, before, first[0].LSN) >= 0 {
		t.Fatalf("confirmed_flush_lsn %s reached the transaction (%s) with 3 parts unacknowledged", before, first[0].LSN)
	}
	in3 := newInput(t, yaml)
	connect(t, in3)
	again := readEvents(t, in3, 5000)
	for i := range first {
		if a, b := describe(first[i]), describe(again[i]); a != b {
			t.Fatalf("event %d differs after the restart:\n first: %s\n again: %s", i, a, b)
		}
	}
	waitConfirmed(t, db, "past the transaction once all of it is acknowledged", func(l string) bool { return lsnCmp(t, db, l, first[0].LSN) > 0 })
}

// TestStreamsInProgress: auto streams on 14 and later and uses protocol 1
// on 13; on refuses 13 with an error retrying cannot fix; off never
// streams.
func TestStreamsInProgress(t *testing.T) {
	for _, c := range []struct {
		mode    StreamMode
		version int
		want    bool
		err     bool
	}{
		{StreamAuto, 130014, false, false},
		{StreamAuto, 140000, true, false},
		{StreamAuto, 150018, true, false},
		{StreamOn, 150018, true, false},
		{StreamOn, 130014, false, true},
		{StreamOff, 170000, false, false},
	} {
		got, err := streamsInProgress(c.mode, c.version)
		if got != c.want || (err != nil) != c.err || (err != nil && !isPermanent(err)) {
			t.Errorf("%s on %d: %v, %v; want %v, error %v (permanent)", c.mode, c.version, got, err, c.want, c.err)
		}
	}
}
