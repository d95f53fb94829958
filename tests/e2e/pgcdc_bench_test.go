package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
)

// BenchmarkPgCDCToPaimon measures pg_cdc into a deduplicate primary-key
// table (4 buckets) end to end, with Postgres on this machine, against the
// decoding limit measured beside it in the same run:
//
//	go test ./tests/e2e -run '^$' -bench PgCDCToPaimon -benchtime 1x   # PG_BENCH_ROWS (default 200,000)
//
// PG_BENCH_INPUT adds pg_cdc fields (YAML lines, e.g.
// "  snapshot_batch_size: 10000") to compare settings.
//
// Each run does the same work twice on a fresh copy of the table: first
// into `drop` (the decoding limit: pg_cdc and Benthos with nothing behind
// them; metrics prefixed drop-), then into the paimon output.
// snapshot-rows/s: the initial snapshot of the guide's orders table, from
// the pipeline's start until the output has taken every row;
// stream-changes/s: as many updates and deletes (5:1, in transactions of
// 10,000 changes) from the first statement until every change is taken;
// freshness p50/p95-ms (paimon only): single-row updates, one every 50 ms,
// from the Postgres commit to the row being visible in Paimon (a lakecore
// lookup of the key every 10 ms), with 100 ms batching. of-limit is the
// paimon rate over drop's. Goals (issue #17, 2 cores): snapshot >= 150,000
// rows/s, stream >= 80,000 changes/s, freshness p95 < 1 s.
//
// The CPU figures are per row (change) of each phase: go-us/row is this
// process (pg_cdc, Benthos, the paimon output, lakecore), pg-us/row the
// Postgres cluster's processes (backends, walsender); on a shared machine
// they are steadier than the rates.
func BenchmarkPgCDCToPaimon(b *testing.B) {
	n := envInt(b, "PG_BENCH_ROWS", 200_000)
	for b.Loop() {
		limit := pgBenchRun(b, n, "drop")
		got := pgBenchRun(b, n, "paimon")
		b.ReportMetric(got.snapshot/limit.snapshot, "snapshot-of-limit")
		b.ReportMetric(got.stream/limit.stream, "stream-of-limit")
	}
}

// pgBenchRates are the rates of one pgBenchRun.
type pgBenchRates struct{ snapshot, stream float64 }

// pgBenchRun runs BenchmarkPgCDCToPaimon's phases once into sink ("drop"
// or "paimon") on a fresh orders table of n rows and reports its metrics,
// prefixed "drop-" for drop.
func pgBenchRun(b *testing.B, n int, sink string) pgBenchRates {
	db := pgtest.New(b)
	db.Exec(fmt.Sprintf(`CREATE TABLE orders (order_id bigint PRIMARY KEY, dt date NOT NULL, status text NOT NULL,
		amount numeric(10,2), updated_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO orders SELECT g, date '2026-12-01' + (g %% 7), 'new', (g %% 10000) * 1.25, now() FROM generate_series(1, %d) g`, n))
	prefix := ""
	if sink == "drop" {
		prefix = "drop-"
	}
	wh := b.TempDir()
	start, goCPU, pgCPU := time.Now(), cputime.Process(), serverCPU(b, db.Cluster.Dir)
	reportCPU := func(what string) {
		b.ReportMetric(float64((cputime.Process()-goCPU).Microseconds())/float64(n), prefix+what+"-go-us/row")
		b.ReportMetric(float64((serverCPU(b, db.Cluster.Dir)-pgCPU).Microseconds())/float64(n), prefix+what+"-pg-us/row")
		goCPU, pgCPU = cputime.Process(), serverCPU(b, db.Cluster.Dir)
	}
	input := pgInput(db, db.Name+"_slot", "  tables: [ public.orders ]\n"+os.Getenv("PG_BENCH_INPUT")+"\n")
	var p *pgPipeline
	var taken func() float64
	if sink == "drop" {
		p = startPgPipelineTo(b, input, "drop: {}\n")
		taken = func() float64 { return p.metrics.get(b, "output_sent") }
	} else {
		p = startPgPipeline(b, input, fmt.Sprintf(`  warehouse: %s
  database: shop
  table: orders
  row_kind: '${! @operation }'
  source_position: { stream: pg, offset: '${! @lsn_position }' }
  batching: { count: 10000, period: 100ms }
  maintenance: { enabled: false }
  create_table:
    enabled: true
    schema:
      - { name: order_id, type: BIGINT }
      - { name: dt, type: DATE NOT NULL }
      - { name: status, type: STRING NOT NULL }
      - { name: amount, type: "DECIMAL(10, 2)" }
      - { name: updated_at, type: TIMESTAMP(6) WITH LOCAL TIME ZONE NOT NULL }
    primary_keys: [ order_id ]
    bucket: 4
`, wh))
		taken = func() float64 { return p.metrics.get(b, "paimon_rows_written") }
	}
	waitRows := func(want float64, what string) {
		deadline := time.Now().Add(10 * time.Minute)
		for taken() < want {
			if time.Now().After(deadline) {
				b.Fatalf("%s into %s: %.0f of %.0f rows taken after 10 minutes", what, sink, taken(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var rates pgBenchRates
	waitRows(float64(n), "snapshot")
	rates.snapshot = float64(n) / time.Since(start).Seconds()
	b.ReportMetric(rates.snapshot, prefix+"snapshot-rows/s")
	reportCPU("snapshot")

	start = time.Now()
	for from := 1; from <= n; from += 10_000 {
		to := min(from+10_000-1, n)
		db.Exec(fmt.Sprintf(`BEGIN; UPDATE orders SET status = 'paid', amount = amount + 1, updated_at = now()
			WHERE order_id BETWEEN %d AND %d AND order_id %% 6 <> 0;
			DELETE FROM orders WHERE order_id BETWEEN %d AND %d AND order_id %% 6 = 0; COMMIT`, from, to, from, to))
	}
	waitRows(float64(2*n), "stream")
	rates.stream = float64(n) / time.Since(start).Seconds()
	b.ReportMetric(rates.stream, prefix+"stream-changes/s")
	reportCPU("stream")
	if sink == "drop" {
		p.stop()
		return rates
	}

	// Freshness: a single-row update every 50 ms, each until visible.
	ctx := context.Background()
	tbl, err := lakecore.Open(ctx, wh, "shop", "orders")
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	for i := range 60 {
		id := int64(1 + i*7%n)
		if id%6 == 0 {
			id++
		}
		status := fmt.Sprintf("fresh-%d", i)
		db.Exec(fmt.Sprintf("UPDATE orders SET status = '%s' WHERE order_id = %d", status, id))
		committed := time.Now()
		for {
			if err := tbl.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
			row, err := tbl.Lookup(ctx, 0, []any{id})
			if err != nil {
				b.Fatal(err)
			}
			if row != nil && row[2] == status {
				lat = append(lat, time.Since(committed))
				break
			}
			if time.Since(committed) > time.Minute {
				b.Fatalf("update of %d not visible after a minute", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "fresh-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "fresh-p95-ms")
	p.stop()
	return rates
}

// serverCPU is the CPU time of a Postgres cluster: the postmaster, its
// live children and the children it has reaped (Linux /proc; zero
// elsewhere).
func serverCPU(tb testing.TB, dataDir string) time.Duration {
	pidFile, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		tb.Fatal(err)
	}
	pm := strings.SplitN(string(pidFile), "\n", 2)[0]
	// stat fields after the command: state(3) ppid(4) ... utime(14)
	// stime(15) cutime(16) cstime(17), in clock ticks (100 a second).
	stat := func(pid string) (ppid string, self, children int64) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return "", 0, 0
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		n := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
		return f[1], n(14) + n(15), n(16) + n(17)
	}
	_, self, reaped := stat(pm)
	ticks := self + reaped
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if ppid, self, _ := stat(p.Name()); ppid == pm {
			ticks += self
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
