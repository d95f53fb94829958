package binrow_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// compareKeyTypes are key types with a generator of values that often
// collide, so that equal, smaller and larger pairs all occur.
var compareKeyTypes = []struct {
	t   types.DataType
	gen func(r *rand.Rand) any
}{
	{types.BooleanType(), func(r *rand.Rand) any { return r.IntN(2) == 0 }},
	{types.TinyIntType(), func(r *rand.Rand) any { return int8(r.IntN(256) - 128) }},
	{types.SmallIntType(), func(r *rand.Rand) any { return int16(r.IntN(600) - 300) }},
	{types.IntType(), func(r *rand.Rand) any { return int32(r.IntN(7)-3) * math.MaxInt32 / 3 }},
	{types.BigIntType(), func(r *rand.Rand) any { return int64(r.IntN(9)-4) * (math.MaxInt64 / 4) }},
	{types.FloatType(), func(r *rand.Rand) any { return float32(r.IntN(5)-2) / 3 }},
	{types.DoubleType(), func(r *rand.Rand) any {
		return []float64{math.Inf(-1), -1.5, math.Copysign(0, -1), 0, 2, math.NaN()}[r.IntN(6)]
	}},
	{types.StringType(), func(r *rand.Rand) any { return []string{"", "a", "ab", "abcdefg", "abcdefgh", "é", "\xff"}[r.IntN(7)] }},
	{types.CharType(2), func(r *rand.Rand) any { return []string{"a ", "ab", "b "}[r.IntN(3)] }},
	{types.BytesType(), func(r *rand.Rand) any { return [][]byte{{}, {0}, {0, 0}, {0x80}, {1, 2, 3, 4, 5, 6, 7, 8}}[r.IntN(5)] }},
	{types.DecimalType(10, 2), func(r *rand.Rand) any { return types.NewDecimal(int64(r.IntN(11)-5)*123456, 2) }},
	{types.DecimalType(30, 3), func(r *rand.Rand) any {
		n := new(big.Int).Lsh(big.NewInt(int64(r.IntN(9)-4)), 70)
		return types.Decimal{Unscaled: n.Add(n, big.NewInt(int64(r.IntN(3)))), Scale: 3}
	}},
	{types.DateType(), func(r *rand.Rand) any { return types.Date(r.IntN(5) - 2) }},
	{types.TimeType(0), func(r *rand.Rand) any { return types.Time(r.IntN(5) * 1000) }},
	{types.TimestampType(3), func(r *rand.Rand) any { return types.Timestamp{Millis: int64(r.IntN(5) - 2)} }},
	{types.TimestampType(9), func(r *rand.Rand) any {
		return types.Timestamp{Millis: int64(r.IntN(3) - 1), NanoOfMilli: int32(r.IntN(3) * 1000)}
	}},
	{types.LocalZonedTimestampType(6), func(r *rand.Rand) any {
		return types.Timestamp{Millis: int64(r.IntN(3)), NanoOfMilli: int32(r.IntN(2) * 5000)}
	}},
}

// TestCompareKey: for keys of one and of two columns of every key type,
// CompareKey of an encoded key against a key orders them as
// kv.CompareKeys orders the two keys.
func TestCompareKey(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, a := range compareKeyTypes {
		for _, b := range append(compareKeyTypes[:0:0], compareKeyTypes[3], compareKeyTypes[7], a) {
			for _, ts := range [][]types.DataType{{a.t}, {a.t, b.t}} {
				t.Run(fmt.Sprint(ts), func(t *testing.T) {
					for range 300 {
						x, y := []any{a.gen(r)}, []any{a.gen(r)}
						if len(ts) == 2 {
							x, y = append(x, b.gen(r)), append(y, b.gen(r))
						}
						row, err := binrow.Encode(ts, x)
						if err != nil {
							t.Fatal(err)
						}
						got, err := binrow.CompareKey(ts, row, y)
						if err != nil {
							t.Fatal(err)
						}
						if want := kv.CompareKeys(x, y); got != want {
							t.Fatalf("CompareKey(%v, %v) = %d, kv.CompareKeys %d", x, y, got, want)
						}
					}
				})
			}
		}
	}
}

// FuzzCompareKey: CompareKey never panics on malformed rows, and its errors
// wrap ErrCorrupt.
func FuzzCompareKey(f *testing.F) {
	ts := []types.DataType{types.StringType(), types.DecimalType(30, 2), types.TimestampType(9), types.BigIntType()}
	key := []any{"abcdefgh", types.NewDecimal(5, 2), types.Timestamp{Millis: 1, NanoOfMilli: 2}, int64(3)}
	row, err := binrow.Encode(ts, key)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(row)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, row []byte) {
		if _, err := binrow.CompareKey(ts, row, key); err != nil && !errors.Is(err, binrow.ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
	})
}
