package pgcdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

// TestMultiTableTransaction: one transaction over two tables is one batch,
// in statement order, all rows with the transaction's lsn and xid and
// lsn_seq 1..n; the next transaction is a batch of its own.
func TestMultiTableTransaction(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "CREATE TABLE customers (id int PRIMARY KEY, name text)")
	in := newInput(t, baseYAML(db, "tables: [ public.orders, public.customers ]\nsnapshot: never\nmax_batch_rows: 1\n"))
	connect(t, in)
	db.Exec(`BEGIN; INSERT INTO customers VALUES (1, 'ann'); INSERT INTO orders VALUES (1, 'new', 5, NULL);
		UPDATE customers SET name = 'anne' WHERE id = 1; DELETE FROM orders WHERE id = 1; COMMIT`)
	db.Exec("INSERT INTO orders VALUES (2, 'new', 5, NULL)")
	b := readTxns(t, in, 2)
	got := b[0].events
	want := []string{"customers insert", "orders insert", "customers update", "orders delete"}
	if len(got) != len(want) {
		t.Fatalf("first batch: %d events, want %d: %+v", len(got), len(want), got)
	}
	for i, e := range got {
		if e.Table+" "+e.Op != want[i] || e.Seq != int64(i+1) || e.LSN != got[0].LSN || e.Meta["xid"] != got[0].Meta["xid"] {
			t.Fatalf("event %d: %s %s seq %d lsn %s xid %v; want %s, seq %d, one lsn and xid", i, e.Table, e.Op, e.Seq, e.LSN, e.Meta["xid"], want[i], i+1)
		}
	}
	if got[3].Row["id"] != jsonNumber(1) || len(got[3].Row) != 1 {
		t.Fatalf("delete under DEFAULT: body %v, want the key only", got[3].Row)
	}
	if len(b[1].events) != 1 || b[1].events[0].LSN == got[0].LSN {
		t.Fatalf("second transaction: %+v", b[1].events)
	}
}

// TestMaxTransactionRowsSplits: a transaction above max_transaction_rows
// is split into batches, whose lsn_position still increases strictly and
// stays below the next transaction's.
func TestMaxTransactionRowsSplits(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in := newInput(t, streamOnly(db, "max_transaction_rows: 40\n"))
	connect(t, in)
	db.Exec("INSERT INTO orders SELECT g, 'new', g, NULL FROM generate_series(1, 100) g")
	db.Exec("INSERT INTO orders VALUES (1000, 'next', 1, NULL)")
	evs := readEvents(t, in, 101)
	var last []uint64
	for i, e := range evs {
		p := parsePosition(t, e.Position)
		if last != nil && !positionLess(last, p) {
			t.Fatalf("event %d: position %s not above %v", i, e.Position, last)
		}
		last = p
	}
	if evs[0].LSN != evs[99].LSN || evs[100].LSN == evs[0].LSN {
		t.Fatalf("lsn of the split transaction %s..%s, next %s", evs[0].LSN, evs[99].LSN, evs[100].LSN)
	}
}

// TestKeyChange: an update of the primary key is a delete of the old key
// then an insert of the new row, under DEFAULT (old key only) and FULL
// (old row).
func TestKeyChange(t *testing.T) {
	for _, identity := range []string{"DEFAULT", "FULL"} {
		t.Run(identity, func(t *testing.T) {
			db := pgtest.New(t)
			db.Exec(ordersDDL + "ALTER TABLE orders REPLICA IDENTITY " + identity + "; INSERT INTO orders VALUES (3, 'new', 1.50, 'x')")
			in := newInput(t, baseYAML(db, "tables: [ public.orders ]\nsnapshot: initial\n"))
			connect(t, in)
			readEvents(t, in, 1)
			db.Exec("UPDATE orders SET id = 100000, status = 'moved' WHERE id = 3")
			evs := readEvents(t, in, 2)
			del, ins := evs[0], evs[1]
			if del.Op != "delete" || ins.Op != "insert" {
				t.Fatalf("ops %s, %s; want delete, insert", del.Op, ins.Op)
			}
			wantDel := `{"id":3}`
			if identity == "FULL" {
				wantDel = `{"amount":"1.50","id":3,"note":"x","status":"new"}`
			}
			if got := mustJSON(del.Row); got != wantDel {
				t.Fatalf("delete body %s, want %s", got, wantDel)
			}
			if got := mustJSON(ins.Row); got != `{"amount":"1.50","id":100000,"note":"x","status":"moved"}` {
				t.Fatalf("insert body %s", got)
			}
			if ins.Before == nil || ins.Before["id"] != jsonNumber(3) {
				t.Fatalf("insert's before %v, want the old key", ins.Before)
			}
			if strings.ToLower(identity) != ins.Identity {
				t.Fatalf("replica_identity %q", ins.Identity)
			}
		})
	}
}

const toastDDL = `CREATE TABLE docs (id int PRIMARY KEY, small text, big text);
	INSERT INTO docs SELECT 1, 's', string_agg(md5(random()::text), '') FROM generate_series(1, 800);`

// TestToast: an update that leaves a TOASTed value unchanged. Under FULL
// the value comes from the old row; under DEFAULT toast: error stops with
// an error naming table and column (nothing confirmed past it), and
// toast: null sends null and names the column in unchanged_toast. Never a
// placeholder string.
func TestToast(t *testing.T) {
	t.Run("FULL", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(toastDDL + "ALTER TABLE docs REPLICA IDENTITY FULL")
		big := db.QueryString("SELECT big FROM docs")
		in := newInput(t, baseYAML(db, "tables: [ public.docs ]\nsnapshot: never\n"))
		connect(t, in)
		db.Exec("UPDATE docs SET small = 's2'")
		e := readEvents(t, in, 1)[0]
		if e.Row["big"] != big || e.Row["small"] != "s2" || e.Toast != "" {
			t.Fatalf("big %d chars (want %d), small %v, unchanged_toast %q", len(fmt.Sprint(e.Row["big"])), len(big), e.Row["small"], e.Toast)
		}
	})
	t.Run("DEFAULT/null", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(toastDDL)
		in := newInput(t, baseYAML(db, "tables: [ public.docs ]\nsnapshot: never\ntoast: null\n"))
		connect(t, in)
		db.Exec("UPDATE docs SET small = 's2'")
		e := readEvents(t, in, 1)[0]
		if v, ok := e.Row["big"]; !ok || v != nil || e.Toast != "big" {
			t.Fatalf("big %v (present %v), unchanged_toast %q; want null and big", v, ok, e.Toast)
		}
	})
	t.Run("DEFAULT/error", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(toastDDL)
		in := newInput(t, baseYAML(db, "tables: [ public.docs ]\nsnapshot: never\n"))
		connect(t, in)
		start := confirmedFlush(t, db)
		db.Exec("UPDATE docs SET small = 's2'")
		err := waitFailure(t, in)
		for _, want := range []string{"public.docs", "column big", "REPLICA IDENTITY FULL", "toast: null"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not mention %q", err, want)
			}
		}
		if got := confirmedFlush(t, db); got != start {
			t.Fatalf("confirmed_flush_lsn moved from %s to %s past the failed transaction", start, got)
		}
	})
}

// waitFailure reads until the session fails and returns its error.
func waitFailure(t *testing.T, in *Input) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, ack, err := in.ReadBatch(ctx)
		if f := in.Failure(); f != nil {
			return f
		}
		if ctx.Err() != nil {
			t.Fatal("no failure")
		}
		if err == nil {
			_ = ack(ctx, nil)
		}
	}
}

// TestReplicaIdentityNothingRefused: Connect refuses such a table with the
// SQL that fixes it; a table without a primary key likewise.
func TestReplicaIdentityNothingRefused(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "ALTER TABLE orders REPLICA IDENTITY NOTHING; CREATE TABLE nokey (a int)")
	for table, want := range map[string]string{
		"public.orders": `ALTER TABLE "public"."orders" REPLICA IDENTITY DEFAULT`,
		"public.nokey":  "has no primary key",
	} {
		in := newInput(t, baseYAML(db, "tables: [ "+table+" ]\n"))
		err := in.Connect(context.Background())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: Connect error %v, want one containing %q", table, err, want)
		}
	}
}

// TestTruncatePolicies: truncate: error stops before the TRUNCATE (the
// slot is not confirmed past it); truncate: ignore passes it and delivers
// what follows; truncate: delete_all emits one truncate message per
// truncated captured table, with an empty body, in its place among the
// transaction's changes (tests/e2e TestPgCDCToPaimonTruncate runs all three
// into Paimon).
func TestTruncatePolicies(t *testing.T) {
	t.Run("error", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(ordersDDL + "INSERT INTO orders VALUES (1, 'new', 1, NULL)")
		in := newInput(t, streamOnly(db, ""))
		connect(t, in)
		start := confirmedFlush(t, db)
		db.Exec("TRUNCATE orders")
		err := waitFailure(t, in)
		if !strings.Contains(err.Error(), "TRUNCATE of public.orders") || !strings.Contains(err.Error(), "truncate: ignore") {
			t.Fatalf("error %v", err)
		}
		if got := confirmedFlush(t, db); got != start {
			t.Fatalf("confirmed_flush_lsn moved past the TRUNCATE: %s → %s", start, got)
		}
	})
	t.Run("ignore", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(ordersDDL + "INSERT INTO orders VALUES (1, 'new', 1, NULL)")
		in := newInput(t, streamOnly(db, "truncate: ignore\n"))
		connect(t, in)
		db.Exec("TRUNCATE orders")
		db.Exec("INSERT INTO orders VALUES (2, 'new', 2, NULL)")
		e := readEvents(t, in, 1)[0]
		if e.Op != "insert" || e.Row["id"] != jsonNumber(2) {
			t.Fatalf("after the ignored TRUNCATE: %+v", e)
		}
	})
	t.Run("delete_all", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(ordersDDL + "CREATE TABLE other (id int PRIMARY KEY); CREATE TABLE uncaptured (id int PRIMARY KEY)")
		db.Exec("CREATE PUBLICATION " + slotName(db) + " FOR TABLE orders, other, uncaptured")
		in := newInput(t, baseYAML(db, "tables: [ public.orders, public.other ]\nsnapshot: never\ntruncate: delete_all\n"))
		connect(t, in)
		db.Exec(`BEGIN; INSERT INTO orders VALUES (1, 'new', 1, NULL); TRUNCATE orders, other, uncaptured;
			INSERT INTO orders VALUES (2, 'new', 2, NULL); COMMIT`)
		events := readEvents(t, in, 4)
		var got []string
		var last []uint64
		for _, e := range events {
			got = append(got, e.Table+" "+e.Op)
			if p := parsePosition(t, e.Position); last != nil && !positionLess(last, p) {
				t.Fatalf("position %s not above %v", e.Position, last)
			} else {
				last = p
			}
			if e.Op == "truncate" && (len(e.Row) != 0 || e.Row == nil || e.PK != "id") {
				t.Fatalf("truncate message: body %v, pk %q", e.Row, e.PK)
			}
		}
		if want := "orders insert,orders truncate,other truncate,orders insert"; strings.Join(got, ",") != want {
			t.Fatalf("messages %v, want %s", got, want)
		}
	})
}

// TestConnectErrors: a wrong DSN, a missing publication that may not be
// created, and a missing slot that may not be created each fail Connect
// with an error saying what to do.
func TestConnectErrors(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	cases := []struct{ name, yaml, want string }{
		{"wrong dsn", fmt.Sprintf("dsn: postgres://postgres@127.0.0.1:1/%s?sslmode=disable&connect_timeout=2\nslot_name: x\ntables: [ public.orders ]\n", db.Name), "connect"},
		{"no such table", baseYAML(db, "tables: [ public.nope ]\n"), "public.nope does not exist"},
		{"publication", baseYAML(db, "tables: [ public.orders ]\ncreate_publication: false\n"), `CREATE PUBLICATION "` + slotName(db) + `" FOR TABLE "public"."orders"`},
		{"slot", baseYAML(db, "tables: [ public.orders ]\ncreate_slot: false\n"), "SELECT pg_create_logical_replication_slot('" + slotName(db) + "', 'pgoutput')"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := newInput(t, c.yaml)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := in.Connect(ctx)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Connect error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestPartitionedTable: a partitioned table is snapshotted through its
// root and streamed under its own name (the publication is created with
// publish_via_partition_root); a publication without it is refused with the
// SQL that fixes it, since the partitions' changes would otherwise be lost.
func TestPartitionedTable(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE m (id int, dt date, v text, PRIMARY KEY (id, dt)) PARTITION BY RANGE (dt);
		CREATE TABLE m_2024 PARTITION OF m FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
		CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
		INSERT INTO m VALUES (1, '2024-05-01', 'a'), (2, '2025-05-01', 'b');
		CREATE PUBLICATION leafs FOR TABLE m`)
	bad := newInput(t, baseYAML(db, "tables: [ public.m ]\npublication: leafs\n"))
	if err := bad.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), "publish_via_partition_root = true") {
		t.Fatalf("Connect with a leaf-publishing publication: %v", err)
	}
	in := newInput(t, baseYAML(db, "tables: [ public.m ]\n"))
	connect(t, in)
	evs := readEvents(t, in, 2)
	db.Exec("INSERT INTO m VALUES (3, '2025-06-01', 'c')")
	db.Exec("UPDATE m SET v = 'z' WHERE id = 1")
	evs = append(evs, readEvents(t, in, 2)...)
	got := []string{}
	for _, e := range evs {
		got = append(got, e.Table+" "+e.Op+" "+mustJSON(e.Row))
	}
	want := `m read {"dt":"2024-05-01","id":1,"v":"a"}|m read {"dt":"2025-05-01","id":2,"v":"b"}|m insert {"dt":"2025-06-01","id":3,"v":"c"}|m update {"dt":"2024-05-01","id":1,"v":"z"}`
	if strings.Join(got, "|") != want {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

// TestInvalidatedSlot: a slot that exceeded max_slot_wal_keep_size
// (wal_status lost) cannot be read again; Connect says so and how to start
// over, instead of failing on START_REPLICATION, and stops the stream.
func TestInvalidatedSlot(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in := newInput(t, streamOnly(db, ""))
	connect(t, in)
	if err := in.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The cluster is shared by this process's tests, which run one at a
	// time: set the cap for this test only.
	db.Exec("ALTER SYSTEM SET max_slot_wal_keep_size = '16MB'")
	db.Exec("SELECT pg_reload_conf()")
	t.Cleanup(func() {
		db.Exec("ALTER SYSTEM RESET max_slot_wal_keep_size")
		db.Exec("SELECT pg_reload_conf()")
	})
	eventually(t, 60*time.Second, "the slot invalidated", func() bool {
		if db.QueryString(fmt.Sprintf("SELECT wal_status FROM pg_replication_slots WHERE slot_name = '%s'", slotName(db))) == "lost" {
			return true
		}
		db.Exec("CREATE TABLE IF NOT EXISTS filler (b text)")
		db.Exec("INSERT INTO filler SELECT repeat(md5(g::text), 20) FROM generate_series(1, 30000) g")
		db.Exec("SELECT pg_switch_wal()")
		db.Exec("CHECKPOINT")
		return false
	})
	// Without a fatal handler: retried at the slowest pace.
	in2 := newInput(t, streamOnly(db, ""))
	err := in2.Connect(context.Background())
	var bo *service.ErrBackOff
	if !errors.As(err, &bo) || bo.Wait != retry.Max || !strings.Contains(err.Error(), "invalidated") || !strings.Contains(err.Error(), "pg_drop_replication_slot") {
		t.Fatalf("Connect on an invalidated slot: %v", err)
	}
	// With one: the stream is stopped.
	in3, st := newStoppableInput(t, streamOnly(db, ""), false)
	if err := in3.Connect(context.Background()); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("Connect on an invalidated slot with a fatal handler: %v", err)
	}
	checkStopped(t, in3, st, "was invalidated (wal_status lost")
}

// TestLargeTransaction: one transaction of 1 000 000 rows, under protocol 1
// (stream_in_progress: off; the walsender spills it to its disk, as the
// issue's scenario asks, and sends it after its commit) and streamed (on;
// the walsender sends it while it is written, spilling nothing, and the
// input keeps it, beyond stream_buffer_memory in local files), arrives
// whole, every row once, split into batches of max_transaction_rows, with
// lsn_position strictly increasing; the slot is confirmed past it only
// once every part is acknowledged. Each logs how long the INSERT took, how
// long the rows took to arrive after its commit, and the server's
// pg_stat_replication_slots figures (about 20 s in all on the 2-core
// machine).
func TestLargeTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("1 000 000 rows")
	}
	for _, mode := range []StreamMode{StreamOff, StreamOn} {
		t.Run(string(mode), func(t *testing.T) { largeTransaction(t, mode) })
	}
}

func largeTransaction(t *testing.T, mode StreamMode) {
	const n, part = 1000000, 20000
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in := newInput(t, streamOnly(db, fmt.Sprintf("max_transaction_rows: %d\nmax_batch_rows: %d\nstream_in_progress: %s\nstream_spill_directory: %s\n", part, part, mode, t.TempDir())))
	connect(t, in)
	start := time.Now()
	db.Exec(fmt.Sprintf("INSERT INTO orders SELECT g, 'bulk', g, NULL FROM generate_series(1, %d) g", n))
	committed := time.Now()
	// Only the acks and the first row's LSN are kept: a million events in
	// memory would cost gigabytes.
	var acks []service.AckFunc
	var txnLSN string
	seen := make([]bool, n+1)
	got := 0
	var last []uint64
	var first time.Duration
	for got < n {
		b, ok := readBatch(t, in, 60*time.Second)
		if !ok {
			t.Fatalf("after %d rows: no batch", got)
		}
		if got == 0 {
			first = time.Since(committed)
		}
		if len(b.events) > part {
			t.Fatalf("batch of %d rows, above max_transaction_rows", len(b.events))
		}
		for _, e := range b.events {
			p := parsePosition(t, e.Position)
			if last != nil && !positionLess(last, p) {
				t.Fatalf("row %d: position %s not above %v", got, e.Position, last)
			}
			last = p
			id, err := e.Row["id"].(json.Number).Int64()
			if err != nil || id < 1 || id > n || seen[id] {
				t.Fatalf("row %d: id %v (%v) out of range or seen before", got, e.Row["id"], err)
			}
			seen[id] = true
			if txnLSN == "" {
				txnLSN = e.LSN // its commit LSN + 1: below its end
			}
			got++
		}
		acks = append(acks, b.ack)
	}
	all := time.Since(committed)
	if len(acks) != n/part {
		t.Fatalf("%d parts, want %d", len(acks), n/part)
	}
	for _, ack := range acks[:len(acks)-1] {
		_ = ack(context.Background(), nil)
	}
	time.Sleep(300 * time.Millisecond)
	if got := confirmedFlush(t, db); lsnCmp(t, db, got, txnLSN) >= 0 {
		t.Fatalf("confirmed moved to %s with the last part unacknowledged (transaction at %s)", got, txnLSN)
	}
	_ = acks[len(acks)-1](context.Background(), nil)
	waitConfirmed(t, db, "want it past the transaction", func(l string) bool { return lsnCmp(t, db, l, txnLSN) > 0 })
	// The walsender reports its decoding statistics on its own schedule.
	var st slotStats
	if mode == StreamOff {
		st = waitSlotStats(t, db, slotName(db), "the transaction spilled", func(s slotStats) bool { return s.spillTxns > 0 })
		if st.streamBytes != 0 {
			t.Fatalf("protocol 1 streamed: %+v", st)
		}
	} else {
		st = waitSlotStats(t, db, slotName(db), "the transaction streamed", func(s slotStats) bool { return s.streamTxns > 0 })
		if st.spillBytes != 0 {
			t.Fatalf("the walsender spilled a streamed transaction: %+v", st)
		}
	}
	t.Logf("stream_in_progress %s: %d rows: INSERT and commit %v; after the commit, first batch %v, all rows read %v; server spill_bytes %d (%d txns), stream_bytes %d (%d txns)",
		mode, n, committed.Sub(start).Round(time.Millisecond), first.Round(time.Millisecond), all.Round(time.Millisecond),
		st.spillBytes, st.spillTxns, st.streamBytes, st.streamTxns)
}

// TestReplicationRole: a non-superuser with LOGIN REPLICATION and SELECT
// (docs/POSTGRES_CDC.md §1) snapshots and streams through a publication
// its owner created; creating the publication itself fails with the SQL to
// run as the owner; a role without REPLICATION is told it needs it.
func TestReplicationRole(t *testing.T) {
	db := pgtest.New(t)
	role := db.Name + "_cdc"
	plain := db.Name + "_plain"
	db.Exec(ordersDDL + "INSERT INTO orders VALUES (1, 'new', 1, NULL)")
	db.Exec(fmt.Sprintf("CREATE ROLE %s WITH LOGIN REPLICATION; CREATE ROLE %s WITH LOGIN; GRANT SELECT ON orders TO %s, %s", role, plain, role, plain))
	t.Cleanup(func() {
		db.Exec(fmt.Sprintf("DROP OWNED BY %s, %s", role, plain))
		db.Exec(fmt.Sprintf("DROP ROLE %s, %s", role, plain))
	})
	dsn := func(user string) string { return strings.Replace(db.DSN, "postgres@", user+"@", 1) }
	yaml := func(user string) string {
		return fmt.Sprintf("dsn: %s\nslot_name: %s_slot\nstatus_interval: 100ms\nheartbeat_interval: 0s\ntables: [ public.orders ]\n", dsn(user), db.Name)
	}

	err := newInput(t, yaml(role)).Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), `run as the tables' owner: CREATE PUBLICATION`) {
		t.Fatalf("without ownership: %v", err)
	}
	db.Exec(fmt.Sprintf("CREATE PUBLICATION %s_slot FOR TABLE orders", db.Name))
	err = newInput(t, yaml(plain)).Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "REPLICATION attribute") {
		t.Fatalf("without REPLICATION: %v", err)
	}
	in := newInput(t, yaml(role))
	connect(t, in)
	readEvents(t, in, 1)
	db.Exec("INSERT INTO orders VALUES (2, 'new', 2, NULL)")
	if e := readEvents(t, in, 1)[0]; e.Op != "insert" {
		t.Fatalf("%+v", e)
	}
}

// TestReplicaIdentityIndex: REPLICA IDENTITY USING INDEX works when the
// index holds the primary key (deletes carry it) and is refused otherwise.
func TestReplicaIdentityIndex(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE a (id int PRIMARY KEY, code text NOT NULL, v text); CREATE UNIQUE INDEX a_code ON a (code);
		ALTER TABLE a REPLICA IDENTITY USING INDEX a_code;
		CREATE TABLE b (id int, code text NOT NULL, v text, PRIMARY KEY (id)); CREATE UNIQUE INDEX b_idcode ON b (id, code);
		ALTER TABLE b REPLICA IDENTITY USING INDEX b_idcode; INSERT INTO b VALUES (1, 'x', 'v')`)
	err := newInput(t, baseYAML(db, "tables: [ public.a ]\n")).Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "REPLICA IDENTITY USING INDEX") {
		t.Fatalf("identity index without the key: %v", err)
	}
	in := newInput(t, baseYAML(db, "tables: [ public.b ]\n"))
	connect(t, in)
	readEvents(t, in, 1)
	db.Exec("UPDATE b SET v = 'w' WHERE id = 1")
	db.Exec("DELETE FROM b WHERE id = 1")
	evs := readEvents(t, in, 2)
	if evs[0].Op != "update" || evs[1].Op != "delete" || mustJSON(evs[1].Row) != `{"code":"x","id":1}` || evs[1].Identity != "index" {
		t.Fatalf("events %+v", evs)
	}
}
