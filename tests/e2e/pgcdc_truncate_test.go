package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

const truncateOrdersDDL = `CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2), note text);
	INSERT INTO orders SELECT g, 'new', g * 1.25, 'n' || g FROM generate_series(1, 100) g`

// TestPgCDCToPaimonTruncate: each truncate policy of pg_cdc, into the
// paimon output's primary-key table.
//
//   - delete_all: rows inserted, TRUNCATE, rows inserted; then one
//     transaction that inserts, updates, truncates, inserts and updates;
//     then a TRUNCATE alone. After each step lakecore's read of the table
//     equals SELECT, and each truncate is an OVERWRITE snapshot. A second
//     pipeline on another slot replays the whole stream through
//     source_position and commits nothing.
//   - ignore: the TRUNCATE is skipped with a warning; Paimon keeps the rows
//     from before it, and those inserted after it arrive.
//   - error: the binary stops with exit code 1 and an error naming the
//     table; Paimon keeps the rows from before it.
func TestPgCDCToPaimonTruncate(t *testing.T) {
	t.Run("delete_all", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(truncateOrdersDDL)
		db.Exec("CREATE PUBLICATION " + db.Name + "_pub FOR TABLE orders")
		// The replaying slot exists before anything is streamed.
		db.Exec("SELECT pg_create_logical_replication_slot('" + db.Name + "_replay', 'pgoutput')")
		wh := t.TempDir()
		output := ordersOutput(wh, "  source_position: { stream: \"pg/orders\", offset: '${! @lsn_position }' }\n")
		p := startPgPipeline(t, pgInput(db, db.Name+"_slot", "  tables: [ public.orders ]\n  publication: "+db.Name+"_pub\n  truncate: delete_all\n"), output)
		waitTableEqualsSelect(t, db, wh, "after the snapshot")

		db.Exec("INSERT INTO orders SELECT g, 'more', NULL, NULL FROM generate_series(200, 250) g")
		db.Exec("TRUNCATE orders")
		db.Exec("INSERT INTO orders SELECT g, 'after', g, NULL FROM generate_series(300, 310) g")
		waitTableEqualsSelect(t, db, wh, "insert, TRUNCATE, insert")
		overwrites := countOverwrites(t, wh)
		if overwrites < 1 {
			t.Fatal("no OVERWRITE snapshot after a TRUNCATE")
		}

		db.Exec(`BEGIN;
			INSERT INTO orders SELECT g, 'txn', NULL, NULL FROM generate_series(400, 420) g;
			UPDATE orders SET note = 'before truncate' WHERE id = 300;
			TRUNCATE orders;
			INSERT INTO orders SELECT g, 'after txn truncate', g, NULL FROM generate_series(500, 505) g;
			UPDATE orders SET note = 'updated' WHERE id = 501;
			COMMIT`)
		waitTableEqualsSelect(t, db, wh, "one transaction: insert, update, TRUNCATE, insert, update")
		if n := countOverwrites(t, wh); n <= overwrites {
			t.Fatalf("%d OVERWRITE snapshots after the transaction's TRUNCATE, were %d", n, overwrites)
		}

		db.Exec("TRUNCATE orders")
		waitTableEqualsSelect(t, db, wh, "TRUNCATE alone")
		if got := db.QueryString("SELECT count(*) FROM orders"); got != "0" {
			t.Fatalf("source has %s rows", got)
		}
		db.Exec("INSERT INTO orders VALUES (1, 'last', 1, 'x')")
		waitTableEqualsSelect(t, db, wh, "an insert after the TRUNCATE")
		p.stop()

		// Everything again from a slot made before the stream started: each
		// change and truncate is recognised as committed.
		tbl, err := lakecore.Open(context.Background(), wh, "shop", "orders")
		if err != nil {
			t.Fatal(err)
		}
		before, err := tbl.Snapshots().Latest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		m := startPgPipeline(t, pgInput(db, db.Name+"_replay", "  tables: [ public.orders ]\n  publication: "+db.Name+"_pub\n  snapshot: never\n  truncate: delete_all\n"), output).metrics
		deadline := time.Now().Add(30 * time.Second)
		// 51 + 1 + 11, 21 + 1 + 1 + 6 + 1, 1, 1 changes.
		const replayed = 63 + 30 + 1 + 1
		for m.get(t, "paimon_messages_replayed") < replayed && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if got := m.get(t, "paimon_messages_replayed"); got != replayed {
			t.Fatalf("paimon_messages_replayed = %v, want %d", got, replayed)
		}
		after, err := tbl.Snapshots().Latest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if after.ID != before.ID {
			t.Fatalf("the replay committed snapshots %d..%d", before.ID+1, after.ID)
		}
		waitTableEqualsSelect(t, db, wh, "after the replay")
	})

	t.Run("ignore", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(truncateOrdersDDL)
		wh := t.TempDir()
		startPgPipeline(t, pgInput(db, db.Name+"_slot", "  tables: [ public.orders ]\n  truncate: ignore\n"), ordersOutput(wh, ""))
		waitTableEqualsSelect(t, db, wh, "after the snapshot")
		kept := db.QueryStrings(ordersSelect)
		db.Exec("TRUNCATE orders")
		db.Exec("INSERT INTO orders SELECT g, 'after', g, NULL FROM generate_series(300, 310) g")
		want := append(kept, db.QueryStrings(ordersSelect)...)
		sort.Slice(want, func(i, j int) bool { return keyLess(want[i], want[j]) })
		waitTableEquals(t, wh, "rows kept across the ignored TRUNCATE", want)
	})

	t.Run("error", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(truncateOrdersDDL)
		wh := t.TempDir()
		config := "http: { enabled: false }\npipeline: { threads: 1 }\ninput:\n  pg_cdc:\n" +
			indent(pgInput(db, db.Name+"_slot", "  tables: [ public.orders ]\n  truncate: error\n")) +
			"output:\n  paimon:\n" + indent(ordersOutput(wh, ""))
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, binarytest.Path(t), "-c", "config.yaml")
		cmd.Dir = dir
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		waitTableEqualsSelect(t, db, wh, "after the snapshot")
		kept := db.QueryStrings(ordersSelect)
		db.Exec("TRUNCATE orders")
		db.Exec("INSERT INTO orders VALUES (1000, 'after', 1, NULL)")
		var err error
		select {
		case err = <-exited:
		case <-time.After(60 * time.Second):
			t.Fatalf("still running a minute after the TRUNCATE:\n%s", out.String())
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("exit: %v, want exit code 1:\n%s", err, out.String())
		}
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, "TRUNCATE of public.orders") || !strings.Contains(last, "truncate: delete_all") {
			t.Fatalf("last line %q does not name the table and the policies", last)
		}
		waitTableEquals(t, wh, "rows kept after the stop", kept)
	})
}

// indent indents every line of a config fragment by two more spaces.
func indent(fragment string) string {
	return "  " + strings.TrimSuffix(strings.ReplaceAll(fragment, "\n", "\n  "), "  ")
}

// countOverwrites counts the OVERWRITE snapshots of shop.orders in wh.
func countOverwrites(t *testing.T, wh string) int {
	t.Helper()
	ctx := context.Background()
	tbl, err := lakecore.Open(ctx, wh, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, id := range ids {
		s, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.CommitKind == snapshot.CommitOverwrite {
			n++
		}
	}
	return n
}
