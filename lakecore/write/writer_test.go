package write_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

func f(name string, t types.DataType) types.DataField { return types.DataField{Name: name, Type: t} }

// allTypes are the columns of the round-trip table: every type lakecore
// writes, nested ones included.
func allTypes() []types.DataField {
	return []types.DataField{
		f("id", types.BigIntType().NotNull()),
		f("b", types.BooleanType()),
		f("ti", types.TinyIntType()),
		f("si", types.SmallIntType()),
		f("i", types.IntType()),
		f("bi", types.BigIntType()),
		f("fl", types.FloatType()),
		f("db", types.DoubleType()),
		f("d9", types.DecimalType(9, 2)),
		f("d18", types.DecimalType(18, 4)),
		f("d38", types.DecimalType(38, 10)),
		f("s", types.StringType()),
		f("vc", types.VarCharType(10)),
		f("by", types.BytesType()),
		f("dt", types.DateType()),
		f("tm", types.TimeType(3)),
		f("ts0", types.TimestampType(0)),
		f("ts3", types.TimestampType(3)),
		f("ts6", types.TimestampType(6)),
		f("ts9", types.TimestampType(9)),
		f("ltz3", types.LocalZonedTimestampType(3)),
		f("ltz6", types.LocalZonedTimestampType(6)),
		f("ltz9", types.LocalZonedTimestampType(9)),
		f("arr", types.ArrayType(types.IntType())),
		f("m", types.MapType(types.StringType().NotNull(), types.BigIntType())),
		f("r", types.RowType(f("x", types.IntType()), f("y", types.StringType()))),
	}
}

func allTypesRow(id int64) []any {
	n := id
	ts := func(ms int64, nano int32) types.Timestamp { return types.Timestamp{Millis: ms, NanoOfMilli: nano} }
	return []any{
		id,
		n%2 == 0,
		int8(-100 + n),
		int16(-30000 + n),
		int32(-2000000000 + n),
		int64(-9000000000000000000 + n),
		float32(1.5) * float32(n),
		-2.25 * float64(n),
		dec(fmt.Sprintf("%d.25", 1234567+n), 9, 2),
		dec(fmt.Sprintf("-%d.1234", 12345678901234+n), 18, 4),
		bigDec(fmt.Sprintf("%d", 12345678901234567890+uint64(n)), 10),
		strings.Repeat("ü", int(n)) + "long string value",
		fmt.Sprintf("vc%d", n),
		[]byte{0, 1, 2, byte(n)},
		types.Date(19872 + n),
		types.Time(45296789 + n),
		ts(1717000000000+n*1000, 0),
		ts(1717000000123+n, 0),
		ts(1717000000123+n, 456000),
		ts(1717000000123+n, 456789),
		ts(1717000000321+n, 0),
		ts(1717000000321+n, 654000),
		ts(1717000000321+n, 654987),
		[]any{int32(n), nil, int32(-n)},
		types.Map{Keys: []any{"a", "b"}, Values: []any{n, nil}},
		[]any{int32(n * 10), fmt.Sprintf("row%d", n)},
	}
}

func nullRow(id int64, n int) []any {
	r := make([]any, n)
	r[0] = id
	return r
}

func TestRoundTripAllTypes(t *testing.T) {
	fields := allTypes()
	tt := newTestTable(t, fields, nil, nil)
	var rows [][]any
	for id := int64(1); id <= 4; id++ {
		rows = append(rows, allTypesRow(id))
	}
	rows = append(rows, nullRow(5, len(fields)))
	tt.writeCommit(1, rows)
	got := tt.readAll()
	sortByID(got)
	assertRows(t, got, rows)

	// Value stats: dense, without the nested columns, whose Parquet footer
	// has no stats (SimpleStatsConverter.toBinaryDenseMode).
	live := tt.liveEntries()
	if len(live) != 1 {
		t.Fatalf("%d live files, want 1", len(live))
	}
	m := live[0].File
	if m.ValueStatsCols == nil {
		t.Fatal("ValueStatsCols is nil; nested columns have no stats, so the dense list must leave them out")
	}
	var wantCols []string
	var colTypes []types.DataType
	for _, fd := range fields {
		if !fd.Type.IsNested() {
			wantCols = append(wantCols, fd.Name)
			colTypes = append(colTypes, fd.Type)
		}
	}
	if strings.Join(*m.ValueStatsCols, ",") != strings.Join(wantCols, ",") {
		t.Fatalf("ValueStatsCols %v, want %v", *m.ValueStatsCols, wantCols)
	}
	mins, maxs, nulls, err := m.ValueStats.Decode(colTypes)
	if err != nil {
		t.Fatal(err)
	}
	if mins[0] != int64(1) || maxs[0] != int64(5) || *nulls[0] != 0 {
		t.Errorf("id stats %v..%v nulls %v, want 1..5 nulls 0", mins[0], maxs[0], *nulls[0])
	}
	if mins[4] != int32(-2000000000+1) || maxs[4] != int32(-2000000000+4) || *nulls[4] != 1 {
		t.Errorf("i stats %v..%v nulls %d", mins[4], maxs[4], *nulls[4])
	}
	// BYTES and TIMESTAMP(9) get no min/max but a null count (§6.3).
	for _, name := range []string{"by", "ts9", "ltz9"} {
		i := indexOf(wantCols, name)
		if mins[i] != nil || maxs[i] != nil || nulls[i] == nil || *nulls[i] != 1 {
			t.Errorf("%s stats %v..%v nulls %v, want nil..nil nulls 1", name, mins[i], maxs[i], nulls[i])
		}
	}
	// truncate(16): the string min is cut to 16 characters.
	si := indexOf(wantCols, "s")
	if s, _ := mins[si].(string); len([]rune(s)) != 16 {
		t.Errorf("s min %q, want 16 characters (truncate(16))", mins[si])
	}
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// TestDataFileMeta checks every field of a written file's DataFileMeta
// against paimon-format.md §6.2 and §9.
func TestDataFileMeta(t *testing.T) {
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType()), f("v", types.StringType())}, nil, nil)
	ctx := context.Background()
	now := time.Date(2025, 8, 25, 17, 13, 28, 337e6, time.FixedZone("UTC+8", 8*3600))
	w, err := write.NewTableWriter(tt.fio, tt.tb.Path(), tt.tb.Schema(), write.Options{Now: func() time.Time { return now }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 7; i++ {
		if err := w.Write(ctx, []any{i, nil}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || len(msgs[0].NewFiles) != 1 {
		t.Fatalf("messages %+v, want one file", msgs)
	}
	msg := msgs[0]
	if !bytes.Equal(msg.Partition, binrow.EmptyRow) || msg.Bucket != 0 || msg.TotalBuckets != -1 {
		t.Errorf("message partition %x bucket %d total %d, want the empty row, 0, -1", msg.Partition, msg.Bucket, msg.TotalBuckets)
	}
	m := msg.NewFiles[0]
	st, err := os.Stat(filepath.Join(tt.dir, "db.db/t/bucket-0", m.FileName))
	if err != nil {
		t.Fatal(err)
	}
	wantCreated := time.Date(2025, 8, 25, 17, 13, 28, 337e6, time.UTC).UnixMilli() // wall clock as if UTC
	checks := []struct {
		what string
		ok   bool
	}{
		{"name data-<uuid>-0.parquet", strings.HasPrefix(m.FileName, "data-") && strings.HasSuffix(m.FileName, "-0.parquet")},
		{"exact size", m.FileSize == st.Size()},
		{"row count", m.RowCount == 7},
		{"empty min/max key", bytes.Equal(m.MinKey, binrow.EmptyRow) && bytes.Equal(m.MaxKey, binrow.EmptyRow)},
		{"empty key stats", bytes.Equal(m.KeyStats.MinValues, binrow.EmptyRow) && m.KeyStats.NullCounts != nil && len(m.KeyStats.NullCounts) == 0},
		{"sequence 0..6", m.MinSequenceNumber == 0 && m.MaxSequenceNumber == 6},
		{"schema id", m.SchemaID == 0},
		{"level 0", m.Level == 0},
		{"extra files []", m.ExtraFiles != nil && len(m.ExtraFiles) == 0},
		{"creation time local as UTC", m.CreationTimeMillis != nil && *m.CreationTimeMillis == wantCreated},
		{"delete row count 0", m.DeleteRowCount != nil && *m.DeleteRowCount == 0},
		{"file source APPEND", m.FileSource != nil && *m.FileSource == 0},
		{"no embedded index", m.EmbeddedIndex == nil},
		{"stats of all columns", m.ValueStatsCols == nil},
		{"no external path, row id, write cols", m.ExternalPath == nil && m.FirstRowID == nil && m.WriteCols == nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.what, m)
		}
	}
	mins, maxs, nulls, err := m.ValueStats.Decode([]types.DataType{types.BigIntType(), types.StringType()})
	if err != nil {
		t.Fatal(err)
	}
	if mins[0] != int64(0) || maxs[0] != int64(6) || *nulls[0] != 0 || mins[1] != nil || maxs[1] != nil || *nulls[1] != 7 {
		t.Errorf("value stats %v %v %v", mins, maxs, nulls)
	}

	// The writer is reused after Prepare; the counter of the unaware writer
	// continues while it is active.
	for i := int64(0); i < 3; i++ {
		if err := w.Write(ctx, []any{i, "x"}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err = w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m2 := msgs[0].NewFiles[0]
	if !strings.HasSuffix(m2.FileName, "-1.parquet") || m2.MinSequenceNumber != 7 || m2.MaxSequenceNumber != 9 {
		t.Errorf("second file %s seq %d..%d, want -1.parquet and 7..9", m2.FileName, m2.MinSequenceNumber, m2.MaxSequenceNumber)
	}
}

func TestStatsModes(t *testing.T) {
	fields := []types.DataField{f("id", types.BigIntType()), f("s", types.StringType())}
	cases := []struct {
		name     string
		options  map[string]string
		wantCols *[]string
		arity    int
	}{
		{"none dense", map[string]string{"metadata.stats-mode": "none"}, &[]string{}, 0},
		{"none sparse", map[string]string{"metadata.stats-mode": "none", "metadata.stats-dense-store": "false"}, nil, 2},
		{"per field none", map[string]string{"fields.s.stats-mode": "none"}, &[]string{"id"}, 1},
		{"counts", map[string]string{"metadata.stats-mode": "counts"}, nil, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt := newTestTable(t, fields, nil, c.options)
			msgs, _ := tt.writeCommit(1, [][]any{{int64(1), "a"}, {int64(2), nil}})
			m := msgs[0].NewFiles[0]
			if (m.ValueStatsCols == nil) != (c.wantCols == nil) || (m.ValueStatsCols != nil && strings.Join(*m.ValueStatsCols, ",") != strings.Join(*c.wantCols, ",")) {
				t.Fatalf("ValueStatsCols %v, want %v", m.ValueStatsCols, c.wantCols)
			}
			if len(m.ValueStats.NullCounts) != c.arity || int(m.ValueStats.MinValues[3]) != c.arity {
				t.Fatalf("stats arity: %d null counts, row arity %d; want %d", len(m.ValueStats.NullCounts), m.ValueStats.MinValues[3], c.arity)
			}
			if c.arity == 0 && !bytes.Equal(m.ValueStats.MinValues, binrow.EmptyRow) {
				t.Fatalf("dense none stats %x, want the empty row", m.ValueStats.MinValues)
			}
			if got := tt.readAll(); len(got) != 2 {
				t.Fatalf("read %d rows", len(got))
			}
		})
	}
}

func TestPartitions(t *testing.T) {
	cases := []struct {
		name   string
		typ    types.DataType
		values []any
		dirs   []string
	}{
		{"int", types.IntType(), []any{int32(7), int32(-3)}, []string{"p=7", "p=-3"}},
		{"string escaping", types.StringType(),
			[]any{"a/b", "x=y", "50%", "a b", "日本ü", " ", ""},
			[]string{"p=a%2Fb", "p=x%3Dy", "p=50%25", "p=a b", "p=日本ü", "p=__DEFAULT_PARTITION__"}},
		{"date as epoch day", types.DateType(), []any{types.Date(19872)}, []string{"p=19872"}},
		{"null", types.IntType(), []any{nil, int32(1)}, []string{"p=__DEFAULT_PARTITION__", "p=1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt := newTestTable(t, []types.DataField{f("id", types.BigIntType()), f("p", c.typ)}, []string{"p"}, nil)
			var rows [][]any
			for i, v := range c.values {
				for j := 0; j < 3; j++ {
					rows = append(rows, []any{int64(i*10 + j), v})
				}
			}
			msgs, _ := tt.writeCommit(1, rows)
			if len(msgs) != len(c.values) {
				t.Fatalf("%d messages for %d partitions", len(msgs), len(c.values))
			}
			for i, m := range msgs {
				want, err := binrow.Serialize([]types.DataType{c.typ}, []any{c.values[i]})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(m.Partition, want) {
					t.Errorf("message %d partition %x, want %x", i, m.Partition, want)
				}
				if m.NewFiles[0].MinSequenceNumber != 0 || m.NewFiles[0].MaxSequenceNumber != 2 {
					t.Errorf("partition %v: seq %d..%d, want 0..2 (a writer per partition)", c.values[i], m.NewFiles[0].MinSequenceNumber, m.NewFiles[0].MaxSequenceNumber)
				}
			}
			entries, err := os.ReadDir(filepath.Join(tt.dir, "db.db/t"))
			if err != nil {
				t.Fatal(err)
			}
			var dirs []string
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "p=") {
					dirs = append(dirs, e.Name())
					files, _ := filepath.Glob(filepath.Join(tt.dir, "db.db/t", e.Name(), "bucket-0", "data-*.parquet"))
					if len(files) == 0 {
						t.Errorf("no data file in %s/bucket-0", e.Name())
					}
				}
			}
			want := append([]string(nil), c.dirs...)
			sort.Strings(want)
			sort.Strings(dirs)
			if strings.Join(dirs, "|") != strings.Join(want, "|") {
				t.Fatalf("partition directories %q, want %q", dirs, want)
			}
			got := tt.readAll()
			sortByID(got)
			assertRows(t, got, rows)
		})
	}
}

func TestFixedBucket(t *testing.T) {
	cases := []struct {
		name string
		typ  types.DataType
		key  func(i int) any
	}{
		{"int key", types.IntType(), func(i int) any { return int32(i) }},
		{"string key", types.StringType(), func(i int) any { return fmt.Sprintf("key-%d-with-a-long-tail", i) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const buckets = 4
			tt := newTestTable(t, []types.DataField{f("id", types.BigIntType()), f("k", c.typ), f("p", types.IntType())},
				[]string{"p"}, map[string]string{"bucket": fmt.Sprint(buckets), "bucket-key": "k"})
			var rows [][]any
			for i := 0; i < 200; i++ {
				rows = append(rows, []any{int64(i), c.key(i), int32(i % 2)})
			}
			tt.writeCommit(1, rows[:100])
			tt.writeCommit(2, rows[100:])
			ctx := context.Background()
			snap, err := tt.tb.Snapshots().Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := tt.tb.Planner().Full(ctx, snap, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := tt.tb.NewRead(nil)
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, sp := range plan.Splits {
				if sp.TotalBuckets != buckets {
					t.Fatalf("split total buckets %d", sp.TotalBuckets)
				}
				// Sequence numbers continue in the bucket across writers.
				if len(sp.Files) != 2 || sp.Files[1].MinSequenceNumber != sp.Files[0].MaxSequenceNumber+1 || sp.Files[0].MinSequenceNumber != 0 {
					t.Errorf("bucket %d: files %d, seq %v", sp.Bucket, len(sp.Files), seqs(sp.Files))
				}
				it, err := r.Open(ctx, sp)
				if err != nil {
					t.Fatal(err)
				}
				for {
					next, err := it.Next(ctx)
					batch := next.Rows
					if err != nil {
						break
					}
					for _, row := range batch {
						key, err := binrow.Encode([]types.DataType{c.typ}, []any{row[1]})
						if err != nil {
							t.Fatal(err)
						}
						if b := binrow.Bucket(key, buckets); int32(b) != sp.Bucket {
							t.Fatalf("row %v in bucket %d, binrow says %d", row, sp.Bucket, b)
						}
						seen++
					}
				}
				it.Close()
			}
			if seen != len(rows) {
				t.Fatalf("read %d rows, want %d", seen, len(rows))
			}
		})
	}
}

func seqs(files []manifest.DataFileMeta) [][2]int64 {
	var out [][2]int64
	for _, f := range files {
		out = append(out, [2]int64{f.MinSequenceNumber, f.MaxSequenceNumber})
	}
	return out
}

func TestRolling(t *testing.T) {
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType())}, nil, map[string]string{"target-file-size": "1 b"})
	var rows [][]any
	for i := 0; i < 3500; i++ {
		rows = append(rows, []any{int64(i)})
	}
	msgs, _ := tt.writeCommit(1, rows)
	files := msgs[0].NewFiles
	want := [][2]int64{{0, 999}, {1000, 1999}, {2000, 2999}, {3000, 3499}}
	if got := seqs(files); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("files' sequence ranges %v, want %v (a roll every 1000 rows)", got, want)
	}
	for i, fm := range files {
		if fm.RowCount != want[i][1]-want[i][0]+1 {
			t.Errorf("file %d rows %d", i, fm.RowCount)
		}
	}
	got := tt.readAll()
	sortByID(got)
	assertRows(t, got, rows)
}

func TestBadRowFailsAlone(t *testing.T) {
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType()), f("v", types.IntType().NotNull()), f("p", types.StringType().NotNull())},
		[]string{"p"}, nil)
	ctx := context.Background()
	w, err := tt.tb.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	good := [][]any{{int64(1), int32(1), "a"}, {int64(2), int32(2), "b"}}
	bad := []struct {
		row   []any
		field string
	}{
		{[]any{int64(3), "not an int", "a"}, `"v"`},
		{[]any{int64(4), nil, "a"}, `"v"`},
		{[]any{int64(5), int32(5), nil}, `"p"`},
		{[]any{int64(6), int32(6), 17}, `"p"`},
		{[]any{int64(7), int32(7), "new-partition", "extra"}, "4 values"},
		{[]any{int64(8), "bad in a new partition", "c"}, `"v"`},
	}
	if err := w.Write(ctx, good[0]); err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		err := w.Write(ctx, b.row)
		if !errors.Is(err, write.ErrInvalidRow) || !strings.Contains(err.Error(), b.field) {
			t.Fatalf("row %v: error %v, want ErrInvalidRow naming %s", b.row, err, b.field)
		}
	}
	if err := w.Write(ctx, good[1]); err != nil {
		t.Fatal(err)
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2 (no file for partition c)", len(msgs))
	}
	if _, err := tt.tb.NewCommitter("u").Commit(ctx, 1, msgs); err != nil {
		t.Fatal(err)
	}
	got := tt.readAll()
	sortByID(got)
	assertRows(t, got, good)
	if m, _ := filepath.Glob(filepath.Join(tt.dir, "db.db/t/p=c/bucket-0/*")); len(m) != 0 {
		t.Fatalf("files left for the rejected row: %v", m)
	}
}

func TestAbort(t *testing.T) {
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType()), f("p", types.IntType())}, []string{"p"},
		map[string]string{"target-file-size": "1 b"})
	ctx := context.Background()
	w, err := tt.tb.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A committed batch first: Abort must not touch its files.
	for i := 0; i < 10; i++ {
		if err := w.Write(ctx, []any{int64(i), int32(i % 2)}); err != nil {
			t.Fatal(err)
		}
	}
	tt.prepareCommit(w, 1)
	kept := dataFiles(t, tt.dir)
	for i := 0; i < 3500; i++ { // a roll in every partition
		if err := w.Write(ctx, []any{int64(100 + i), int32(i % 3)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(dataFiles(t, tt.dir)); n <= len(kept) {
		t.Fatalf("no rolled file visible before Abort (%d files)", n)
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if got := dataFiles(t, tt.dir); strings.Join(got, ",") != strings.Join(kept, ",") {
		t.Fatalf("after Abort files %v, want only the committed %v", got, kept)
	}
	// Usable afterwards.
	if err := w.Write(ctx, []any{int64(99), int32(0)}); err != nil {
		t.Fatal(err)
	}
	tt.prepareCommit(w, 2)
	if got := tt.readAll(); len(got) != 11 {
		t.Fatalf("read %d rows, want 11", len(got))
	}
}

func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestOptionsFromSchema(t *testing.T) {
	s := schema.NewTableSchema([]types.DataField{f("id", types.IntType())}, nil, map[string]string{
		"target-file-size": "64 mb", "file.compression": "snappy", "file.compression.zstd-level": "3", "data-file.prefix": "part-",
	}, nil)
	o := write.OptionsFromSchema(s)
	if o.TargetFileSize != 64<<20 || o.Compression != "snappy" || o.ZstdLevel != 3 || o.FilePrefix != "part-" {
		t.Fatalf("options %+v", o)
	}
	o = write.OptionsFromSchema(schema.NewTableSchema([]types.DataField{f("id", types.IntType())}, nil, nil, nil))
	if o.TargetFileSize != 256<<20 || o.Compression != "zstd" || o.ZstdLevel != 1 || o.FilePrefix != "data-" {
		t.Fatalf("default options %+v", o)
	}
}

func TestFilePrefixAndSuffix(t *testing.T) {
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType())}, nil,
		map[string]string{"data-file.prefix": "part-", "file.suffix.include.compression": "true", "data-file.path-directory": "data"})
	msgs, _ := tt.writeCommit(1, [][]any{{int64(1)}})
	name := msgs[0].NewFiles[0].FileName
	if !strings.HasPrefix(name, "part-") || !strings.HasSuffix(name, "-0.zst.parquet") {
		t.Fatalf("file name %s, want part-<uuid>-0.zst.parquet", name)
	}
	if _, err := os.Stat(filepath.Join(tt.dir, "db.db/t/data/bucket-0", name)); err != nil {
		t.Fatal(err)
	}
	if got := tt.readAll(); len(got) != 1 {
		t.Fatalf("read %d rows", len(got))
	}
}

// TestUnknownCompression: a compression no writer can use fails when the
// TableWriter is made, not at its first row.
func TestUnknownCompression(t *testing.T) {
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType())}, nil, nil)
	_, err := write.NewTableWriter(tt.fio, tt.tb.Path(), tt.tb.Schema(), write.Options{Compression: "lzo"}, nil)
	if !errors.Is(err, datafile.ErrInvalidWriterOptions) || !strings.Contains(err.Error(), `"lzo"`) {
		t.Fatalf("got %v, want datafile.ErrInvalidWriterOptions naming lzo", err)
	}
}
