package types_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestCompare(t *testing.T) {
	nan := math.NaN()
	dec := func(unscaled int64, scale int) types.Decimal {
		return types.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
	}
	cases := []struct {
		name string
		a, b any
		want int
		ok   bool
	}{
		{"false < true", false, true, -1, true},
		{"true = true", true, true, 0, true},
		{"int8", int8(-1), int8(1), -1, true},
		{"int16", int16(300), int16(-300), 1, true},
		{"int32", int32(7), int32(7), 0, true},
		{"int64", int64(math.MinInt64), int64(math.MaxInt64), -1, true},
		{"date", types.Date(1), types.Date(0), 1, true},
		{"time", types.Time(0), types.Time(86399999), -1, true},
		{"-0 < +0", math.Copysign(0, -1), 0.0, -1, true},
		{"NaN > +Inf", nan, math.Inf(1), 1, true},
		{"NaN = NaN", nan, nan, 0, true},
		{"float32 NaN > max", float32(nan), float32(math.MaxFloat32), 1, true},
		{"float32", float32(1.5), float32(2.5), -1, true},
		{"strings by unsigned bytes", "é", "z", 1, true},
		{"string prefix first", "ab", "abc", -1, true},
		{"decimal across scales", dec(150, 2), dec(15, 1), 0, true},
		{"decimal", dec(-1, 0), dec(1, 3), -1, true},
		{"timestamp nanos", types.Timestamp{Millis: 5, NanoOfMilli: 1}, types.Timestamp{Millis: 5}, 1, true},
		{"timestamp millis", types.Timestamp{Millis: -1, NanoOfMilli: 999999}, types.Timestamp{Millis: 0}, -1, true},
		{"different Go types", int32(1), int64(1), 0, false},
		{"bytes are not Comparable", []byte("a"), []byte("b"), 0, false},
		{"nil", nil, nil, 0, false},
	}
	for _, tc := range cases {
		got, ok := types.Compare(tc.a, tc.b)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: Compare(%v, %v) = %d, %v; want %d, %v", tc.name, tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
		if ok && types.Comparable(tc.a) != true {
			t.Errorf("%s: Comparable(%T) = false", tc.name, tc.a)
		}
		if back, _ := types.Compare(tc.b, tc.a); ok && back != -got {
			t.Errorf("%s: reversed = %d, want %d", tc.name, back, -got)
		}
	}
	for _, v := range []any{[]byte("x"), []any{int32(1)}, types.Map{}, nil, 3} {
		if types.Comparable(v) {
			t.Errorf("Comparable(%T) = true", v)
		}
	}
}
