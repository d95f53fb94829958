package paimon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// benchEvent is a typical event row, as parquet-go reads it back from the
// table's data files.
type benchEvent struct {
	EventID   string    `parquet:"event_id"`
	UserID    int64     `parquet:"user_id"`
	EventType string    `parquet:"event_type"`
	Ts        time.Time `parquet:"ts,timestamp(millisecond)"`
	Amount    *float64  `parquet:"amount,optional"`
	Country   *string   `parquet:"country,optional"`
	Payload   string    `parquet:"payload"`
	Count     int32     `parquet:"count"`
	Flag      bool      `parquet:"flag"`
}

const benchSchema = "ROW<event_id STRING NOT NULL, user_id BIGINT NOT NULL, event_type STRING NOT NULL, " +
	"ts TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL, amount DOUBLE, country STRING, payload STRING NOT NULL, " +
	"count INT NOT NULL, flag BOOLEAN NOT NULL>"

// writeBenchTable writes snapshots x perSnapshot event rows into a new
// unpartitioned append table and returns the warehouse.
func writeBenchTable(b *testing.B, snapshots, perSnapshot int) string {
	b.Helper()
	ctx := context.Background()
	wh := b.TempDir()
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		b.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "default", "events", lakecore.TableSpec{Fields: types.MustParse(benchSchema).Fields})
	if err != nil {
		b.Fatal(err)
	}
	kinds := []string{"click", "view", "purchase", "signup", "logout", "search"}
	countries := []string{"DE", "FR", "US", "JP", "BR"}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	committer := tbl.NewCommitter("bench")
	i := 0
	for s := range snapshots {
		w, err := tbl.NewWriter(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for range perSnapshot {
			var amount, country any
			if i%10 != 0 {
				amount = float64(i%100000) / 100
			}
			if i%20 != 0 {
				country = countries[i%len(countries)]
			}
			row := []any{fmt.Sprintf("%08x-%04x-4000-8000-%012x", i*2654435761, i%65536, i*40503), int64(i*7919) % 1000003,
				kinds[i%len(kinds)], types.Timestamp{Millis: base + int64(i)*37}, amount, country,
				fmt.Sprintf(`{"page":"/p/%d","ref":"r%d","v":%d}`, i%997, i%31, i), int32(i % 1000), i%3 == 0}
			if err := w.Write(ctx, row); err != nil {
				b.Fatal(err)
			}
			i++
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := committer.Commit(ctx, int64(s+1), msgs); err != nil {
			b.Fatal(err)
		}
	}
	return wh
}

func reportRows(b *testing.B, rows int, cpuStart time.Duration) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows)*float64(b.N)/(float64(cputime.Process()-cpuStart)/1e9), "rows/cpu-s")
}

// tailOnce reads the whole table through the paimon input without Benthos
// (Connect, then ReadBatch and ack until ErrEndOfInput) and returns the rows.
func tailOnce(b *testing.B, wh string) int { return tailWith(b, wh, "", false) }

// tailFormat is tailOnce with message_format format; with write, each
// message's bytes are taken as an output that writes messages out (file,
// kafka, ...) takes them: for a structured message, its JSON encoding.
func tailFormat(b *testing.B, wh string, format MessageFormat, write bool) int {
	return tailWith(b, wh, "message_format: "+string(format)+"\n", write)
}

// tailWith is tailFormat with the input's fields extra (YAML lines).
func tailWith(b *testing.B, wh, extra string, write bool) int {
	ctx := context.Background()
	conf, err := ConfigSpec().ParseYAML(fmt.Sprintf("warehouse: %s\ntable: events\nscan_mode: from-snapshot\nscan_snapshot_id: 1\nbounded: true\n%s", wh, extra), nil)
	if err != nil {
		b.Fatal(err)
	}
	c, err := ParseConfig(conf)
	if err != nil {
		b.Fatal(err)
	}
	in := New(c, service.MockResources())
	if err := in.Connect(ctx); err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		batch, ack, err := in.ReadBatch(ctx)
		if errors.Is(err, service.ErrEndOfInput) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if write {
			for _, m := range batch {
				if raw, err := m.AsBytes(); err != nil || len(raw) == 0 {
					b.Fatalf("message bytes: %q, %v", raw, err)
				}
			}
		}
		n += len(batch)
		_ = ack(ctx, nil)
	}
	_ = in.Close(ctx)
	return n
}

// tableReadOnce reads the table with lakecore's stream scanner and split
// reader alone (rows as []any).
func tableReadOnce(b *testing.B, wh string) int {
	ctx := context.Background()
	tbl, err := lakecore.Open(ctx, wh, "default", "events")
	if err != nil {
		b.Fatal(err)
	}
	s := tbl.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1, Bounded: true})
	tr, err := tbl.NewRead(nil)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		plan, err := s.Next(ctx)
		if errors.Is(err, scan.ErrEndOfScan) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		for _, sp := range plan.Splits {
			it, err := tr.Open(ctx, sp)
			if err != nil {
				b.Fatal(err)
			}
			for {
				next, err := it.Next(ctx)
				batch := next.Rows
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n += len(batch)
			}
			it.Close()
		}
	}
}

// dataFiles lists the table's Parquet files.
func dataFiles(b *testing.B, wh string) []string {
	var files []string
	err := filepath.WalkDir(filepath.Join(wh, "default.db", "events"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return files
}

// parquetGoOnce reads the files with parquet-go's GenericReader into
// structs, the baseline; each, when not nil, gets every batch read with its
// file and the file position of its first row.
func parquetGoOnce(b *testing.B, files []string, each func(file string, pos int64, events []benchEvent)) int {
	n := 0
	buf := make([]benchEvent, 1024)
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			b.Fatal(err)
		}
		r := parquet.NewGenericReader[benchEvent](pf)
		var pos int64
		for {
			k, err := r.Read(buf)
			if each != nil {
				each(p, pos, buf[:k])
			}
			pos += int64(k)
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
	}
	return n
}

// eventMessages builds, for each event, the message the input emits
// (object of the nine columns with the same value forms, seven metadata
// values): with parquetGoOnce, the cost of the message shape itself,
// single-threaded.
func eventMessages(file string, pos int64, events []benchEvent) {
	for _, e := range events {
		obj := make(map[string]any, 9)
		obj["event_id"], obj["user_id"], obj["event_type"] = e.EventID, e.UserID, e.EventType
		obj["ts"] = e.Ts.UTC().Format("2006-01-02T15:04:05.000Z")
		if e.Amount != nil {
			obj["amount"] = *e.Amount
		} else {
			obj["amount"] = nil
		}
		if e.Country != nil {
			obj["country"] = *e.Country
		} else {
			obj["country"] = nil
		}
		obj["payload"], obj["count"], obj["flag"] = e.Payload, int64(e.Count), e.Flag
		msg := service.NewMessage(nil)
		msg.SetStructuredMut(obj)
		msg.MetaSetMut("paimon_snapshot_id", int64(1))
		msg.MetaSetMut("paimon_commit_kind", "APPEND")
		msg.MetaSetMut("paimon_commit_time", "2025-01-01T00:00:00.000Z")
		msg.MetaSetMut("paimon_partition", "")
		msg.MetaSetMut("paimon_bucket", int64(0))
		msg.MetaSetMut("paimon_file", file)
		msg.MetaSetMut("paimon_row", pos)
		pos++
	}
}

const benchSnapshots, benchPerSnapshot = 10, 50000

// BenchmarkTail tails a table of 10 snapshots x 50,000 event rows:
//
//   - input: the paimon input end to end without Benthos: planning,
//     reading, and one structured message with seven metadata values per
//     row (rendered by one worker per CPU);
//   - input-bare, input-json, input-json-bare: the same with
//     metadata_keys: [] (no metadata), with message_format: json, and with
//     both;
//   - tableread: lakecore's split reader alone (rows as []any);
//   - parquet-go: parquet-go's GenericReader reading the same data files
//     into structs, the baseline (target: input >= 0.7x its rows/s).
//
// On a shared machine compare with BenchmarkTailRatio, which alternates
// the two in one run.
func BenchmarkTail(b *testing.B) {
	const rows = benchSnapshots * benchPerSnapshot
	wh := writeBenchTable(b, benchSnapshots, benchPerSnapshot)
	files := dataFiles(b, wh)
	for _, c := range []struct {
		name string
		read func() int
	}{
		{"input", func() int { return tailOnce(b, wh) }},
		{"input-bare", func() int { return tailWith(b, wh, "metadata_keys: []\n", false) }},
		{"input-json", func() int { return tailFormat(b, wh, MessageFormatJSON, false) }},
		{"input-json-bare", func() int { return tailWith(b, wh, "message_format: json\nmetadata_keys: []\n", false) }},
		{"tableread", func() int { return tableReadOnce(b, wh) }},
		{"parquet-go", func() int { return parquetGoOnce(b, files, nil) }},
		{"parquet-go-messages", func() int { return parquetGoOnce(b, files, eventMessages) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				if n := c.read(); n != rows {
					b.Fatalf("read %d rows, want %d", n, rows)
				}
			}
			reportRows(b, rows, cpu)
		})
	}
}

// BenchmarkTailRatio alternates the input and parquet-go over the same
// files, once each per iteration (run with -benchtime 5x or more), and
// reports the medians of their rows/s and the ratios input/parquet-go of
// wall-clock throughput and of CPU time per row; cpu-ratio-same-messages
// compares with parquet-go followed by building the input's messages;
// json-wall-ratio and json-cpu-ratio are the input's with message_format:
// json (a third read per iteration).
func BenchmarkTailRatio(b *testing.B) {
	const rows = benchSnapshots * benchPerSnapshot
	wh := writeBenchTable(b, benchSnapshots, benchPerSnapshot)
	files := dataFiles(b, wh)
	var inWall, pqWall, inCPU, pqCPU, pmCPU, jsWall, jsCPU []float64
	measure := func(read func() int) (wall, cpu float64) {
		t0, c0 := time.Now(), cputime.Process()
		if n := read(); n != rows {
			b.Fatalf("read %d rows, want %d", n, rows)
		}
		return rows / time.Since(t0).Seconds(), rows / (cputime.Process() - c0).Seconds()
	}
	for b.Loop() {
		w, c := measure(func() int { return tailOnce(b, wh) })
		inWall, inCPU = append(inWall, w), append(inCPU, c)
		w, c = measure(func() int { return parquetGoOnce(b, files, nil) })
		pqWall, pqCPU = append(pqWall, w), append(pqCPU, c)
		_, c = measure(func() int { return parquetGoOnce(b, files, eventMessages) })
		pmCPU = append(pmCPU, c)
		w, c = measure(func() int { return tailFormat(b, wh, MessageFormatJSON, false) })
		jsWall, jsCPU = append(jsWall, w), append(jsCPU, c)
	}
	b.ReportMetric(median(inWall), "input-rows/s")
	b.ReportMetric(median(pqWall), "parquet-go-rows/s")
	b.ReportMetric(median(inWall)/median(pqWall), "wall-ratio")
	b.ReportMetric(median(inCPU)/median(pqCPU), "cpu-ratio")
	b.ReportMetric(median(inCPU)/median(pmCPU), "cpu-ratio-same-messages")
	b.ReportMetric(median(jsWall)/median(pqWall), "json-wall-ratio")
	b.ReportMetric(median(jsCPU)/median(pqCPU), "json-cpu-ratio")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkTailWriteRatio compares the two message_format values for a
// pipeline that writes rows out unchanged: the input's read plus each
// message's bytes (a structured message's JSON encoding, a json message's
// own bytes), alternating structured and json once each per iteration
// (run with -benchtime 5x or more). It reports the medians of both rows/s
// and the ratios json/structured of wall-clock throughput and of CPU time
// per row, and the same ratios for the read alone (no bytes taken).
func BenchmarkTailWriteRatio(b *testing.B) {
	const rows = benchSnapshots * benchPerSnapshot
	wh := writeBenchTable(b, benchSnapshots, benchPerSnapshot)
	var sw, jw, sc, jc, srw, jrw, src, jrc []float64
	measure := func(format MessageFormat, write bool) (wall, cpu float64) {
		t0, c0 := time.Now(), cputime.Process()
		if n := tailFormat(b, wh, format, write); n != rows {
			b.Fatalf("read %d rows, want %d", n, rows)
		}
		return rows / time.Since(t0).Seconds(), rows / (cputime.Process() - c0).Seconds()
	}
	add := func(w, c *[]float64, wall, cpu float64) { *w, *c = append(*w, wall), append(*c, cpu) }
	for b.Loop() {
		wall, cpu := measure(MessageFormatStructured, true)
		add(&sw, &sc, wall, cpu)
		wall, cpu = measure(MessageFormatJSON, true)
		add(&jw, &jc, wall, cpu)
		wall, cpu = measure(MessageFormatStructured, false)
		add(&srw, &src, wall, cpu)
		wall, cpu = measure(MessageFormatJSON, false)
		add(&jrw, &jrc, wall, cpu)
	}
	b.ReportMetric(median(sw), "structured-write-rows/s")
	b.ReportMetric(median(jw), "json-write-rows/s")
	b.ReportMetric(median(jw)/median(sw), "write-wall-ratio")
	b.ReportMetric(median(jc)/median(sc), "write-cpu-ratio")
	b.ReportMetric(median(jrw)/median(srw), "read-wall-ratio")
	b.ReportMetric(median(jrc)/median(src), "read-cpu-ratio")
}
