package pgcdc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

// runCommand runs `benthos-paimon pg-cdc args...` in process; the error is
// what RunCLI prints on stderr with exit code 1.
func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := &cli.App{Name: "benthos-paimon", Writer: &out, ErrWriter: &errOut, Commands: []*cli.Command{Command()},
		ExitErrHandler: func(*cli.Context, error) {}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := app.RunContext(ctx, append([]string{"benthos-paimon", "pg-cdc"}, args...))
	return out.String(), err
}

// activeSlot starts streaming slot on a replication connection, so that
// the slot is active, and returns the walsender's pid; the connection
// closes when the test ends.
func activeSlot(t *testing.T, db *pgtest.DB, slot, pub string) uint32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := replicationConn(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	err = pglogrepl.StartReplication(ctx, conn, slot, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + pub + "'"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "slot active", func() bool {
		return db.QueryString("SELECT active FROM pg_replication_slots WHERE slot_name = '"+slot+"'") == "t"
	})
	return conn.PID()
}

func slotExists(db *pgtest.DB, slot string) bool {
	return db.QueryString("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '"+slot+"'") == "1"
}

// TestCommandStatus: status prints the slot's row of pg_replication_slots
// (active with the walsender's pid, positions, retained WAL and lag), the
// publication's tables and the server's settings, as text and as JSON;
// the byte counts agree with the server's own arithmetic.
func TestCommandStatus(t *testing.T) {
	db := pgtest.New(t)
	slot := slotName(db)
	db.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, amount numeric(10,2));
		CREATE TABLE shipments (id bigint PRIMARY KEY, carrier text);
		CREATE PUBLICATION ` + slot + ` FOR TABLE orders, shipments WITH (publish = 'insert, update, delete')`)
	db.Exec("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')")
	// WAL the slot has not confirmed. The test server runs with
	// synchronous_commit off, and pg_current_wal_lsn() is where WAL has been
	// written, not inserted: this commit waits for its WAL, so that the
	// positions read below are past the rows (with it off, a run read all
	// three before the WAL writer had written them: 5,944 bytes).
	db.Exec("SET synchronous_commit = on; INSERT INTO orders SELECT g, g FROM generate_series(1, 2000) g")

	// Inactive: lag is pg_current_wal_lsn() - confirmed_flush_lsn, taken
	// between two readings of the WAL position.
	before := db.QueryString("SELECT (pg_current_wal_lsn() - confirmed_flush_lsn)::bigint FROM pg_replication_slots WHERE slot_name = '" + slot + "'")
	out, err := runCommand(t, "status", "--dsn", db.DSN, "--slot", slot, "--json")
	after := db.QueryString("SELECT (pg_current_wal_lsn() - confirmed_flush_lsn)::bigint FROM pg_replication_slots WHERE slot_name = '" + slot + "'")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	lo, _ := strconv.ParseInt(before, 10, 64)
	hi, _ := strconv.ParseInt(after, 10, 64)
	wantFlush := db.QueryString("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + slot + "'")
	wantRestart := db.QueryString("SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = '" + slot + "'")
	sl := st.Slot
	switch {
	case sl == nil:
		t.Fatalf("no slot in %s", out)
	case sl.Name != slot || sl.Type != "logical" || orNull(sl.Plugin) != "pgoutput" || orNull(sl.Database) != db.Name || sl.Active || sl.ActivePID != nil:
		t.Fatalf("slot %+v", *sl)
	case orNull(sl.ConfirmedFlushLSN) != wantFlush || orNull(sl.RestartLSN) != wantRestart || orNull(sl.WALStatus) != "reserved" || sl.SafeWALSize != nil:
		t.Fatalf("slot %s: flush %s restart %s wal_status %s safe %v; want %s %s reserved NULL", out,
			orNull(sl.ConfirmedFlushLSN), orNull(sl.RestartLSN), orNull(sl.WALStatus), sl.SafeWALSize, wantFlush, wantRestart)
	case sl.LagBytes == nil:
		t.Fatalf("no lag_bytes in %s", out)
	case *sl.LagBytes < lo || *sl.LagBytes > hi || hi < 100_000:
		// hi, not lo, holds the 2000 rows of WAL for certain: one CI run
		// read lo as 0 with the rows already committed.
		t.Fatalf("lag_bytes %d, want between %d and %d (2000 rows of WAL; before %q, after %q)", *sl.LagBytes, lo, hi, before, after)
	case sl.RetainedBytes == nil || *sl.RetainedBytes < *sl.LagBytes:
		t.Fatalf("retained_wal_bytes %v < lag %v (restart_lsn is at or before confirmed_flush_lsn)", sl.RetainedBytes, *sl.LagBytes)
	case st.Server.WALLevel != "logical" || st.Server.MaxSlotWALKeepSize != "-1" || st.Server.Database != db.Name || !strings.HasPrefix(st.Server.Version, "15."):
		t.Fatalf("server %+v", st.Server)
	case st.Publication == nil || strings.Join(st.Publication.Tables, ",") != "public.orders,public.shipments" ||
		strings.Join(st.Publication.Publishes, ",") != "insert,update,delete" || st.Publication.AllTables || st.SnapshotPending:
		t.Fatalf("publication %+v, snapshot pending %v", st.Publication, st.SnapshotPending)
	}

	// Active, with a pending snapshot (the marker slot exists): text.
	db.Exec("SELECT pg_create_physical_replication_slot('" + markerName(slot) + "')")
	pid := activeSlot(t, db, slot, slot)
	out, err = runCommand(t, "status", "--dsn", db.DSN, "--slot", slot)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for _, want := range []string{
		"server: PostgreSQL 15.",
		"wal_level logical, max_slot_wal_keep_size -1 (no cap",
		fmt.Sprintf("slot %s: logical, plugin pgoutput, database %s\n", slot, db.Name),
		fmt.Sprintf("  active               true (pid %d)\n", pid),
		"  wal_status           reserved\n",
		"  safe_wal_size        unlimited",
		"  retained WAL         ",
		"  lag                  ",
		"snapshot: pending (the marker slot " + markerName(slot) + " exists",
		"publication " + slot + ": publishes insert, update, delete, publish_via_partition_root false, 2 tables\n  public.orders\n  public.shipments\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

// TestCommandStatusMissing: a missing slot or an explicitly named missing
// publication is an error (exit 1) that names the database's slots; the
// status is printed all the same.
func TestCommandStatusMissing(t *testing.T) {
	db := pgtest.New(t)
	db.Exec("SELECT pg_create_logical_replication_slot('" + slotName(db) + "', 'pgoutput')")
	out, err := runCommand(t, "status", "--dsn", db.DSN, "--slot", "nosuch")
	want := fmt.Sprintf("pg-cdc status: slot nosuch does not exist in database %s (its logical slots: %s)", db.Name, slotName(db))
	if err == nil || err.Error() != want || !strings.Contains(out, "slot nosuch: does not exist\npublication nosuch: does not exist\n") {
		t.Fatalf("err %v, want %q; out:\n%s", err, want, out)
	}
	// Without --publication, a missing default publication is reported, not an error.
	if out, err = runCommand(t, "status", "--dsn", db.DSN, "--slot", slotName(db)); err != nil || !strings.Contains(out, "publication "+slotName(db)+": does not exist") {
		t.Fatalf("err %v; out:\n%s", err, out)
	}
	_, err = runCommand(t, "status", "--dsn", db.DSN, "--slot", slotName(db), "--publication", "nopub")
	if err == nil || err.Error() != "pg-cdc status: publication nopub does not exist in database "+db.Name {
		t.Fatalf("err %v", err)
	}
	if _, err = runCommand(t, "status", "--dsn", db.DSN, "--slot", "Bad-Name"); err == nil ||
		err.Error() != `pg-cdc status: --slot "Bad-Name" is not a slot name ([a-z0-9_], 1 to 63 characters)` {
		t.Fatalf("err %v", err)
	}
}

// TestCommandDropSlot: an active slot is refused without --force and
// survives; --force terminates its walsender and drops it, with its
// snapshot marker; a missing slot is an error.
func TestCommandDropSlot(t *testing.T) {
	db := pgtest.New(t)
	slot := slotName(db)
	db.Exec("CREATE TABLE orders (id bigint PRIMARY KEY); CREATE PUBLICATION " + slot + " FOR TABLE orders")
	db.Exec("SELECT pg_create_physical_replication_slot('" + markerName(slot) + "')")
	db.Exec("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')")
	pid := activeSlot(t, db, slot, slot)

	out, err := runCommand(t, "drop-slot", "--dsn", db.DSN, "--slot", slot)
	want := fmt.Sprintf("pg-cdc drop-slot: slot %s is active (in use by pid %d): stop its pipeline first, or give --force to terminate that backend; nothing dropped", slot, pid)
	if err == nil || err.Error() != want || out != "" {
		t.Fatalf("err %v, want %q; out %q", err, want, out)
	}
	if !slotExists(db, slot) || !slotExists(db, markerName(slot)) {
		t.Fatal("a refused drop-slot dropped something")
	}

	out, err = runCommand(t, "drop-slot", "--dsn", db.DSN, "--slot", slot, "--force")
	if err != nil {
		t.Fatalf("drop-slot --force: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || lines[0] != fmt.Sprintf("terminated pid %d, the walsender of slot %s", pid, slot) ||
		!strings.HasPrefix(lines[1], fmt.Sprintf("dropped slot %s (logical, plugin pgoutput, confirmed_flush_lsn ", slot)) ||
		lines[2] != fmt.Sprintf("dropped slot %s (the snapshot marker of %s)", markerName(slot), slot) {
		t.Fatalf("drop-slot --force printed:\n%s", out)
	}
	if slotExists(db, slot) || slotExists(db, markerName(slot)) {
		t.Fatal("slot or marker still there")
	}
	if db.QueryString(fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid)) != "0" {
		t.Fatalf("walsender %d still running", pid)
	}

	_, err = runCommand(t, "drop-slot", "--dsn", db.DSN, "--slot", slot)
	if want := fmt.Sprintf("pg-cdc drop-slot: slot %s does not exist (it has no logical slots); nothing dropped", slot); err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}

	// An inactive slot without marker: one line.
	db.Exec("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')")
	if out, err = runCommand(t, "drop-slot", "--dsn", db.DSN, "--slot", slot); err != nil || strings.Count(out, "\n") != 1 || slotExists(db, slot) {
		t.Fatalf("err %v; out:\n%s", err, out)
	}

	// A temporary slot goes with the walsender --force terminates.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := replicationConn(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := pglogrepl.CreateReplicationSlot(ctx, conn, slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{Temporary: true}); err != nil {
		t.Fatal(err)
	}
	if err := pglogrepl.StartReplication(ctx, conn, slot, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + slot + "'"}}); err != nil {
		t.Fatal(err)
	}
	out, err = runCommand(t, "drop-slot", "--dsn", db.DSN, "--slot", slot, "--force")
	if err != nil || !strings.HasPrefix(out, fmt.Sprintf("terminated pid %d, the walsender of slot %s\ndropped slot %s", conn.PID(), slot, slot)) || slotExists(db, slot) {
		t.Fatalf("temporary slot: err %v; out:\n%s", err, out)
	}
}

// TestCommandDropPublication drops a publication, not its tables; a
// missing one is an error.
func TestCommandDropPublication(t *testing.T) {
	db := pgtest.New(t)
	db.Exec("CREATE TABLE orders (id bigint PRIMARY KEY); CREATE PUBLICATION pub1 FOR TABLE orders")
	out, err := runCommand(t, "drop-publication", "--dsn", db.DSN, "--publication", "pub1")
	if err != nil || out != "dropped publication pub1 (1 table: public.orders)\n" {
		t.Fatalf("err %v; out %q", err, out)
	}
	if db.QueryString("SELECT count(*) FROM pg_publication WHERE pubname = 'pub1'") != "0" || db.QueryString("SELECT to_regclass('orders') IS NOT NULL") != "t" {
		t.Fatal("publication not dropped, or the table with it")
	}
	if _, err = runCommand(t, "drop-publication", "--dsn", db.DSN, "--publication", "pub1"); err == nil ||
		err.Error() != "pg-cdc drop-publication: publication pub1 does not exist; nothing dropped" {
		t.Fatalf("err %v", err)
	}
}

// TestCommandWrongDSN: an unparsable DSN and a server that is not there
// fail with one message naming the cause, within the connect timeout.
func TestCommandWrongDSN(t *testing.T) {
	db := pgtest.New(t)
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://x@127.0.0.1:notaport/db", "pg-cdc status: --dsn: "},
		{"postgres://postgres@127.0.0.1:1/db?sslmode=disable", "pg-cdc status: connect: "},
		{strings.Replace(db.DSN, "/"+db.Name+"?", "/nosuchdb?", 1), `database "nosuchdb" does not exist`},
	} {
		start := time.Now()
		_, err := runCommand(t, "status", "--dsn", tc.dsn, "--slot", "s")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.dsn, err, tc.want)
		}
		if d := time.Since(start); d > connectTimeout+5*time.Second {
			t.Errorf("%s: took %v", tc.dsn, d)
		}
	}
}
