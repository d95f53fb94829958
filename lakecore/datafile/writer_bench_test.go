package datafile

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The benchmark event: a typical append-table row.
type benchEvent struct {
	ID      int64   `parquet:"id"`
	Message string  `parquet:"message,dict"`
	TS      int64   `parquet:"ts,timestamp(millisecond)"`
	Value   float64 `parquet:"value"`
	Count   int32   `parquet:"count"`
	Region  string  `parquet:"region,dict"`
}

// benchEventPlain is benchEvent without dictionary encoding.
type benchEventPlain struct {
	ID      int64   `parquet:"id"`
	Message string  `parquet:"message"`
	TS      int64   `parquet:"ts,timestamp(millisecond)"`
	Value   float64 `parquet:"value"`
	Count   int32   `parquet:"count"`
	Region  string  `parquet:"region"`
}

// benchEventOptional is benchEvent with nullable (OPTIONAL) columns, as a
// Paimon table's columns are by default.
type benchEventOptional struct {
	ID      *int64   `parquet:"id"`
	Message *string  `parquet:"message,dict"`
	TS      *int64   `parquet:"ts,timestamp(millisecond)"`
	Value   *float64 `parquet:"value"`
	Count   *int32   `parquet:"count"`
	Region  *string  `parquet:"region,dict"`
}

const benchRows = 1_000_000

func benchEvents(n int) ([]benchEvent, [][]any) {
	rng := rand.New(rand.NewPCG(1, 2))
	regions := []string{"eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1", "ap-northeast-1", "sa-east-1", "af-south-1"}
	verbs := []string{"login", "logout", "purchase", "view", "click", "search", "error", "retry"}
	events := make([]benchEvent, n)
	rows := make([][]any, n)
	base := int64(1_717_000_000_000)
	for i := range events {
		e := benchEvent{
			ID:      int64(i),
			Message: fmt.Sprintf("user %d %s item %d", rng.IntN(100_000), verbs[rng.IntN(len(verbs))], rng.IntN(10_000)),
			TS:      base + int64(i)*3 + int64(rng.IntN(3)),
			Value:   rng.Float64() * 1000,
			Count:   int32(rng.IntN(100)),
			Region:  regions[rng.IntN(len(regions))],
		}
		events[i] = e
		rows[i] = []any{e.ID, e.Message, types.Timestamp{Millis: e.TS}, e.Value, e.Count, e.Region}
	}
	return events, rows
}

func benchFields(nullable bool) []types.DataField {
	f := []types.DataField{
		wField(0, "id", types.BigIntType()),
		wField(1, "message", types.StringType()),
		wField(2, "ts", types.TimestampType(3)),
		wField(3, "value", types.DoubleType()),
		wField(4, "count", types.IntType()),
		wField(5, "region", types.StringType()),
	}
	if !nullable {
		for i := range f {
			f[i].Type = f[i].Type.NotNull()
		}
	}
	return f
}

type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkWriterEvents writes 1M event rows through the table writer
// (validation, shredding, stats, Java layout), zstd level 1 and, to show
// the writer's own cost, uncompressed.
func BenchmarkWriterEvents(b *testing.B) {
	_, rows := benchEvents(benchRows)
	for _, codec := range []string{"zstd", "none"} {
		for _, nullable := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/nullable=%t", codec, nullable), func(b *testing.B) {
				fields := benchFields(nullable)
				benchWrites(b, func(out io.Writer) error { return writeAll(out, fields, WriterOptions{Compression: codec}, rows) })
			})
		}
	}
}

// BenchmarkRawParquetGoEvents writes the same rows with parquet-go's
// GenericWriter[struct] directly (zstd level 1, v1 pages), with dictionary
// strings like the table writer and with parquet-go's default encodings:
// the baseline the table writer is measured against.
func BenchmarkRawParquetGoEvents(b *testing.B) {
	events, _ := benchEvents(benchRows)
	plain := make([]benchEventPlain, len(events))
	for i, e := range events {
		plain[i] = benchEventPlain(e)
	}
	optional := make([]benchEventOptional, len(events))
	for i := range events {
		e := &events[i]
		optional[i] = benchEventOptional{&e.ID, &e.Message, &e.TS, &e.Value, &e.Count, &e.Region}
	}
	for _, codec := range []string{"zstd", "none"} {
		var c compress.Codec = &zstd.Codec{Level: zstd.SpeedFastest}
		if codec == "none" {
			c = &uncompressed.Codec{}
		}
		b.Run(codec+"/dict", func(b *testing.B) { benchRaw(b, events, c) })
		b.Run(codec+"/dict-optional", func(b *testing.B) { benchRaw(b, optional, c) })
		b.Run(codec+"/default", func(b *testing.B) { benchRaw(b, plain, c) })
	}
}

func benchRaw[T any](b *testing.B, events []T, codec compress.Codec) {
	benchWrites(b, func(out io.Writer) error { return writeRaw(out, events, codec) })
}

// benchWrites times b.N runs of write, each into a byte-counting discard,
// and reports the row rates and the size of one file.
func benchWrites(b *testing.B, write func(out io.Writer) error) {
	var size int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for range b.N {
		out := &countingDiscard{}
		if err := write(out); err != nil {
			b.Fatal(err)
		}
		size = out.n
	}
	reportRowRates(b, cputime.Process()-cpu0, size)
}

func reportRowRates(b *testing.B, cpu time.Duration, size int64) {
	rows := float64(benchRows) * float64(b.N)
	b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(rows/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(float64(size), "file-bytes")
}

// BenchmarkWriterVsRaw alternates the table writer and raw parquet-go on
// the same 1M rows, round by round, and reports the median ratio of their
// CPU throughput: on a shared machine interleaving cancels out load drift.
// nullable=true compares against parquet-go with OPTIONAL columns, false
// against REQUIRED ones; both use dictionary strings and zstd level 1, and
// each keeps its codec across rounds, as a TableWriter keeps its
// Compressor across files (a new zstd encoder per 1M-row file costs the
// table writer about 8 % here).
func BenchmarkWriterVsRaw(b *testing.B) {
	events, rows := benchEvents(benchRows)
	optional := make([]benchEventOptional, len(events))
	for i := range events {
		e := &events[i]
		optional[i] = benchEventOptional{&e.ID, &e.Message, &e.TS, &e.Value, &e.Count, &e.Region}
	}
	codec := &zstd.Codec{Level: zstd.SpeedFastest}
	comp, err := NewCompressor("zstd", 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, nullable := range []bool{true, false} {
		b.Run(fmt.Sprintf("nullable=%t", nullable), func(b *testing.B) {
			fields := benchFields(nullable)
			var ratios, ours, raw []float64
			for range b.N {
				c0 := cputime.Process()
				if err := writeAll(&countingDiscard{}, fields, WriterOptions{Compressor: comp}, rows); err != nil {
					b.Fatal(err)
				}
				c1 := cputime.Process()
				var rawErr error
				if nullable {
					rawErr = writeRaw(&countingDiscard{}, optional, codec)
				} else {
					rawErr = writeRaw(&countingDiscard{}, events, codec)
				}
				if rawErr != nil {
					b.Fatal(rawErr)
				}
				c2 := cputime.Process()
				o, r := float64(benchRows)/(c1-c0).Seconds(), float64(benchRows)/(c2-c1).Seconds()
				ours, raw, ratios = append(ours, o), append(raw, r), append(ratios, o/r)
			}
			b.ReportMetric(median(ours), "writer-rows/cpu-s")
			b.ReportMetric(median(raw), "raw-rows/cpu-s")
			b.ReportMetric(median(ratios), "ratio")
		})
	}
}

// writeRaw writes events with parquet-go's GenericWriter as the table
// writer configures it: v1 pages without statistics, the same dictionary
// limit.
func writeRaw[T any](out io.Writer, events []T, codec compress.Codec) error {
	w := parquet.NewGenericWriter[T](out,
		parquet.Compression(codec),
		parquet.DataPageVersion(1),
		parquet.DataPageStatistics(false),
		parquet.DictionaryMaxBytes(dictionaryMaxBytes),
	)
	for i := 0; i < len(events); i += 1024 {
		if _, err := w.Write(events[i:min(i+1024, len(events))]); err != nil {
			return err
		}
	}
	return w.Close()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkDictionaryPays: the first-page dictionary decision over one
// column of dictionaryProbeRows values, unique and repeating.
func BenchmarkDictionaryPays(b *testing.B) {
	cols := map[string][]parquet.Value{}
	for _, name := range []string{"unique-int64", "5000-int64", "unique-string", "5000-string"} {
		vals := make([]parquet.Value, dictionaryProbeRows)
		for i := range vals {
			k := i * 7919
			if name[0] == '5' {
				k %= 5000
			}
			if name[len(name)-1] == 'g' {
				vals[i] = parquet.ByteArrayValue(fmt.Appendf(nil, "user-%08d", k))
			} else {
				vals[i] = parquet.Int64Value(int64(k))
			}
		}
		cols[name] = vals
	}
	for _, name := range []string{"unique-int64", "5000-int64", "unique-string", "5000-string"} {
		b.Run(name, func(b *testing.B) {
			var set distinctSet
			cpu := cputime.Process()
			for b.Loop() {
				dictionaryPays(&set, cols[name])
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
