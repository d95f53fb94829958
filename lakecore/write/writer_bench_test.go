package write_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/internal/paymentevent"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// benchFields is a typical event row: id, a name, a value, a time, a flag.
func benchFields() []types.DataField {
	return []types.DataField{
		f("id", types.BigIntType()),
		f("name", types.StringType()),
		f("v", types.DoubleType()),
		f("ts", types.TimestampType(3)),
		f("flag", types.BooleanType()),
	}
}

const benchDistinct = 1 << 16

func benchRows() [][]any {
	rows := make([][]any, benchDistinct)
	for i := range rows {
		rows[i] = []any{int64(i), "user-" + strconv.Itoa(i%5000), float64(i) * 0.37,
			types.Timestamp{Millis: 1_717_000_000_000 + int64(i)*17}, i%3 == 0}
	}
	return rows
}

// parquetRow is the same row for parquet-go's generic writer.
type parquetRow struct {
	ID   *int64   `parquet:"id,optional"`
	Name *string  `parquet:"name,optional,dict"`
	V    *float64 `parquet:"v,optional"`
	TS   *int64   `parquet:"ts,optional,timestamp(millisecond)"`
	Flag *bool    `parquet:"flag,optional"`
}

// BenchmarkWriteRows compares the rows/s of a TableWriter (routing, the
// Paimon-layout Parquet writer with stats, manifest metadata) with
// parquet-go's generic writer writing the same rows to one file directly,
// both zstd level 1 to local disk. ns/op is per row.
func BenchmarkWriteRows(b *testing.B) {
	rows := benchRows()
	b.Run("TableWriter", func(b *testing.B) {
		benchTableWriter(b, newTestTable(b, benchFields(), nil, nil), rows)
	})
	b.Run("TableWriter100Partitions", func(b *testing.B) {
		prows := make([][]any, benchDistinct)
		for i, r := range rows {
			prows[i] = append(append([]any(nil), r...), int32(i%100))
		}
		benchTableWriter(b, newTestTable(b, append(benchFields(), f("p", types.IntType())), []string{"p"}, nil), prows)
	})
	b.Run("ParquetGo", func(b *testing.B) {
		prow := make([]parquetRow, benchDistinct)
		for i, r := range rows {
			id, name, v, ts, flag := r[0].(int64), r[1].(string), r[2].(float64), r[3].(types.Timestamp).Millis, r[4].(bool)
			prow[i] = parquetRow{&id, &name, &v, &ts, &flag}
		}
		out, err := os.Create(filepath.Join(b.TempDir(), "direct.parquet"))
		if err != nil {
			b.Fatal(err)
		}
		defer out.Close()
		pw := parquet.NewGenericWriter[parquetRow](out, parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest}))
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cputime.Process()
		for i := 0; i < b.N; {
			n := min(b.N-i, 1024, benchDistinct-i%benchDistinct)
			if _, err := pw.Write(prow[i%benchDistinct : i%benchDistinct+n]); err != nil {
				b.Fatal(err)
			}
			i += n
		}
		if err := pw.Close(); err != nil {
			b.Fatal(err)
		}
		reportRates(b, cputime.Process()-cpu)
	})
}

// benchTableWriter writes b.N rows (cycling through rows) with one
// TableWriter and prepares once.
func benchTableWriter(b *testing.B, tt *testTable, rows [][]any) {
	ctx := context.Background()
	w, err := tt.tb.NewWriter(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		if err := w.Write(ctx, rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Prepare(ctx); err != nil {
		b.Fatal(err)
	}
	reportRates(b, cputime.Process()-cpu)
}

// reportRates reports rows per second of wall time and of process CPU
// time: on a loaded machine the CPU rate is the one to compare.
func reportRates(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "rows/cpu-s")
}

// BenchmarkWritePeakMemory writes BP_BENCH_ROWS rows (default 10,000,000)
// into 100 partitions with one TableWriter and one Prepare at the end, and
// reports the peak Go heap in use (sampled) and the process's peak RSS.
//
//	go test ./lakecore/write -run '^$' -bench WritePeakMemory -benchtime=1x
func BenchmarkWritePeakMemory(b *testing.B) {
	total := 10_000_000
	if v := os.Getenv("BP_BENCH_ROWS"); v != "" {
		total, _ = strconv.Atoi(v)
	}
	const partitions = 100
	for b.Loop() {
		fields := append(benchFields(), f("p", types.IntType()))
		tt := newTestTable(b, fields, []string{"p"}, nil)
		ctx := context.Background()
		w, err := tt.tb.NewWriter(ctx)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var peak uint64
		var mu sync.Mutex
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			var ms runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					runtime.ReadMemStats(&ms)
					mu.Lock()
					peak = max(peak, ms.HeapInuse)
					mu.Unlock()
				}
			}
		}()
		start := time.Now()
		row := make([]any, len(fields))
		for i := 0; i < total; i++ {
			row[0], row[1], row[2] = int64(i), "user-"+strconv.Itoa(i%5000), float64(i)*0.37
			row[3], row[4], row[5] = types.Timestamp{Millis: 1_717_000_000_000 + int64(i)}, i%3 == 0, int32(i%partitions)
			if err := w.Write(ctx, row); err != nil {
				b.Fatal(err)
			}
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		close(stop)
		<-done
		if len(msgs) != partitions {
			b.Fatalf("%d messages", len(msgs))
		}
		var files int
		for _, m := range msgs {
			files += len(m.NewFiles)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
		b.ReportMetric(float64(total)/elapsed.Seconds(), "rows/s")
		b.Logf("%d rows into %d partitions (%d files, row group %d MiB) in %v", total, partitions, files,
			write.DefaultRowGroupSize>>20, elapsed.Round(time.Millisecond))
	}
}

// peakRSS is VmHWM of /proc/self/status in bytes, 0 where unavailable.
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkWriteSmallFiles writes payment rows (internal/paymentevent,
// the report's) into 100 partitions with a new TableWriter and one
// Prepare per commit of 100,000 or 250,000 rows, so every file holds 1,000
// or 2,500 rows and 100 files are open at once: a streaming writer's
// small-file case. b.N counts rows (ns/op is per row; compare rows/cpu-s):
//
//	go test ./lakecore/write -run '^$' -bench WriteSmallFiles -benchtime=1000000x
func BenchmarkWriteSmallFiles(b *testing.B) {
	const partitions = 100
	for _, fileRows := range []int{1000, 2500} {
		b.Run(fmt.Sprintf("%dRowFiles", fileRows), func(b *testing.B) {
			tt := newTestTable(b, paymentevent.Fields(), []string{"dt"}, nil)
			ctx := context.Background()
			perCommit := fileRows * partitions
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cputime.Process()
			for n := 0; n < b.N; {
				w, err := tt.tb.NewWriter(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for k := 0; k < perCommit && n < b.N; k++ {
					n++
					row := paymentevent.Row(int64(n), partitions)
					if err := w.Write(ctx, row); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Prepare(ctx); err != nil {
					b.Fatal(err)
				}
			}
			reportRates(b, cputime.Process()-cpu)
		})
	}
}
