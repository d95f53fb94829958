package datafile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

var (
	wModeFull   = schema.StatsMode{Kind: schema.StatsFull}
	wModeCounts = schema.StatsMode{Kind: schema.StatsCounts}
	wModeNone   = schema.StatsMode{Kind: schema.StatsNone}
)

func wModeTruncate(n int) schema.StatsMode {
	return schema.StatsMode{Kind: schema.StatsTruncate, Length: n}
}

func wI64(v int64) *int64 { return &v }

// statsString renders stats with Go types and exact float bits, so a test
// tells int32 from int64 and -0.0 from +0.0.
func wStatsString(c ColumnStats) string {
	show := func(v any) string {
		switch x := v.(type) {
		case nil:
			return "nil"
		case float32:
			return fmt.Sprintf("float32(%v,%08x)", x, math.Float32bits(x))
		case float64:
			return fmt.Sprintf("float64(%v,%016x)", x, math.Float64bits(x))
		case types.Decimal:
			return fmt.Sprintf("Decimal(%s,scale %d)", x.Unscaled, x.Scale)
		case string:
			return fmt.Sprintf("%q", x)
		}
		return fmt.Sprintf("%T(%v)", v, v)
	}
	n := "nil"
	if c.NullCount != nil {
		n = fmt.Sprint(*c.NullCount)
	}
	return fmt.Sprintf("min=%s max=%s nulls=%s", show(c.Min), show(c.Max), n)
}

// TestColumnStats checks FileStats per type and stats mode against what
// Java's ParquetSimpleStatsExtractor and the column's stats collector give.
func TestColumnStats(t *testing.T) {
	ts := func(ms int64, nano int32) types.Timestamp { return types.Timestamp{Millis: ms, NanoOfMilli: nano} }
	cases := []struct {
		name   string
		typ    types.DataType
		mode   schema.StatsMode
		values []any
		want   ColumnStats
	}{
		{"boolean", types.BooleanType(), wModeFull, []any{true, nil, false}, ColumnStats{false, true, wI64(1)}},
		{"boolean all true", types.BooleanType(), wModeFull, []any{true, true}, ColumnStats{true, true, wI64(0)}},
		{"tinyint", types.TinyIntType(), wModeFull, []any{int8(3), int8(-5), nil}, ColumnStats{int8(-5), int8(3), wI64(1)}},
		{"smallint", types.SmallIntType(), wModeFull, []any{int16(-300), int16(300)}, ColumnStats{int16(-300), int16(300), wI64(0)}},
		{"int", types.IntType(), wModeFull, []any{int32(7), nil, nil, int32(-7)}, ColumnStats{int32(-7), int32(7), wI64(2)}},
		{"int not null", types.IntType().NotNull(), wModeTruncate(16), []any{int32(1)}, ColumnStats{int32(1), int32(1), wI64(0)}},
		{"bigint", types.BigIntType(), wModeFull, []any{int64(math.MinInt64), int64(math.MaxInt64)}, ColumnStats{int64(math.MinInt64), int64(math.MaxInt64), wI64(0)}},
		{"date", types.DateType(), wModeFull, []any{types.Date(19000), types.Date(-1)}, ColumnStats{types.Date(-1), types.Date(19000), wI64(0)}},
		{"time", types.TimeType(0), wModeFull, []any{types.Time(5), types.Time(86_399_999)}, ColumnStats{types.Time(5), types.Time(86_399_999), wI64(0)}},
		{"float", types.FloatType(), wModeFull, []any{float32(1.5), float32(-2), nil}, ColumnStats{float32(-2), float32(1.5), wI64(1)}},
		{"float NaN drops min max", types.FloatType(), wModeFull, []any{float32(1.5), float32(math.NaN()), nil}, ColumnStats{nil, nil, wI64(1)}},
		{"double NaN drops min max", types.DoubleType(), wModeFull, []any{math.NaN()}, ColumnStats{nil, nil, wI64(0)}},
		{"double zero widened", types.DoubleType(), wModeFull, []any{0.0}, ColumnStats{math.Copysign(0, -1), 0.0, wI64(0)}},
		{"double negative zero widened", types.DoubleType(), wModeFull, []any{math.Copysign(0, -1)}, ColumnStats{math.Copysign(0, -1), 0.0, wI64(0)}},
		{"float infinities", types.FloatType(), wModeFull, []any{float32(math.Inf(1)), float32(math.Inf(-1))}, ColumnStats{float32(math.Inf(-1)), float32(math.Inf(1)), wI64(0)}},
		{"string full", types.StringType(), wModeFull, []any{"b", "a", "ab", nil}, ColumnStats{"a", "b", wI64(1)}},
		{"string bytewise unsigned", types.StringType(), wModeFull, []any{"é", "z"}, ColumnStats{"z", "é", wI64(0)}},
		{"string truncate short", types.StringType(), wModeTruncate(3), []any{"abcdef", "abd"}, ColumnStats{"abc", "abd", wI64(0)}},
		{"string truncate max incremented", types.StringType(), wModeTruncate(3), []any{"abcdef"}, ColumnStats{"abc", "abd", wI64(0)}},
		{"string truncate code points", types.VarCharType(100), wModeTruncate(2), []any{"日本語テキスト"}, ColumnStats{"日本", "日札", wI64(0)}},
		{"string truncate skips max code point", types.StringType(), wModeTruncate(3), []any{"a\U0010FFFF\U0010FFFFz"}, ColumnStats{"a\U0010FFFF\U0010FFFF", "b", wI64(0)}},
		{"string truncate impossible", types.StringType(), wModeTruncate(2), []any{"\U0010FFFF\U0010FFFFx", nil}, ColumnStats{nil, nil, wI64(1)}},
		{"string truncate surrogate gap", types.StringType(), wModeTruncate(2), []any{"\uD7FF\uD7FFx"}, ColumnStats{"\uD7FF\uD7FF", "\uD7FF\uE000", wI64(0)}},
		{"string default mode", types.StringType(), schema.DefaultStatsMode, []any{strings.Repeat("x", 20)}, ColumnStats{strings.Repeat("x", 16), strings.Repeat("x", 15) + "y", wI64(0)}},
		{"string full too large for parquet-mr", types.StringType(), wModeFull, []any{strings.Repeat("a", 3000), strings.Repeat("b", 1096)}, ColumnStats{nil, nil, wI64(0)}},
		{"string full just under the limit", types.StringType(), wModeFull, []any{strings.Repeat("a", 3000), strings.Repeat("b", 1095)}, ColumnStats{strings.Repeat("a", 3000), strings.Repeat("b", 1095), wI64(0)}},
		{"string empty", types.StringType(), wModeFull, []any{"", "a"}, ColumnStats{"", "a", wI64(0)}},
		{"counts", types.IntType(), wModeCounts, []any{int32(1), nil}, ColumnStats{nil, nil, wI64(1)}},
		{"counts string", types.StringType(), wModeCounts, []any{"x"}, ColumnStats{nil, nil, wI64(0)}},
		{"none", types.IntType(), wModeNone, []any{int32(1), nil}, ColumnStats{}},
		{"bytes", types.BytesType(), wModeFull, []any{[]byte{1}, nil}, ColumnStats{nil, nil, wI64(1)}},
		{"binary", types.BinaryType(2), wModeTruncate(16), []any{[]byte{1, 2}}, ColumnStats{nil, nil, wI64(0)}},
		{"all null", types.IntType(), wModeFull, []any{nil, nil}, ColumnStats{nil, nil, wI64(2)}},
		{"timestamp(3) drops sub-millis", types.TimestampType(3), wModeFull, []any{ts(1000, 500), ts(-5, 999_999)}, ColumnStats{ts(-5, 0), ts(1000, 0), wI64(0)}},
		{"timestamp(0) keeps millis", types.TimestampType(0), wModeFull, []any{ts(1234, 0)}, ColumnStats{ts(1234, 0), ts(1234, 0), wI64(0)}},
		{"timestamp(6) micros", types.TimestampType(6), wModeFull, []any{ts(-1, 999_999), ts(2, 1_500)}, ColumnStats{ts(-1, 999_000), ts(2, 1_000), wI64(0)}},
		{"ltz(6)", types.LocalZonedTimestampType(6), wModeFull, []any{ts(7, 7_000)}, ColumnStats{ts(7, 7_000), ts(7, 7_000), wI64(0)}},
		{"timestamp(9) no min max", types.TimestampType(9), wModeFull, []any{ts(1, 1), nil}, ColumnStats{nil, nil, wI64(1)}},
		{"ltz(7) no min max", types.LocalZonedTimestampType(7), wModeFull, []any{ts(1, 1)}, ColumnStats{nil, nil, wI64(0)}},
		{"decimal int32", types.DecimalType(5, 2), wModeFull, []any{wDec("1.23", 5, 2), wDec("-4.56", 5, 2)}, ColumnStats{wDec("-4.56", 5, 2), wDec("1.23", 5, 2), wI64(0)}},
		{"decimal int64", types.DecimalType(18, 0), wModeFull, []any{wDec("-999999999999999999", 18, 0), nil}, ColumnStats{wDec("-999999999999999999", 18, 0), wDec("-999999999999999999", 18, 0), wI64(1)}},
		{"decimal fixed signed", types.DecimalType(23, 5), wModeFull, []any{wDec("1", 23, 5), wDec("-123456789987654321.45678", 23, 5), wDec("-1", 23, 5), wDec("0.5", 23, 5)},
			ColumnStats{wDec("-123456789987654321.45678", 23, 5), wDec("1", 23, 5), wI64(0)}},
		{"array", types.ArrayType(types.IntType()), wModeFull, []any{[]any{int32(1)}, nil}, ColumnStats{}},
		{"map", types.MapType(types.StringType(), types.IntType()), wModeFull, []any{nil}, ColumnStats{}},
		{"multiset", types.MultisetType(types.StringType()), wModeCounts, []any{nil}, ColumnStats{}},
		{"row", types.RowType(wField(9, "x", types.IntType())), wModeFull, []any{[]any{int32(1)}, nil}, ColumnStats{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := make([][]any, len(tc.values))
			for i, v := range tc.values {
				rows[i] = []any{v}
			}
			_, st := wWriteFile(t, []types.DataField{wField(0, "c", tc.typ)}, WriterOptions{StatsModes: []schema.StatsMode{tc.mode}}, rows)
			if st.RowCount != int64(len(rows)) {
				t.Errorf("RowCount %d, want %d", st.RowCount, len(rows))
			}
			if got, want := wStatsString(st.Columns[0]), wStatsString(tc.want); got != want {
				t.Errorf("stats:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestColumnStatsDefaultsAndOrder: nil StatsModes means truncate(16) for
// every field, and stats come back in field order.
func TestColumnStatsDefaultsAndOrder(t *testing.T) {
	fields := []types.DataField{wField(0, "a", types.StringType()), wField(1, "b", types.IntType()), wField(2, "c", types.ArrayType(types.IntType()))}
	long := strings.Repeat("é", 20)
	_, st := wWriteFile(t, fields, WriterOptions{}, [][]any{{long, int32(2), nil}, {nil, int32(-2), []any{}}})
	want := []string{
		wStatsString(ColumnStats{strings.Repeat("é", 16), strings.Repeat("é", 15) + "ê", wI64(1)}),
		wStatsString(ColumnStats{int32(-2), int32(2), wI64(0)}),
		wStatsString(ColumnStats{}),
	}
	for i := range want {
		if got := wStatsString(st.Columns[i]); got != want[i] {
			t.Errorf("column %d: got %s, want %s", i, got, want[i])
		}
	}
}

// TestColumnStatsAcrossRowGroups: file stats merge every row group, and the
// footer's FIXED_LEN_BYTE_ARRAY decimal statistics are signed per row group.
func TestColumnStatsAcrossRowGroups(t *testing.T) {
	fields := []types.DataField{wField(0, "id", types.BigIntType()), wField(1, "d", types.DecimalType(20, 0)), wField(2, "s", types.StringType())}
	var rows [][]any
	for i := range 1000 {
		v := int64(i - 500)
		rows = append(rows, []any{v, types.NewDecimal(-v, 0), fmt.Sprintf("s%04d", i)})
	}
	data, st := wWriteFile(t, fields, WriterOptions{RowGroupSize: 1, StatsModes: []schema.StatsMode{wModeFull, wModeFull, wModeFull}}, rows)
	md := wReadFooter(t, data)
	if len(md.RowGroups) != 8 { // one per 128-row batch
		t.Fatalf("%d row groups, want 8", len(md.RowGroups))
	}
	want := []string{
		wStatsString(ColumnStats{int64(-500), int64(499), wI64(0)}),
		wStatsString(ColumnStats{types.NewDecimal(-499, 0), types.NewDecimal(500, 0), wI64(0)}),
		wStatsString(ColumnStats{"s0000", "s0999", wI64(0)}),
	}
	for i := range want {
		if got := wStatsString(st.Columns[i]); got != want[i] {
			t.Errorf("column %d: got %s, want %s", i, got, want[i])
		}
	}
	first := 0
	for g, rg := range md.RowGroups {
		n := int(rg.NumRows)
		st := rg.Columns[1].MetaData.Statistics
		lo, hi := statsDecimalFromBytes(st.MinValue), statsDecimalFromBytes(st.MaxValue)
		wantLo, wantHi := int64(500-(first+n-1)), int64(500-first)
		if lo.Int64() != wantLo || hi.Int64() != wantHi || st.Min != nil || st.Max != nil {
			t.Errorf("row group %d decimal footer stats [%s, %s], want [%d, %d]", g, lo, hi, wantLo, wantHi)
		}
		if c := rg.Columns[1]; c.ColumnIndexLength != 0 {
			t.Errorf("row group %d: decimal column index kept", g)
		}
		if c := rg.Columns[0]; c.ColumnIndexLength == 0 || c.OffsetIndexLength == 0 {
			t.Errorf("row group %d: bigint page indexes missing", g)
		}
		first += n
	}
	f, cols := wReadColumns(t, data)
	if len(cols[0]) != 1000 || cols[0][999].Int64() != 499 || string(cols[2][0].ByteArray()) != "s0000" {
		t.Errorf("values did not survive row group flushes")
	}
	// The rewritten page indexes must still be where the footer says.
	first = 0
	for g, rg := range f.RowGroups() {
		ci, err := rg.ColumnChunks()[0].ColumnIndex()
		if err != nil {
			t.Fatalf("row group %d: column index: %v", g, err)
		}
		oi, err := rg.ColumnChunks()[2].OffsetIndex()
		if err != nil {
			t.Fatalf("row group %d: offset index: %v", g, err)
		}
		n := int(rg.NumRows())
		if ci.NumPages() != 1 || ci.MinValue(0).Int64() != int64(first-500) || ci.MaxValue(0).Int64() != int64(first+n-1-500) || oi.NumPages() != 1 {
			t.Errorf("row group %d: column index [%v, %v] over %d pages, want [%d, %d]", g, ci.MinValue(0), ci.MaxValue(0), ci.NumPages(), first-500, first+n-1-500)
		}
		first += n
	}
}

// TestTruncateStringBounds checks the truncation helpers' contract: the min
// is a prefix of at most n code points that is <= s, the max is >= s.
func TestTruncateStringBounds(t *testing.T) {
	for _, s := range []string{"", "a", "abc", "日本語", "\U0010FFFF", "a\U0010FFFFb", "\uD7FF\uD7FF\uD7FF", "zzzz"} {
		for n := 1; n <= 4; n++ {
			wCheckTruncation(t, s, n)
		}
	}
}

func wCheckTruncation(t *testing.T, s string, n int) {
	t.Helper()
	lo := truncateStringMin(s, n)
	if !strings.HasPrefix(s, lo) || utf8.RuneCountInString(lo) > n || lo > s {
		t.Errorf("truncateStringMin(%q, %d) = %q", s, n, lo)
	}
	hi, ok := truncateStringMax(s, n)
	if !ok {
		return
	}
	if hi < s || utf8.RuneCountInString(hi) > n || !utf8.ValidString(hi) {
		t.Errorf("truncateStringMax(%q, %d) = %q", s, n, hi)
	}
}

// FuzzTruncateStringStats: for any valid UTF-8 string and length, the
// truncated bounds still bound the string.
func FuzzTruncateStringStats(f *testing.F) {
	for _, s := range []string{"abcdef", "日本語テキスト", "\U0010FFFF\U0010FFFFx", "\uD7FF\uD7FFx", ""} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) || n < 1 || n > 64 {
			return
		}
		wCheckTruncation(t, s, n)
	})
}

// TestColumnStatsManyPages checks footer-derived stats against a brute-force
// scan over enough random rows to span many pages and several row groups.
func TestColumnStatsManyPages(t *testing.T) {
	fields := []types.DataField{
		wField(0, "i", types.IntType()), wField(1, "l", types.BigIntType()), wField(2, "d", types.DoubleType()),
		wField(3, "s", types.StringType()), wField(4, "dec", types.DecimalType(30, 3)), wField(5, "b", types.BooleanType()),
		wField(6, "ts", types.TimestampType(6)),
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var rows [][]any
	var nulls [7]int64
	minI, maxI := int32(math.MaxInt32), int32(math.MinInt32)
	minL, maxL := int64(math.MaxInt64), int64(math.MinInt64)
	minD, maxD := math.Inf(1), math.Inf(-1)
	minS, maxS := "\U0010FFFF", ""
	minDec, maxDec := int64(math.MaxInt64), int64(math.MinInt64)
	minTS, maxTS := int64(math.MaxInt64), int64(math.MinInt64)
	for r := range 60000 {
		row := make([]any, 7)
		if rng.IntN(10) == 0 {
			nulls[r%7]++
		} else {
			switch r % 7 {
			case 0:
				x := rng.Int32() - math.MaxInt32/2
				row[0], minI, maxI = x, min(minI, x), max(maxI, x)
			case 1:
				x := rng.Int64() - math.MaxInt64/2
				row[1], minL, maxL = x, min(minL, x), max(maxL, x)
			case 2:
				x := rng.NormFloat64() * 1e6
				row[2], minD, maxD = x, min(minD, x), max(maxD, x)
			case 3:
				x := fmt.Sprintf("%x-%s", rng.Uint64(), strings.Repeat("é", rng.IntN(5)))
				row[3], minS, maxS = x, min(minS, x), max(maxS, x)
			case 4:
				x := rng.Int64N(2_000_000_000_000) - 1_000_000_000_000
				row[4], minDec, maxDec = types.NewDecimal(x, 3), min(minDec, x), max(maxDec, x)
			case 5:
				row[5] = r%2 == 0
			case 6:
				x := rng.Int64N(4_000_000_000_000_000) - 2_000_000_000_000_000
				row[6] = statsTimestampFromMicros(x)
				minTS, maxTS = min(minTS, x), max(maxTS, x)
			}
		}
		for c := range row {
			if c != r%7 {
				row[c] = nil
				nulls[c]++
			}
		}
		rows = append(rows, row)
	}
	modes := []schema.StatsMode{wModeFull, wModeFull, wModeFull, wModeFull, wModeFull, wModeFull, wModeFull}
	want := []ColumnStats{
		{minI, maxI, wI64(nulls[0])},
		{minL, maxL, wI64(nulls[1])},
		{minD, maxD, wI64(nulls[2])},
		{minS, maxS, wI64(nulls[3])},
		{types.NewDecimal(minDec, 3), types.NewDecimal(maxDec, 3), wI64(nulls[4])},
		{false, true, wI64(nulls[5])},
		{statsTimestampFromMicros(minTS), statsTimestampFromMicros(maxTS), wI64(nulls[6])},
	}
	for _, rgSize := range []int64{200 << 10, DefaultRowGroupSize} {
		data, st := wWriteFile(t, fields, WriterOptions{RowGroupSize: rgSize, StatsModes: modes}, rows)
		md := wReadFooter(t, data)
		pages := len(md.RowGroups[0].Columns[1].MetaData.EncodingStats)
		if rgSize == DefaultRowGroupSize && (len(md.RowGroups) != 1 || md.RowGroups[0].Columns[1].MetaData.EncodingStats[0].Count < 2) {
			t.Errorf("%d row groups, BIGINT %d pages: want one row group of several pages", len(md.RowGroups), pages)
		}
		if rgSize != DefaultRowGroupSize && len(md.RowGroups) < 2 {
			t.Errorf("%d row groups, want several", len(md.RowGroups))
		}
		for i := range want {
			if got, w := wStatsString(st.Columns[i]), wStatsString(want[i]); got != w {
				t.Errorf("row group size %d, column %s:\n got %s\nwant %s", rgSize, fields[i].Name, got, w)
			}
		}
	}
}
