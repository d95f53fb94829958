package lakecore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The acceptance tests of issue #2: every append-table fixture of
// shared/fixtures/paimon/README.md sections 1-5, opened through the facade
// and read at its latest snapshot, gives exactly the rows the README lists.

func TestFixtureFixedBucketComplexTypes(t *testing.T) {
	tb := openFixture(t, "cpp-java11-append-fixed-bucket-complex-types", "append_complex_data")
	rows, err := tb.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	row := func(f1, f2 int32, f3 any, f4, f5 any, f6 any) []any {
		return []any{f1, f2, f3, f4, f5, f6}
	}
	d := func(s string) types.Decimal { return dec(t, s, 23, 5) }
	assertRows(t, rows, [][]any{
		row(10, 1, types.Date(1234), ts(t, "2033-05-18T03:33:20"), d("123456789987654321.45678"), []byte("add")),
		row(10, 1, types.Date(19909), ts(t, "2033-05-18T03:33:20.000001001"), d("12.30000"), []byte("cat")),
		row(10, 1, types.Date(0), ts(t, "2008-12-28T00:00:00.000123456"), nil, []byte("dad")),
		row(10, 1, types.Date(100), ts(t, "2008-12-28T00:00:00.00012345"), d("-123.45000"), []byte("eat")),
		row(10, 1, nil, ts(t, "1899-01-01T00:59:20.001001001"), d("0.00000"), []byte("fat")),
		row(10, 1, types.Date(20006), ts(t, "2024-10-10T10:10:10.1001001"), d("1728551410100.10010"), nil),
		row(20, 1, types.Date(-1234), ts(t, "1899-01-01T00:59:20.001001001"), d("-123456789987654321.45678"), []byte("bad")),
		row(20, 0, types.Date(-100), nil, d("0.00000"), []byte("get")),
	})
}

func TestFixtureSchemaEvolution(t *testing.T) {
	tb := openFixture(t, "cpp-java12-append-unaware-schema-evolution", "append_table_with_alter_table")
	if got := tb.Schema().ID; got != 1 {
		t.Fatalf("latest schema %d, want 1", got)
	}
	rows, err := tb.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := func(v ...any) []any {
		for i, x := range v {
			if n, ok := x.(int); ok {
				v[i] = int32(n)
			}
		}
		return v
	}
	assertRows(t, rows, [][]any{
		r(0, 1, 16, 13, nil, 15, nil),
		r(0, 1, 26, 23, nil, 25, nil),
		r(0, 1, 36, 33, nil, 35, nil),
		r(0, 1, 66, 63, 517, 65, 618),
		r(0, 1, 76, 73, 527, 75, 628),
		r(0, 1, 86, 83, 537, 85, 638),
		r(1, 1, 46, 43, nil, 45, nil),
		r(1, 1, 56, 53, nil, 55, nil),
		r(1, 1, 96, 93, 547, 95, 648),
		r(1, 1, 106, 103, 557, 105, 658),
	})
}

func TestFixtureTypeCastEvolution(t *testing.T) {
	tb := openFixture(t, "cpp-java12-append-unaware-type-cast-evolution", "append_table_alter_table_with_cast")
	rows, err := tb.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// f4 TIMESTAMP(9), key0, key1, f3 INT, f1 STRING, f2 DECIMAL(6,3), f0 BOOLEAN, f6 INT
	r := func(f4 string, key0, key1, f3 int32, f1 string, f2 string, f0 bool, f6 any) []any {
		if n, ok := f6.(int); ok {
			f6 = int32(n)
		}
		return []any{ts(t, f4), key0, key1, f3, f1, dec(t, f2, 6, 3), f0, f6}
	}
	assertRows(t, rows, [][]any{
		r("1970-01-05 00:00:00", 0, 1, 100, "2024-11-26 06:38:56.001000001", "0.020", true, nil),
		r("1969-11-18 00:00:00", 0, 1, 110, "2024-11-26 06:38:56.011000011", "11.120", true, nil),
		r("1971-03-21 00:00:00", 0, 1, 120, "2024-11-26 06:38:56.021000021", "22.220", false, nil),
		r("2024-11-26 06:38:56.054000054", 0, 1, 150, "2024-11-26 15:28:31", "55.002", true, 56),
		r("2024-11-26 06:38:56.064000064", 0, 1, 160, "2024-11-26 15:28:41", "666.012", false, 66),
		r("2024-11-26 06:38:56.074000074", 0, 1, 170, "2024-11-26 15:28:51", "-77.022", true, 76),
		r("1957-11-01 00:00:00", 1, 1, 130, "2024-11-26 06:38:56.031000031", "333.320", false, nil),
		r("2091-09-07 00:00:00", 1, 1, 140, "2024-11-26 06:38:56.041000041", "444.420", true, nil),
		r("2024-11-26 06:38:56.084000084", 1, 1, 180, "2024-11-26 15:29:01", "8.032", true, -86),
		r("2024-11-26 06:38:56.094000094", 1, 1, 190, "I'm strange", "-999.420", false, 96),
	})
}

func TestFixtureTimestamps(t *testing.T) {
	tb := openFixture(t, "cpp-java13snap-append-unaware-timestamps", "append_with_multiple_ts_precision_and_timezone")
	rows, err := tb.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := func(vals ...string) []any {
		out := make([]any, len(vals))
		for i, v := range vals {
			if v != "null" {
				out[i] = ts(t, v)
			}
		}
		return out
	}
	assertRows(t, rows, [][]any{
		r("1970-01-01T00:00:01", "1970-01-01T00:00:00.001", "1970-01-01T00:00:00.000001", "1970-01-01T00:00:00.000000001",
			"1970-01-01T00:00:02", "1970-01-01T00:00:00.002", "1970-01-01T00:00:00.000002", "1970-01-01T00:00:00.000000002"),
		r("1970-01-01T00:00:03", "1970-01-01T00:00:00.003", "null", "1970-01-01T00:00:00.000000003",
			"1970-01-01T00:00:04", "1970-01-01T00:00:00.004", "1970-01-01T00:00:00.000004", "1970-01-01T00:00:00.000000004"),
		r("1970-01-01T00:00:05", "1970-01-01T00:00:00.005", "null", "null",
			"1970-01-01T00:00:06", "null", "1970-01-01T00:00:00.000006", "null"),
	})
}

func TestFixtureFileIndex(t *testing.T) {
	tb := openFixture(t, "cpp-java12-append-unaware-file-index", "append_with_bitmap_no_embedding")
	rows, err := tb.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := func(f0 string, f1 int32, f2 any, f3 float64) []any {
		if n, ok := f2.(int); ok {
			f2 = int32(n)
		}
		return []any{f0, f1, f2, f3}
	}
	want := [][]any{
		r("Alice", 10, 1, 11.1), r("Bob", 10, 1, 12.1), r("Emily", 10, 0, 13.1), r("Tony", 10, 0, 14.1),
		r("Lucy", 20, 1, 15.1), r("Bob", 10, 1, 16.1), r("Tony", 20, 0, 17.1), r("Alice", 20, nil, 18.1),
	}
	assertRows(t, rows, want)
	// The file has an extra ".index" file; reading in file order keeps the
	// write order, which the README lists.
	if renderRows(rows)[0] != renderRows(want)[0] || renderRows(rows)[7] != renderRows(want)[7] {
		t.Errorf("rows out of file order: %v", renderRows(rows))
	}
}

// TestFixtureProjection reads a projection by name over the evolved schema.
func TestFixtureProjection(t *testing.T) {
	ctx := context.Background()
	tb := openFixture(t, "cpp-java12-append-unaware-schema-evolution", "append_table_with_alter_table")
	r, err := tb.NewRead([]string{"e", "key0", "e"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tb.Planner().Full(ctx, mustLatest(t, tb), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]any
	for _, sp := range plan.Splits {
		it, err := r.Open(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, drain(t, it)...)
		it.Close()
	}
	i := func(n int) any { return int32(n) }
	assertRows(t, got, [][]any{
		{nil, i(0), nil}, {nil, i(0), nil}, {nil, i(0), nil}, {i(618), i(0), i(618)}, {i(628), i(0), i(628)},
		{i(638), i(0), i(638)}, {nil, i(1), nil}, {nil, i(1), nil}, {i(648), i(1), i(648)}, {i(658), i(1), i(658)},
	})
	if _, err := tb.NewRead([]string{"nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("projection of an unknown column: %v", err)
	}
}

// TestFixtureSnapshotsOfFixedBucket reads every snapshot of fixture 1: full
// contents and deltas.
func TestFixtureSnapshotsOfFixedBucket(t *testing.T) {
	ctx := context.Background()
	tb := openFixture(t, "cpp-java11-append-fixed-bucket-complex-types", "append_complex_data")
	for _, c := range []struct {
		id          int64
		total, delt int
	}{{1, 3, 3}, {2, 7, 4}, {3, 8, 1}, {4, 8, 1}} {
		all, err := tb.ReadAll(ctx, c.id)
		if err != nil {
			t.Fatalf("snapshot %d: %v", c.id, err)
		}
		if len(all) != c.total {
			t.Errorf("snapshot %d: %d rows, want %d", c.id, len(all), c.total)
		}
		delta, err := tb.ReadDelta(ctx, c.id)
		if err != nil {
			t.Fatalf("delta of snapshot %d: %v", c.id, err)
		}
		// Snapshot 4 is the COMPACT: its delta adds the 6-row compacted
		// file of f1=10/bucket-0 (and deletes the three files it replaced).
		want := c.delt
		if c.id == 4 {
			want = 6
		}
		if len(delta) != want {
			t.Errorf("delta of snapshot %d: %d rows, want %d", c.id, len(delta), want)
		}
		// Every delta row is in the snapshot's full contents.
		full := map[string]int{}
		for _, r := range renderRows(all) {
			full[r]++
		}
		for _, r := range renderRows(delta) {
			if full[r] == 0 {
				t.Errorf("snapshot %d: delta row %s not in the full contents", c.id, r)
			}
			full[r]--
		}
	}
	// The three APPEND deltas together are the latest contents.
	var appended [][]any
	for id := int64(1); id <= 3; id++ {
		d, err := tb.ReadDelta(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		appended = append(appended, d...)
	}
	latest, err := tb.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, appended, latest)
	if _, err := tb.ReadAll(ctx, 9); !errors.Is(err, lakecore.ErrSnapshotNotFound) {
		t.Errorf("ReadAll of a missing snapshot: %v, want ErrSnapshotNotFound", err)
	}
}
