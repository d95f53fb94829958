package write_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// BenchmarkDynamicBucketWrite writes 1,000,000 new keys (one commit of
// write-only level-0 files) into a table with 4 fixed buckets and into a
// dynamic-bucket table whose target-row-num of 250,000 makes 4 buckets,
// then restores the dynamic table's assignment in a new writer (the first
// Write of a reopened partition reads its 4 HASH files) and reports the
// rows per second of both, the restore time and the heap the restored
// index holds.
//
//	go test ./lakecore/write -run '^$' -bench DynamicBucketWrite -benchtime=1x
func BenchmarkDynamicBucketWrite(b *testing.B) {
	const total = 1_000_000
	for _, c := range []struct {
		name    string
		options map[string]string
	}{
		{"fixed-4", map[string]string{"bucket": "4", "write-only": "true"}},
		{"dynamic", map[string]string{"bucket": "-1", "dynamic-bucket.target-row-num": "250000", "write-only": "true"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ctx := context.Background()
				fio, err := storage.NewLocal(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", lakecore.TableSpec{
					Fields:      []types.DataField{f("id", types.BigIntType().NotNull()), f("name", types.StringType())},
					PrimaryKeys: []string{"id"}, Options: c.options,
				})
				if err != nil {
					b.Fatal(err)
				}
				w, err := tbl.NewKeyValueWriter(ctx)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for i := range total {
					if err := w.Write(ctx, kv.Insert, []any{int64(i), "user-" + strconv.Itoa(i%5000)}); err != nil {
						b.Fatal(err)
					}
				}
				msgs, err := w.Prepare(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tbl.NewCommitter("bench").Commit(ctx, 1, msgs); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(total)/time.Since(start).Seconds(), "rows/s")
				if c.options["bucket"] != "-1" {
					continue
				}
				w = nil
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start = time.Now()
				r, err := tbl.NewKeyValueWriter(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Write(ctx, kv.Insert, []any{int64(total), "new"}); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(time.Since(start).Milliseconds()), "restore-ms")
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapInuse-min(after.HeapInuse, before.HeapInuse))/total, "index-bytes/key")
				runtime.KeepAlive(r)
			}
		})
	}
}
