package maintain_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

var (
	measureBatches = flag.Int("maintain.hour-batches", 0,
		"run TestMeasureHourOfSmallBatches with this many 100 ms batches (36000 = one hour)")
	measureRows  = flag.Int("maintain.batch-rows", 100, "rows per batch of TestMeasureHourOfSmallBatches")
	measureGroup = flag.Int("maintain.batches-per-commit", 100,
		"batches per APPEND snapshot of TestMeasureHourOfSmallBatches (each batch is its own data file either way)")
)

// eventSpec is an event table partitioned by hour, with Paimon's defaults
// (unaware bucket, target-file-size 256 MiB, compaction.min.file-num 5,
// source.split.open-file-cost 4 MiB).
var eventSpec = lakecore.TableSpec{
	Fields: []types.DataField{
		{Name: "id", Type: types.BigIntType()},
		{Name: "ts", Type: types.MustParse("TIMESTAMP(3)")},
		{Name: "dt", Type: types.StringType()},
		{Name: "payload", Type: types.StringType()},
	},
	PartitionKeys: []string{"dt"},
}

// writeBatches writes n batches of rows rows each, every batch flushed to
// its own data file (TableWriter.Prepare), committed group batches per
// APPEND snapshot. The events are 100 ms apart from 2024-01-01 10:00.
func writeBatches(tb testing.TB, l *lakeTable, n, rows, group int) {
	tb.Helper()
	ctx := context.Background()
	w, err := l.tb.NewWriter(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	var pending []commit.Message
	id := int64(0)
	for b := 0; b < n; b++ {
		at := start.Add(time.Duration(b) * 100 * time.Millisecond)
		for r := 0; r < rows; r++ {
			row := []any{id, types.Timestamp{Millis: at.UnixMilli()}, at.Format("2006-01-02 15"),
				fmt.Sprintf("event %d from device %04d: temperature=%d.%d", id, id%977, 15+id%20, id%10)}
			if err := w.Write(ctx, row); err != nil {
				tb.Fatal(err)
			}
			id++
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		pending = append(pending, msgs...)
		if (b+1)%group == 0 || b == n-1 {
			l.ident++
			if _, err := l.c.Commit(ctx, l.ident, pending); err != nil {
				tb.Fatal(err)
			}
			pending = nil
		}
	}
}

// TestMeasureHourOfSmallBatches measures compaction of a table written in
// 100 ms batches (file count and bytes per partition before and after,
// time to compact, time to read everything). Run with
//
//	go test ./lakecore/maintain -run TestMeasureHourOfSmallBatches -v -timeout 2h -maintain.hour-batches=36000
func TestMeasureHourOfSmallBatches(t *testing.T) {
	if *measureBatches == 0 {
		t.Skip("set -maintain.hour-batches (36000 = one hour of 100 ms batches)")
	}
	l := newLakeTable(t, eventSpec)
	ctx := context.Background()
	start := time.Now()
	writeBatches(t, l, *measureBatches, *measureRows, *measureGroup)
	t.Logf("wrote %d batches of %d rows (%d rows) in %s, %d per APPEND snapshot",
		*measureBatches, *measureRows, *measureBatches**measureRows, time.Since(start).Round(time.Millisecond), *measureGroup)
	readTime := func() (time.Duration, int) {
		s := time.Now()
		rows := l.readAll(0)
		return time.Since(s), len(rows)
	}
	d, n := readTime()
	t.Logf("before: full read of %d rows in %s", n, d.Round(time.Millisecond))
	for round := 1; round <= 3; round++ {
		rep, err := maintain.Compact(ctx, l.fio, l.tb.Path(), maintain.CompactOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("compaction round %d:\n%s", round, rep)
		if rep.Tasks == 0 {
			break
		}
		d, m := readTime()
		if m != n {
			t.Fatalf("read %d rows after compaction, %d before", m, n)
		}
		t.Logf("after round %d: full read in %s", round, d.Round(time.Millisecond))
	}
	onDisk := func() (int, int64) {
		var files int
		var bytes int64
		infos, err := l.fio.List(ctx, l.tb.Path(), true)
		if err != nil {
			t.Fatal(err)
		}
		for _, fi := range infos {
			files++
			bytes += fi.Size
		}
		return files, bytes
	}
	f, b := onDisk()
	t.Logf("on disk before snapshot expiry: %d files, %d bytes", f, b)
	rep, err := maintain.ExpireSnapshots(ctx, l.fio, l.tb.Path(), maintain.ExpireSnapshotsOptions{RetainMin: 1, MaxDeletes: 1 << 30, OlderThan: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", rep.Summary())
	f, b = onDisk()
	t.Logf("on disk after snapshot expiry: %d files, %d bytes", f, b)
}

// BenchmarkCompactUnaware compacts 200 small files of one partition.
func BenchmarkCompactUnaware(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l := newLakeTable(b, eventSpec)
		writeBatches(b, l, 200, 100, 50)
		b.StartTimer()
		rep, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{})
		if err != nil || rep.Tasks != 2 {
			b.Fatalf("%v %v", err, rep)
		}
	}
}

// BenchmarkExpireSnapshots expires 50 snapshots (the default limit).
func BenchmarkExpireSnapshots(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l := newLakeTable(b, eventSpec)
		writeBatches(b, l, 60, 10, 1)
		b.StartTimer()
		rep, err := maintain.ExpireSnapshots(context.Background(), l.fio, l.tb.Path(), maintain.ExpireSnapshotsOptions{RetainMin: 10, OlderThan: time.Now().Add(time.Minute)})
		if err != nil || rep.SnapshotsExpired != 50 {
			b.Fatalf("%v %v", err, rep)
		}
	}
}
