package mergetree

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestRecordSorter checks that RecordSorter puts write buffers in exactly
// the order a stable sort, or slices.SortFunc, by RecordOrder.Compare
// gives, for key types with whole, partial and no prefixes, composite keys
// and sequence fields.
func TestRecordSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "a", "a\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgz", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x01", "zz"}
	gens := map[string]func() any{
		"int64":     func() any { return []int64{math.MinInt64, -5, -1, 0, 1, 7, math.MaxInt64}[rng.IntN(7)] },
		"int32":     func() any { return int32(rng.IntN(9) - 4) },
		"int16":     func() any { return int16(rng.IntN(9) - 4) },
		"int8":      func() any { return int8(rng.IntN(9) - 4) },
		"bool":      func() any { return rng.IntN(2) == 0 },
		"date":      func() any { return types.Date(rng.IntN(9) - 4) },
		"time":      func() any { return types.Time(rng.IntN(9)) },
		"string":    func() any { return strs[rng.IntN(len(strs))] },
		"bytes":     func() any { return []byte(strs[rng.IntN(len(strs))]) },
		"double":    func() any { return []float64{math.Inf(-1), -1, 0, math.Copysign(0, -1), 2, math.NaN()}[rng.IntN(6)] },
		"timestamp": func() any { return types.Timestamp{Millis: int64(rng.IntN(5) - 2), NanoOfMilli: int32(rng.IntN(3))} },
	}
	for name, gen := range gens {
		for _, order := range []*RecordOrder{
			{KeyFields: []int{0}},
			{KeyFields: []int{0, 1}},
			{KeyFields: []int{0}, Sequence: kv.Comparator{Fields: []int{1}}},
			{KeyFields: []int{0}, Sequence: kv.Comparator{Fields: []int{1}, Descending: true}},
		} {
			for _, n := range []int{0, 1, 2, 17, 300} {
				recs := make([]*KeyValue, n)
				for i := range recs {
					recs[i] = &KeyValue{Value: []any{gen(), int64(rng.IntN(3)), i}, Seq: int64(rng.IntN(1000)*1000 + i)}
				}
				for _, stable := range []bool{true, false} {
					want, got := slices.Clone(recs), slices.Clone(recs)
					if stable {
						slices.SortStableFunc(want, order.Compare)
					} else {
						slices.SortFunc(want, order.Compare)
					}
					NewRecordSorter(order).Sort(got, stable)
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("%s, keys %v, sequence %v, %d records, stable %v: record %d is %v (seq %d), want %v (seq %d)", name, order.KeyFields, order.Sequence.Fields, n,
								stable, i, got[i].Value, got[i].Seq, want[i].Value, want[i].Seq)
						}
					}
				}
			}
		}
	}
}
