package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/pgcdc"
)

// pgPipeline runs pg_cdc (inputYAML, below `pg_cdc:`) into the paimon
// output (outputYAML, below `paimon:`) in-process, with json_api metrics,
// until stop is called (at the latest when the test ends).
type pgPipeline struct {
	stream  *service.Stream
	done    chan error
	metrics *streamMetrics
}

func startPgPipeline(t testing.TB, inputYAML, outputYAML string) *pgPipeline {
	t.Helper()
	return startPgPipelineTo(t, inputYAML, "paimon:\n"+outputYAML)
}

// startPgPipelineTo runs pg_cdc (inputYAML, below `pg_cdc:`) into the
// output outputYAML (the whole output, e.g. "drop: {}").
func startPgPipelineTo(t testing.TB, inputYAML, outputYAML string) *pgPipeline {
	t.Helper()
	sb := service.NewStreamBuilder()
	sb.SetThreads(1) // more pipeline threads may reorder batches, and a key's changes must stay in order
	if err := sb.SetLoggerYAML("level: WARN"); err != nil {
		t.Fatal(err)
	}
	p := &pgPipeline{done: make(chan error, 1), metrics: withMetrics(t, sb)}
	if err := sb.AddInputYAML("pg_cdc:\n" + inputYAML); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML(outputYAML); err != nil {
		t.Fatal(err)
	}
	var err error
	if p.stream, err = sb.Build(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.stream.Run(context.Background()) }()
	t.Cleanup(p.stop)
	return p
}

func (p *pgPipeline) stop() {
	if p.stream == nil {
		return
	}
	_ = p.stream.StopWithin(10 * time.Second)
	<-p.done
	p.stream = nil
}

// pgInput is the pg_cdc config of the tests: fast status updates, no
// heartbeats, plus extra lines.
func pgInput(db *pgtest.DB, slot, extra string) string {
	return fmt.Sprintf("  dsn: %s\n  slot_name: %s\n  status_interval: 200ms\n  heartbeat_interval: 0s\n%s", db.DSN, slot, extra)
}

// ordersOutput is the paimon config of a primary-key table shop.orders
// shaped like the source orders table, plus extra lines.
func ordersOutput(wh, extra string) string {
	return fmt.Sprintf(`  warehouse: %s
  database: shop
  table: orders
  batching: { count: 1000, period: 100ms }
  create_table:
    enabled: true
    schema:
      - { name: id, type: BIGINT }
      - { name: status, type: STRING NOT NULL }
      - { name: amount, type: "DECIMAL(10, 2)" }
      - { name: note, type: STRING }
    primary_keys: [ id ]
    bucket: 2
%s`, wh, extra)
}

// TestPgCDCToPaimon: pg_cdc → paimon into a primary-key table (row kinds
// from the operation metadata): a snapshot of 3 000 rows, then inserts,
// updates, deletes and key changes; lakecore's read of the table equals
// SELECT of the source. The oracle is Postgres itself.
func TestPgCDCToPaimon(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2), note text);
		INSERT INTO orders SELECT g, 'new', g * 1.25, CASE WHEN g % 5 = 0 THEN NULL ELSE 'n' || g END FROM generate_series(1, 3000) g`)
	wh := t.TempDir()
	startPgPipeline(t, pgInput(db, db.Name+"_slot", "  tables: [ public.orders ]\n"), ordersOutput(wh, ""))
	waitEqual := func(what string) { waitTableEqualsSelect(t, db, wh, what) }
	waitEqual("after the snapshot")
	db.Exec(`UPDATE orders SET status = 'paid', amount = amount + 1 WHERE id % 4 = 0`)
	db.Exec(`DELETE FROM orders WHERE id % 9 = 0`)
	db.Exec(`UPDATE orders SET id = id + 100000 WHERE id % 11 = 0`)
	db.Exec(`INSERT INTO orders SELECT g, 'late', NULL, 'x' FROM generate_series(5000, 5100) g`)
	waitEqual("after the stream")
}

// paimonRows reads shop.orders of warehouse wh with lakecore, rendered as
// SELECT renders the source (nil if the table does not exist yet).
func paimonRows(t *testing.T, wh string) []string {
	t.Helper()
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

// waitTableEqualsSelect waits until the Paimon table equals SELECT of the
// source orders table.
func waitTableEqualsSelect(t *testing.T, db *pgtest.DB, wh, what string) {
	t.Helper()
	waitTableEquals(t, wh, what, db.QueryStrings(ordersSelect))
}

// ordersSelect renders the source orders table as paimonRows renders
// shop.orders.
const ordersSelect = "SELECT id, status, amount, note FROM orders ORDER BY id"

// waitTableEquals waits until the Paimon table shop.orders holds the rows
// of wantRows (ordered by key).
func waitTableEquals(t *testing.T, wh, what string, wantRows []string) {
	t.Helper()
	want := strings.Join(wantRows, "\n")
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := paimonRows(t, wh)
		if strings.Join(got, "\n") == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the Paimon table (%d rows) never matched SELECT (%d rows)", what, len(got), len(wantRows))
		}
		time.Sleep(100 * time.Millisecond)
	}
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

// TestPgCDCToPaimonExactlyOnce: source_position with lsn_position makes a
// replay apply nothing twice. Two slots of the same database see the same
// transactions with the same lsn_position; the second, created first,
// replays everything the first pipeline committed (as a restart from a
// slot that was never confirmed would) plus the changes made since. The
// output acknowledges the replayed changes without writing them
// (paimon_messages_replayed counts exactly those), writes the new ones, and
// the table equals SELECT.
func TestPgCDCToPaimonExactlyOnce(t *testing.T) {
	replayFromSecondSlot(t, pgtestDSN, "", func(db *pgtest.DB) {
		for i := 1; i <= 40; i++ { // 40 transactions, 120 changes
			db.Exec(fmt.Sprintf("INSERT INTO orders VALUES (%d, 'new', %d.10, NULL)", i, i))
			db.Exec(fmt.Sprintf("UPDATE orders SET status = 'paid' WHERE id = %d", i))
			if i%2 == 0 {
				db.Exec(fmt.Sprintf("DELETE FROM orders WHERE id = %d", i-1))
			}
		}
	}, 100, "the 100 changes the first pipeline committed (40 inserts, 40 updates, 20 deletes)")
}

// TestPgCDCToPaimonStreamedExactlyOnce is TestPgCDCToPaimonExactlyOnce
// with one large transaction that the server streams while it runs
// (logical_decoding_work_mem 64kB, stream_in_progress auto), with a
// savepoint rolled back, emitted in five parts of max_transaction_rows:
// both slots stream it, the replay skips all of it.
func TestPgCDCToPaimonStreamedExactlyOnce(t *testing.T) {
	db := replayFromSecondSlot(t, func(db *pgtest.DB) string { return db.DSN + "&logical_decoding_work_mem=64kB" }, "  max_transaction_rows: 1000\n", func(db *pgtest.DB) {
		db.Exec(`BEGIN;
			INSERT INTO orders SELECT g, 'new', g, NULL FROM generate_series(1, 4000) g;
			SAVEPOINT s;
			INSERT INTO orders SELECT g, 'gone', g, NULL FROM generate_series(10001, 12000) g;
			ROLLBACK TO s;
			UPDATE orders SET status = 'paid' WHERE id <= 1000;
			COMMIT`)
	}, 5000, "the 5 000 changes of the streamed transaction")
	if n := db.QueryString("SELECT stream_txns FROM pg_stat_replication_slots WHERE slot_name = '" + db.Name + "_slot'"); n == "0" {
		t.Fatal("the transaction was not streamed")
	}
}

// pgtestDSN is the test database's DSN as it is.
func pgtestDSN(db *pgtest.DB) string { return db.DSN }

// replayFromSecondSlot runs workload through a pg_cdc → paimon pipeline on
// one slot until the table equals SELECT, stops it, changes more rows, and
// runs a second pipeline on a slot created before the first: the output
// must count exactly replayed changes (what the first pipeline committed)
// in paimon_messages_replayed, write the rest, and the table equal SELECT.
// dsn gives the input's DSN.
func replayFromSecondSlot(t *testing.T, dsn func(*pgtest.DB) string, inputExtra string, workload func(*pgtest.DB), replayed float64, what string) *pgtest.DB {
	t.Helper()
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2), note text)`)
	db.Exec("CREATE PUBLICATION " + db.Name + "_slot FOR TABLE orders")
	db.Exec("SELECT pg_create_logical_replication_slot('" + db.Name + "_replay', 'pgoutput')")
	wh := t.TempDir()
	src := *db // the input's view of the database
	src.DSN = dsn(db)
	pipeline := func(slot string) *pgPipeline {
		return startPgPipeline(t,
			pgInput(&src, slot, "  tables: [ public.orders ]\n  publication: "+db.Name+"_slot\n  snapshot: never\n"+inputExtra),
			ordersOutput(wh, "  source_position: { stream: \"pg/orders\", offset: '${! @lsn_position }' }\n"))
	}
	first := db.Name + "_slot"
	p1 := pipeline(first)
	waitSlotActive(t, db, first, true)
	workload(db)
	waitTableEqualsSelect(t, db, wh, "first pipeline")
	p1.stop()
	db.Exec("UPDATE orders SET note = 'after', amount = 1.00 WHERE id % 4 = 0")
	db.Exec("INSERT INTO orders VALUES (100000, 'late', NULL, NULL)")

	m2 := pipeline(db.Name + "_replay").metrics
	waitTableEqualsSelect(t, db, wh, "replaying pipeline")
	deadline := time.Now().Add(20 * time.Second)
	for m2.get(t, "paimon_messages_replayed") != replayed && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := m2.get(t, "paimon_messages_replayed"); got != replayed {
		t.Fatalf("paimon_messages_replayed = %v, want %s", got, what)
	}
	return db
}

// exampleProcess is examples/postgres_to_paimon.yaml run by the binary.
type exampleProcess struct {
	cmd    *exec.Cmd
	out    *bytes.Buffer
	exited chan error
}

// startExample runs the example as a user would: PG_DSN and WAREHOUSE
// pointing at the test database and directory, HTTP off.
func startExample(t *testing.T, db *pgtest.DB, wh string) *exampleProcess {
	t.Helper()
	return startExampleFile(t, "postgres_to_paimon.yaml", db, wh)
}

// startExampleFile runs examples/<name> so.
func startExampleFile(t *testing.T, name string, db *pgtest.DB, wh string) *exampleProcess {
	t.Helper()
	cmd := exec.Command(binarytest.Path(t), "-s", "http.enabled=false", "-c",
		filepath.Join(fixturetest.RepoDir(t), "examples", name))
	cmd.Env = append(os.Environ(), "PG_DSN="+db.DSN, "WAREHOUSE="+wh)
	p := &exampleProcess{cmd: cmd, out: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() { p.stop(os.Interrupt) })
	return p
}

// stop sends sig and waits for the process (killing it after 15 s).
func (p *exampleProcess) stop(sig os.Signal) {
	if p.cmd.ProcessState != nil || p.exited == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.exited = nil
}

const exampleQuery = "SELECT order_id, status, amount, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') FROM orders ORDER BY order_id"

const exampleDDL = `CREATE TABLE orders (order_id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2),
		updated_at timestamptz NOT NULL DEFAULT now());
		CREATE PUBLICATION paimon_orders FOR TABLE orders;
		INSERT INTO orders (order_id, status, amount) SELECT g, 'new', g * 0.5 FROM generate_series(1, 200) g`

// wait waits until the Paimon table equals SELECT.
func (p *exampleProcess) wait(t *testing.T, db *pgtest.DB, wh, what string) {
	t.Helper()
	p.waitRows(t, db, what, exampleQuery, func() []string { return exampleRows(t, wh) })
}

// TestPostgresExampleRuns runs examples/postgres_to_paimon.yaml with the
// benthos-paimon binary as a user would (its setup SQL run first): the
// snapshot and the changes after it land in the Paimon table, which
// equals SELECT.
func TestPostgresExampleRuns(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(exampleDDL)
	wh := t.TempDir()
	p := startExample(t, db, wh)
	p.wait(t, db, wh, "snapshot")
	db.Exec("UPDATE orders SET status = 'paid', updated_at = now() WHERE order_id % 3 = 0")
	db.Exec("DELETE FROM orders WHERE order_id % 5 = 0")
	db.Exec("INSERT INTO orders (order_id, status, amount) VALUES (1000, 'new', 9.99)")
	p.wait(t, db, wh, "stream")
}

// TestPostgresExampleSurvivesSIGKILL: the example process is SIGKILLed
// twice while a writer commits transactions (once during the stream,
// once right after a restart); after the last restart the Paimon table
// equals SELECT: nothing lost, nothing applied twice that shows.
func TestPostgresExampleSurvivesSIGKILL(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(exampleDDL)
	wh := t.TempDir()
	p := startExample(t, db, wh)
	p.wait(t, db, wh, "snapshot")
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	conn := db.Conn()
	go func() {
		defer close(writerDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := 1 + i%300
			_, _ = conn.Exec(context.Background(), fmt.Sprintf(
				"INSERT INTO orders (order_id, status, amount) VALUES (%d, 'w%d', %d.5) ON CONFLICT (order_id) DO UPDATE SET status = 'u%d', updated_at = now()",
				id, i, i%1000, i))
			if i%7 == 0 {
				_, _ = conn.Exec(context.Background(), fmt.Sprintf("DELETE FROM orders WHERE order_id = %d", 1+(i*13)%300))
			}
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(1500 * time.Millisecond)
	p.stop(syscall.SIGKILL)
	p = startExample(t, db, wh)
	time.Sleep(700 * time.Millisecond)
	p.stop(syscall.SIGKILL)
	p = startExample(t, db, wh)
	time.Sleep(1000 * time.Millisecond)
	close(stop)
	<-writerDone
	p.wait(t, db, wh, "after two SIGKILLs")
}

// exampleRows reads shop.orders as the example writes it: order_id, status,
// amount, updated_at (TIMESTAMP LTZ, rendered as UTC wall clock).
func exampleRows(t *testing.T, wh string) []string {
	t.Helper()
	tbl, err := lakecore.Open(context.Background(), wh, "shop", "orders")
	if err != nil {
		return nil
	}
	rows, err := tbl.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var out []string
	for _, r := range rows {
		ts := fmt.Sprint(r[3])
		if tv, ok := r[3].(types.Timestamp); ok {
			ts = tv.Time().UTC().Format("2006-01-02 15:04:05.000000")
		}
		out = append(out, fmt.Sprintf("%v|%v|%v|%s", r[0], r[1], r[2], ts))
	}
	sort.Slice(out, func(i, j int) bool { return keyLess(out[i], out[j]) })
	return out
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

// TestPgCDCToPaimonTablesFromMetadata: pg_cdc → paimon with the table
// interpolated from the `table` metadata and create_table without a schema
// or primary keys: each Postgres table becomes a Paimon primary-key table
// whose columns have the exact types of the `schema` metadata's paimon_type
// and whose key is the `pk` metadata; both equal SELECT.
func TestPgCDCToPaimonTablesFromMetadata(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(10,2), note text);
		CREATE TABLE items (order_id bigint, line int, sku varchar(20), qty smallint, price numeric(12,4), at timestamptz, tags text[],
			PRIMARY KEY (order_id, line));
		INSERT INTO orders SELECT g, 'new', g * 1.25, NULL FROM generate_series(1, 50) g;
		INSERT INTO items SELECT g % 50 + 1, g, 'sku' || g, g % 7, g / 3.0, '2024-01-02 03:04:05.123456+00', '{a,NULL}' FROM generate_series(1, 200) g`)
	wh := t.TempDir()
	startPgPipeline(t, pgInput(db, db.Name+"_slot", "  tables: [ public.orders, public.items ]\n"), fmt.Sprintf(`  warehouse: %s
  database: shop
  table: '${! @table }'
  batching: { count: 500, period: 200ms }
  create_table: { enabled: true, bucket: 2 }
`, wh))
	waitTableEqualsSelect(t, db, wh, "orders")
	db.Exec("UPDATE items SET qty = 99 WHERE line % 10 = 0")
	db.Exec("DELETE FROM items WHERE line % 9 = 0")
	itemsQuery := "SELECT order_id, line, sku, qty, price, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), array_to_string(tags, ',', 'NULL') FROM items ORDER BY order_id, line"
	want := db.QueryStrings(itemsQuery)
	sort.Strings(want)
	deadline := time.Now().Add(60 * time.Second)
	var got []string
	for {
		got = nil
		if tbl, err := lakecore.Open(context.Background(), wh, "shop", "items"); err == nil {
			rows, err := tbl.ReadAll(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				ts := r[5].(types.Timestamp).Time().UTC().Format("2006-01-02 15:04:05.000000")
				var tags []string
				for _, e := range r[6].([]any) {
					if e == nil {
						tags = append(tags, "NULL")
					} else {
						tags = append(tags, fmt.Sprint(e))
					}
				}
				got = append(got, fmt.Sprintf("%v|%v|%v|%v|%v|%s|%s", r[0], r[1], r[2], r[3], r[4], ts, strings.Join(tags, ",")))
			}
			sort.Strings(got)
			if strings.Join(got, "\n") == strings.Join(want, "\n") {
				s := tbl.Schema()
				var cols []string
				for _, f := range s.Fields {
					cols = append(cols, f.Name+" "+f.Type.String())
				}
				wantCols := "order_id BIGINT NOT NULL, line INT NOT NULL, sku VARCHAR(20), qty SMALLINT, price DECIMAL(12, 4), " +
					"at TIMESTAMP(6) WITH LOCAL TIME ZONE, tags ARRAY<STRING>"
				if strings.Join(cols, ", ") != wantCols || strings.Join(s.PrimaryKeys, ",") != "order_id,line" {
					t.Fatalf("items schema %s, keys %v; want %s, keys order_id,line", strings.Join(cols, ", "), s.PrimaryKeys, wantCols)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("items: Paimon %d rows, SELECT %d\n got %v\nwant %v", len(got), len(want), head(got), head(want))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitSlotActive waits up to 30 s until slot is active (a walsender
// streams it) or, with active false, until it is not.
func waitSlotActive(t *testing.T, db *pgtest.DB, slot string, active bool) {
	t.Helper()
	want := map[bool]string{true: "1", false: "0"}[active]
	deadline := time.Now().Add(30 * time.Second)
	for db.QueryString("SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name = '"+slot+"'") != want {
		if time.Now().After(deadline) {
			t.Fatalf("slot %s: active never became %v", slot, active)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPgCDCToastLookup: pg_cdc with toast: null under REPLICA IDENTITY
// DEFAULT into the paimon output with unchanged_columns from the
// unchanged_toast metadata. Updates that leave a large (TOASTed) value
// unchanged do not carry it; the output keeps it from the table (a point
// lookup) or from the key's earlier change in the batch (a transaction
// that changes the value and then another column, an insert then an
// update). The Paimon table equals SELECT, large values compared by MD5.
func TestPgCDCToastLookup(t *testing.T) {
	db := pgtest.New(t)
	// 12.8 kB of random hex: incompressible, so stored out of line; seed
	// makes the subquery correlated, so each row gets its own value.
	big := func(seed string) string {
		return "(SELECT string_agg(md5(random()::text || x || " + seed + "), '') FROM generate_series(1, 400) x)"
	}
	db.Exec(`CREATE TABLE docs (id bigint PRIMARY KEY, small text, big text);
		INSERT INTO docs SELECT g, 's' || g, ` + big("g") + ` FROM generate_series(1, 40) g`)
	if n := db.QueryString("SELECT count(DISTINCT big) FROM docs"); n != "40" {
		t.Fatalf("%s distinct big values, want 40", n)
	}
	wh := t.TempDir()
	startPgPipeline(t, pgInput(db, db.Name+"_slot", "  tables: [ public.docs ]\n  toast: \"null\"\n"), fmt.Sprintf(`  warehouse: %s
  database: shop
  table: docs
  unchanged_columns: '${! @unchanged_toast.or("") }'
  batching: { count: 1000, period: 100ms }
  create_table:
    enabled: true
    schema:
      - { name: id, type: BIGINT }
      - { name: small, type: STRING }
      - { name: big, type: STRING }
    primary_keys: [ id ]
    bucket: 2
`, wh))
	query := "SELECT id, small, md5(big) FROM docs ORDER BY id"
	got := func() []string {
		tbl, err := lakecore.Open(context.Background(), wh, "shop", "docs")
		if err != nil {
			return nil
		}
		rows, err := tbl.ReadAll(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			sum := "NULL"
			if s, ok := r[2].(string); ok {
				sum = fmt.Sprintf("%x", md5.Sum([]byte(s)))
			}
			out = append(out, fmt.Sprintf("%v|%v|%s", r[0], r[1], sum))
		}
		sort.Slice(out, func(i, j int) bool { return keyLess(out[i], out[j]) })
		return out
	}
	wait := func(what string) {
		t.Helper()
		want := strings.Join(db.QueryStrings(query), "\n")
		deadline := time.Now().Add(60 * time.Second)
		for strings.Join(got(), "\n") != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: Paimon\n%s\nSELECT\n%s", what, strings.Join(head(got()), "\n"), strings.Join(head(strings.Split(want, "\n")), "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	wait("after the snapshot")
	db.Exec("UPDATE docs SET small = 'u' || id WHERE id % 2 = 0") // big unchanged: looked up
	wait("after updates leaving big unchanged")
	db.Exec(`BEGIN;
		UPDATE docs SET big = ` + big("id") + ` WHERE id = 1;
		UPDATE docs SET small = 'after new big' WHERE id = 1;
		INSERT INTO docs VALUES (100, 'new', ` + big("100") + `);
		UPDATE docs SET small = 'new, updated' WHERE id = 100;
		DELETE FROM docs WHERE id = 3;
		UPDATE docs SET small = 'again' WHERE id % 5 = 0;
		COMMIT`)
	wait("after a transaction changing big and then other columns")
}
