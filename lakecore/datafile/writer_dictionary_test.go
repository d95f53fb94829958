package datafile

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestDictionaryPays: FallbackValuesWriter's first-page decision, with the
// sizes parquet-mr counts.
func TestDictionaryPays(t *testing.T) {
	n := dictionaryProbeRows
	gen := func(f func(i int) parquet.Value) []parquet.Value {
		out := make([]parquet.Value, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	tests := []struct {
		name string
		kind leafKind
		vals []parquet.Value
		want bool
	}{
		{"unique BIGINT", leafBigInt, gen(func(i int) parquet.Value { return parquet.Int64Value(int64(i) * 7) }), false},
		{"5000 BIGINT values", leafBigInt, gen(func(i int) parquet.Value { return parquet.Int64Value(int64(i*7919) % 5000) }), true},
		{"unique INT", leafInt, gen(func(i int) parquet.Value { return parquet.Int32Value(int32(i)) }), false},
		{"100 INT values", leafInt, gen(func(i int) parquet.Value { return parquet.Int32Value(int32(i % 100)) }), true},
		{"unique DOUBLE", leafDouble, gen(func(i int) parquet.Value { return parquet.DoubleValue(float64(i) / 3) }), false},
		{"two FLOAT values", leafFloat, gen(func(i int) parquet.Value { return parquet.FloatValue(float32(i % 2)) }), true},
		{"unique STRING", leafString, gen(func(i int) parquet.Value { return parquet.ByteArrayValue(fmt.Appendf(nil, "user-%08d", i)) }), false},
		{"10 STRING values", leafString, gen(func(i int) parquet.Value { return parquet.ByteArrayValue(fmt.Appendf(nil, "country-%d", i%10)) }), true},
		// 12 dictionary bytes and an index beat 4+12 PLAIN bytes
		{"unique INT96", leafTimestampInt96, gen(func(i int) parquet.Value { return parquet.Int96Value(deprecated.Int96{uint32(i), 0, 2440588}) }), true},
		{"3 INT96 values", leafTimestampInt96, gen(func(i int) parquet.Value { return parquet.Int96Value(deprecated.Int96{uint32(i % 3), 0, 2440588}) }), true},
		{"only NULLs", leafBigInt, gen(func(int) parquet.Value { return parquet.NullValue() }), false},
		{"no values", leafBigInt, nil, false},
		// a single value: the dictionary (8 bytes) and the page (bit width
		// byte, one RLE run) beat 8 bytes of PLAIN only from the third row
		{"one BIGINT", leafBigInt, []parquet.Value{parquet.Int64Value(1)}, false},
		{"one BIGINT thrice", leafBigInt, []parquet.Value{parquet.Int64Value(1), parquet.Int64Value(1), parquet.Int64Value(1)}, true},
		// distinct values over 1 MiB: shouldFallBack, however well they repeat
		// the first page ends at 1 MiB of PLAIN values: the 200-byte values
		// repeat from row 4001 on, after the page
		{"first page of 1 MiB", leafString, gen(func(i int) parquet.Value {
			return parquet.ByteArrayValue(fmt.Appendf(make([]byte, 0, 200), "%0200d", i%6000))
		}), false},
		{"dictionary over 1 MiB", leafString, gen(func(i int) parquet.Value {
			return parquet.ByteArrayValue(fmt.Appendf(make([]byte, 0, 200), "%0200d", i%6000))
		}), false},
	}
	var set distinctSet
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := dictionaryPays(&set, tc.vals); got != tc.want {
				t.Errorf("dictionaryPays = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHybridEncodedSize: the lengths RunLengthBitPackingHybridEncoder
// writes (header varints, 8-value groups of width bytes, RLE values in
// ceil(width/8) bytes).
func TestHybridEncodedSize(t *testing.T) {
	rep := func(v int32, n int) []int32 {
		out := make([]int32, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	seq := func(n int) []int32 {
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	tests := []struct {
		name  string
		ids   []int32
		width int
		want  int64
	}{
		{"empty", nil, 3, 0},
		{"8 zeros at width 0", rep(0, 8), 0, 1},                                        // header 16
		{"100 zeros at width 1", rep(0, 100), 1, 2 + 1},                                // header 200 in two varint bytes, value byte
		{"100 fives at width 9", append([]int32{0}, rep(5, 100)...), 9, 1 + 9 + 2 + 2}, // a group of 0 and seven 5s, then an RLE run of 93
		{"8 distinct at width 3", seq(8), 3, 1 + 3},
		{"3 distinct at width 2", seq(3), 2, 1 + 2},                    // padded to one group
		{"504 distinct at width 9", seq(504), 9, 1 + 63*9},             // one full bit-packed run
		{"505 distinct at width 10", seq(505), 10, 1 + 63*10 + 1 + 10}, // a second run
		{"64 distinct at width 2", seq(64), 7, 1 + 8*7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hybridEncodedSize(tc.ids, tc.width); got != tc.want {
				t.Errorf("hybridEncodedSize = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestWriterDictionaryEncodings: every column parquet-mr's v1 writer gives
// a dictionary gets one while it pays (all but BOOLEAN and DECIMAL p > 18),
// none where the first rows are unique, and the values read back the same
// from files of many row groups whose first batch spans several of them.
func TestWriterDictionaryEncodings(t *testing.T) {
	fields := wAllTypesFields()
	base := wAllTypesRows()
	var rows [][]any
	for len(rows) < dictionaryProbeRows+5000 {
		rows = append(rows, base[len(rows)%len(base)])
	}
	data, st := wWriteFile(t, fields, WriterOptions{RowGroupSize: 256 << 10}, rows)
	if st.RowCount != int64(len(rows)) {
		t.Fatalf("RowCount %d, want %d", st.RowCount, len(rows))
	}
	md := wReadFooter(t, data)
	if len(md.RowGroups) < 3 {
		t.Fatalf("%d row groups, want several", len(md.RowGroups))
	}
	s, err := buildWriteSchema(fields, schemaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range md.RowGroups {
		for j, c := range rg.Columns {
			leaf := s.leaves[j]
			dict := c.MetaData.DictionaryPageOffset != 0
			if want := dictionaryCandidate(leaf.kind); dict != want {
				t.Errorf("column %v (%s): dictionary %v, want %v", c.MetaData.PathInSchema, leaf.dataType, dict, want)
			}
		}
	}
	_, cols := wReadColumns(t, data)
	got := wAssembleRows(t, s, cols, len(rows))
	for i := range rows {
		want := wExpectedStored(fields, rows[i])
		for j := range want {
			if g, w := wNormalize(got[i][j]), wNormalize(want[j]); !reflect.DeepEqual(g, w) {
				t.Fatalf("row %d field %s: got %#v, want %#v", i, fields[j].Name, g, w)
			}
		}
	}

	// unique values: PLAIN from the first page, as parquet-mr falls back
	unique := []types.DataField{wField(0, "id", types.BigIntType()), wField(1, "s", types.StringType()), wField(2, "ts", types.TimestampType(6))}
	rows = rows[:0]
	for i := range 30000 {
		rows = append(rows, []any{int64(i), fmt.Sprintf("event-%09d", i), types.Timestamp{Millis: int64(i) * 3}})
	}
	data, _ = wWriteFile(t, unique, WriterOptions{}, rows)
	for _, rg := range wReadFooter(t, data).RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.DictionaryPageOffset != 0 {
				t.Errorf("column %v of unique values has a dictionary", c.MetaData.PathInSchema)
			}
		}
	}
}

// TestDistinctSet: the ids are the order of first appearance, as a map
// gives them, for numbers, byte arrays and INT96, across resets.
func TestDistinctSet(t *testing.T) {
	var set distinctSet
	for round, distinct := range []int{1, 7, 300, 5000, 40000} {
		want := map[string]int32{}
		var wantIDs []int32
		set.reset(2 * distinct)
		for i := range 2 * distinct {
			k := (i * 7919) % distinct
			key := fmt.Sprint(k)
			id, ok := want[key]
			if !ok {
				id = int32(len(want))
				want[key] = id
			}
			wantIDs = append(wantIDs, id)
			var added bool
			switch round % 2 {
			case 0:
				added = set.addNumber(uint64(k) << 40)
			default:
				added = set.addBytes([]byte(key))
			}
			if added != !ok {
				t.Fatalf("distinct %d value %d: added %v, want %v", distinct, k, added, !ok)
			}
		}
		if !reflect.DeepEqual(set.ids, wantIDs) {
			t.Fatalf("distinct %d: ids differ from first appearance", distinct)
		}
		if len(set.hashes) != distinct {
			t.Fatalf("distinct %d: %d entries", distinct, len(set.hashes))
		}
	}
}

// TestProbeRows: parquet-mr's first page of 20,000 rows up to 8 columns,
// then as many rows as keep the held values bounded, at least 1,024.
func TestProbeRows(t *testing.T) {
	for _, tc := range []struct{ leaves, want int }{
		{0, 20000}, {1, 20000}, {8, 20000}, {9, 17777}, {100, 1600}, {1000, 1024},
	} {
		if got := probeRows(tc.leaves); got != tc.want {
			t.Errorf("probeRows(%d) = %d, want %d", tc.leaves, got, tc.want)
		}
	}
}

// TestDictionaryPaysMatchesFullCount: stopping early gives the answer of
// counting the whole page, over columns of every cardinality, value
// length and share of NULLs.
func TestDictionaryPaysMatchesFullCount(t *testing.T) {
	full := func(vals []parquet.Value) bool {
		ids := map[string]int32{}
		var seq []int32
		var raw, dict int64
		for _, v := range vals {
			if v.IsNull() {
				continue
			}
			var key []byte
			var size, dsize int64
			switch v.Kind() {
			case parquet.Int64:
				key, size, dsize = fmt.Append(nil, v.Int64()), 8, 8
			default:
				key = v.ByteArray()
				size, dsize = 4+int64(len(key)), 4+int64(len(key))
			}
			raw += size
			id, ok := ids[string(key)]
			if !ok {
				id = int32(len(ids))
				ids[string(key)] = id
				dict += dsize
			}
			if dict > dictionaryMaxBytes {
				return false
			}
			seq = append(seq, id)
			if raw >= dictionaryPageBytes {
				break
			}
		}
		if len(seq) == 0 {
			return false
		}
		return 1+hybridEncodedSize(seq, bits.Len32(uint32(len(ids)-1)))+dict < raw
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var set distinctSet
	agree, pays := 0, 0
	for round := range 600 {
		n := []int{1, 5, 100, 2500, 20000}[round%5]
		distinct := 1 + rng.IntN([]int{n/50 + 1, n + n/2 + 1, 20*n + 1}[rng.IntN(3)])
		sequential := rng.IntN(4) == 0
		length := []int{0, 3, 12, 80, 400}[rng.IntN(5)]
		nulls := rng.IntN(3) == 0
		runs := rng.IntN(2) == 0
		vals := make([]parquet.Value, n)
		k := 0
		for i := range vals {
			switch {
			case sequential:
				k = i * distinct / n
			case !runs || rng.IntN(10) == 0:
				k = rng.IntN(distinct)
			}
			switch {
			case nulls && rng.IntN(4) == 0:
				vals[i] = parquet.NullValue()
			case round%2 == 0:
				vals[i] = parquet.Int64Value(int64(k))
			default:
				vals[i] = parquet.ByteArrayValue(fmt.Appendf(nil, "%0*d", length, k))
			}
		}
		want := full(vals)
		if got := dictionaryPays(&set, vals); got != want {
			t.Fatalf("round %d (%d values, %d distinct, length %d, nulls %v, runs %v): dictionaryPays = %v, full count %v",
				round, n, distinct, length, nulls, runs, got, want)
		}
		// The Writer holds a file's first rows block by block: append them
		// in chunks cut at random, empty ones included.
		var h heldValues
		h.reset(0, true)
		for rest := vals; ; {
			cut := min(len(rest), rng.IntN(300))
			h.append(rest[:cut])
			if rest = rest[cut:]; len(rest) == 0 {
				break
			}
		}
		if got := h.dictionaryPays(&set); got != want {
			t.Fatalf("round %d appended in chunks: dictionaryPays = %v, full count %v", round, got, want)
		}
		agree++
		if want {
			pays++
		}
	}
	if pays == 0 || pays == agree {
		t.Fatalf("%d of %d columns pay: the cases do not cover both answers", pays, agree)
	}
}
