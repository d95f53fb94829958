package pgcdc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

const benchRows = 100000

const benchDDL = `CREATE TABLE bench (id bigint PRIMARY KEY, a int, b text, c numeric(12,2), d timestamptz);`

// drain reads and acks n messages from in (the decoding limit: no output
// behind it) and returns how long that took.
func drain(b *testing.B, in *Input, n int) time.Duration {
	b.Helper()
	start := time.Now()
	got := 0
	ctx := context.Background()
	for got < n {
		batch, ack, err := in.ReadBatch(ctx)
		if err != nil {
			b.Fatalf("after %d rows: %v", got, err)
		}
		got += len(batch)
		_ = ack(ctx, nil)
	}
	return time.Since(start)
}

// BenchmarkSnapshot: 100 000 rows read by 2 snapshot workers (initial_only).
func BenchmarkSnapshot(b *testing.B) {
	db := pgtest.New(b)
	db.Exec(benchDDL + fmt.Sprintf("INSERT INTO bench SELECT g, g, md5(g::text), g * 1.01, now() FROM generate_series(1, %d) g", benchRows))
	var total time.Duration
	for i := 0; i < b.N; i++ {
		in := newInput(b, baseYAML(db, "tables: [ public.bench ]\nsnapshot: initial_only\nsnapshot_chunk_pages: 256\n"))
		start := time.Now()
		if err := in.Connect(context.Background()); err != nil {
			b.Fatal(err)
		}
		drain(b, in, benchRows)
		total += time.Since(start)
		_ = in.Close(context.Background())
	}
	b.ReportMetric(float64(benchRows*b.N)/total.Seconds(), "rows/s")
}

// BenchmarkStream: 100 000 inserted rows (10 transactions of 10 000)
// decoded from the slot after they were written.
func BenchmarkStream(b *testing.B) {
	db := pgtest.New(b)
	db.Exec(benchDDL)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		yaml := fmt.Sprintf("dsn: %s\nslot_name: %s_bench%d\nheartbeat_interval: 0s\ntables: [ public.bench ]\nsnapshot: never\n", db.DSN, db.Name, i)
		in := newInput(b, yaml)
		if err := in.Connect(context.Background()); err != nil { // creates the slot
			b.Fatal(err)
		}
		_ = in.Close(context.Background())
		db.Exec("TRUNCATE bench")
		for k := 0; k < 10; k++ {
			db.Exec(fmt.Sprintf("INSERT INTO bench SELECT g, g, md5(g::text), g * 1.01, now() FROM generate_series(%d, %d) g", k*10000+1, (k+1)*10000))
		}
		in = newInput(b, yaml+"truncate: ignore\n")
		start := time.Now()
		if err := in.Connect(context.Background()); err != nil {
			b.Fatal(err)
		}
		drain(b, in, benchRows)
		total += time.Since(start)
		_ = in.Close(context.Background())
	}
	b.ReportMetric(float64(benchRows*b.N)/total.Seconds(), "rows/s")
}
