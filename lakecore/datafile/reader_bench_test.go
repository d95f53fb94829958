package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// rdBenchEvent is a typical event row: ids, a low-cardinality type and country,
// a millisecond timestamp, an optional amount, a payload string.
type rdBenchEvent struct {
	EventID   string    `parquet:"event_id"`
	UserID    int64     `parquet:"user_id"`
	EventType string    `parquet:"event_type,dict"`
	Ts        time.Time `parquet:"ts,timestamp(millisecond)"`
	Amount    *float64  `parquet:"amount,optional"`
	Country   *string   `parquet:"country,optional,dict"`
	Payload   string    `parquet:"payload"`
	Count     int32     `parquet:"count"`
	Flag      bool      `parquet:"flag"`
}

func rdBenchEventFields() []types.DataField {
	T := types.MustParse
	return []types.DataField{
		rdField(0, "event_id", T("STRING NOT NULL")),
		rdField(1, "user_id", T("BIGINT NOT NULL")),
		rdField(2, "event_type", T("STRING NOT NULL")),
		rdField(3, "ts", T("TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL")),
		rdField(4, "amount", T("DOUBLE")),
		rdField(5, "country", T("STRING")),
		rdField(6, "payload", T("STRING NOT NULL")),
		rdField(7, "count", T("INT NOT NULL")),
		rdField(8, "flag", T("BOOLEAN NOT NULL")),
	}
}

// rdWriteBenchEvents writes n events with zstd, as Java Paimon compresses by
// default, in row groups of about 128 MiB (parquet-go's default page size).
func rdWriteBenchEvents(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "events.parquet")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := parquet.NewGenericWriter[rdBenchEvent](f, parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest}))
	types := []string{"click", "view", "purchase", "signup", "logout", "search"}
	countries := []string{"DE", "FR", "US", "JP", "BR"}
	batch := make([]rdBenchEvent, 0, 4096)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		e := rdBenchEvent{
			EventID:   fmt.Sprintf("%08x-%04x-4000-8000-%012x", i*2654435761, i%65536, i*40503),
			UserID:    int64(i*7919) % 1000003,
			EventType: types[i%len(types)],
			Ts:        base.Add(time.Duration(i) * 37 * time.Millisecond),
			Payload:   fmt.Sprintf(`{"page":"/p/%d","ref":"r%d","v":%d}`, i%997, i%31, i),
			Count:     int32(i % 1000),
			Flag:      i%3 == 0,
		}
		if i%10 != 0 {
			a := float64(i%100000) / 100
			e.Amount = &a
		}
		if i%20 != 0 {
			e.Country = &countries[i%len(countries)]
		}
		batch = append(batch, e)
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := w.Write(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// rdCPUTime is the process's user+system CPU time: on a shared machine it
// compares implementations more steadily than wall time.
func rdCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRows adds rows/s (wall) and cpu-ms/op to a benchmark.
func reportRows(b *testing.B, rows int, cpuStart time.Duration) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rdCPUTime()-cpuStart)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkReadEvents reads a 1M-row event file with NewReader+Next
// ("lakecore", every column as []any rows) and with parquet-go's
// GenericReader[rdBenchEvent] (the target: lakecore >= 0.7x its rows/s).
func BenchmarkReadEvents(b *testing.B) {
	const rows = 1 << 20
	path := rdWriteBenchEvents(b, rows)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	fields := rdBenchEventFields()
	ctx := context.Background()

	b.Run("lakecore", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		cpu := rdCPUTime()
		for b.Loop() {
			f := rdOpen(b, filepath.Dir(path), filepath.Base(path))
			r, err := NewReader(f, fields, fields, ReaderOptions{})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				batch, err := r.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n += len(batch)
			}
			r.Close()
			if n != rows {
				b.Fatalf("read %d rows", n)
			}
		}
		reportRows(b, rows, cpu)
	})

	b.Run("lakecore-projection-3", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		cpu := rdCPUTime()
		for b.Loop() {
			f := rdOpen(b, filepath.Dir(path), filepath.Base(path))
			r, err := NewReader(f, fields, fields, ReaderOptions{Projection: []int{1, 3, 4}})
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := r.Next(ctx); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
			r.Close()
		}
		reportRows(b, rows, cpu)
	})

	b.Run("parquet-go-generic", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		cpu := rdCPUTime()
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			pf, err := parquet.OpenFile(f, st.Size())
			if err != nil {
				b.Fatal(err)
			}
			r := parquet.NewGenericReader[rdBenchEvent](pf)
			buf := make([]rdBenchEvent, 1024)
			n := 0
			for {
				k, err := r.Read(buf)
				n += k
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			r.Close()
			f.Close()
			if n != rows {
				b.Fatalf("read %d rows", n)
			}
		}
		reportRows(b, rows, cpu)
	})
}
