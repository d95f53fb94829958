package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

// TestPgCDCCommands runs the pg-cdc commands through the binary against a
// slot a running pg_cdc → paimon pipeline holds: status exits 0 and shows
// the slot active; drop-slot exits 1 and drops nothing while it is active;
// once the pipeline stopped it drops the slot (exit 0); then status and
// drop-slot exit 1 for the missing slot, and a wrong DSN exits 1.
func TestPgCDCCommands(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2), note text);
		INSERT INTO orders SELECT g, 'new', g, NULL FROM generate_series(1, 100) g`)
	slot := db.Name + "_slot"
	wh := t.TempDir()
	p := startPgPipeline(t, pgInput(db, slot, "  tables: [ public.orders ]\n"), ordersOutput(wh, ""))
	waitTableEqualsSelect(t, db, wh, "snapshot")
	waitSlotActive(t, db, slot, true)
	pid := db.QueryString("SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + slot + "'")

	run := func(args ...string) (int, string) {
		return runBinary(t, t.TempDir(), time.Minute, append([]string{"pg-cdc"}, args...)...)
	}
	code, out := run("status", "--dsn", db.DSN, "--slot", slot)
	if code != 0 || !strings.Contains(out, "active               true (pid "+pid+")") ||
		!strings.Contains(out, "publication "+slot+": publishes insert, update, delete, truncate, publish_via_partition_root false, 1 table\n  public.orders\n") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	code, out = run("drop-slot", "--dsn", db.DSN, "--slot", slot)
	if want := fmt.Sprintf("pg-cdc drop-slot: slot %s is active (in use by pid %s)", slot, pid); code != 1 || !strings.Contains(out, want) {
		t.Fatalf("drop-slot of an active slot: exit %d, want 1 and %q\n%s", code, want, out)
	}
	p.stop()
	waitSlotActive(t, db, slot, false)
	if code, out = run("drop-slot", "--dsn", db.DSN, "--slot", slot); code != 0 || !strings.HasPrefix(out, "dropped slot "+slot+" (logical, plugin pgoutput") {
		t.Fatalf("drop-slot: exit %d\n%s", code, out)
	}
	if db.QueryString("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '"+slot+"'") != "0" {
		t.Fatal("slot still there")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--dsn", db.DSN, "--slot", slot}, "pg-cdc status: slot " + slot + " does not exist in database " + db.Name},
		{[]string{"drop-slot", "--dsn", db.DSN, "--slot", slot}, "pg-cdc drop-slot: slot " + slot + " does not exist"},
		{[]string{"status", "--dsn", "postgres://postgres@127.0.0.1:1/x?sslmode=disable", "--slot", slot}, "pg-cdc status: connect: "},
	} {
		if code, out := run(tc.args...); code != 1 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want 1 and %q\n%s", tc.args, code, tc.want, out)
		}
	}
}
