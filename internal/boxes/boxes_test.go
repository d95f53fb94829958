package boxes

import (
	"math"
	"math/big"
	"runtime"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestSlab checks that the interfaces a Slab makes equal the ordinary
// conversions, keep their values after the slab moved on and after
// garbage collections, and convert back.
func TestSlab(t *testing.T) {
	var s Slab
	var got, want []any
	long := strings.Repeat("x", maxShared+1)
	for i := range 1000 {
		v := int64(i) * 1_000_003
		f := float64(i) * 0.37
		if i == 7 {
			f = math.Inf(-1)
		}
		str := []byte("value-" + strings.Repeat("y", i%300))
		got = append(got, s.Int64(v), s.Int32(int32(-i)), s.Float64(f), s.String(str), s.String(nil), s.String([]byte(long)))
		want = append(want, v, int32(-i), f, string(str), "", long)
		clear(str) // String copies
	}
	runtime.GC()
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("value %d: %#v, want %#v", i, got[i], want[i])
		}
	}
	if x, ok := got[0].(int64); !ok || x != 0 {
		t.Fatalf("int64 assertion: %v %v", x, ok)
	}
	if x, ok := got[3].(string); !ok || x != "value-" {
		t.Fatalf("string assertion: %q %v", x, ok)
	}
	m := map[any]int{got[6]: 1}
	if m[int64(1_000_003)] != 1 {
		t.Fatal("a slab int64 is not found as a map key equal to the ordinary one")
	}
}

// TestSlabTimestampDecimal checks Timestamp and Decimal against the
// ordinary conversions and big.NewInt, through garbage collections, and
// that the big.Int of a slab decimal is its own: changing one changes no
// other.
func TestSlabTimestampDecimal(t *testing.T) {
	var s Slab
	var got, want []any
	var ints []*big.Int
	for i := range 1000 {
		ts := types.Timestamp{Millis: int64(i) * -86_400_001, NanoOfMilli: int32(i * 997)}
		v := int64(i-500) * 1_000_000_007
		switch i {
		case 1:
			v = math.MinInt64
		case 2:
			v = math.MaxInt64
		case 3:
			v = 0
		}
		d := s.Decimal(v, i%7)
		ints = append(ints, d.(types.Decimal).Unscaled)
		got = append(got, s.Timestamp(ts), d)
		want = append(want, ts, types.Decimal{Unscaled: big.NewInt(v), Scale: i % 7})
	}
	runtime.GC()
	for i := range got {
		switch w := want[i].(type) {
		case types.Timestamp:
			if got[i] != w {
				t.Fatalf("value %d: %#v, want %#v", i, got[i], w)
			}
		case types.Decimal:
			g, ok := got[i].(types.Decimal)
			if !ok || g.Scale != w.Scale || g.Unscaled.Cmp(w.Unscaled) != 0 || g.Unscaled.String() != w.Unscaled.String() {
				t.Fatalf("value %d: %#v, want %v", i, got[i], w)
			}
		}
	}
	// Arithmetic in place on one decimal's big.Int, growing and not, leaves its
	// neighbours alone.
	ints[10].Add(ints[10], big.NewInt(1))
	ints[20].Lsh(ints[20], 200)
	for i, b := range ints {
		v := int64(i-500) * 1_000_000_007
		want := big.NewInt(v)
		switch i {
		case 1, 2, 3:
			continue
		case 10:
			want.Add(want, big.NewInt(1))
		case 20:
			want.Lsh(want, 200)
		}
		if b.Cmp(want) != 0 {
			t.Fatalf("big.Int %d is %v, want %v", i, b, want)
		}
	}
}

// TestAnys: the slices Anys returns are zeroed, of the length asked for,
// and appending to one reallocates instead of writing into the next.
func TestAnys(t *testing.T) {
	var s Slab
	var rows [][]any
	for i := range 1000 {
		n := 1 + i%13
		if i%100 == 0 {
			n = slabLen + 1 // larger than a slab array: its own allocation
		}
		r := s.Anys(n)
		if len(r) != n || cap(r) != n {
			t.Fatalf("Anys(%d): len %d cap %d", n, len(r), cap(r))
		}
		for j, v := range r {
			if v != nil {
				t.Fatalf("Anys(%d)[%d] is %v, want nil", n, j, v)
			}
			r[j] = i
		}
		rows = append(rows, r)
	}
	for i := range rows {
		rows[i] = append(rows[i], "appended")
	}
	for i, r := range rows {
		for j, v := range r[:len(r)-1] {
			if v != i {
				t.Fatalf("row %d column %d is %v after the appends, want %d", i, j, v, i)
			}
		}
	}
}

// TestNilSlab: a nil *Slab gives the plain conversions, each its own
// allocation.
func TestNilSlab(t *testing.T) {
	var s *Slab
	for i, c := range []struct{ got, want any }{
		{s.Int64(-7), int64(-7)},
		{s.Int32(7), int32(7)},
		{s.Float64(1.5), 1.5},
		{s.String([]byte("x")), "x"},
		{s.Timestamp(types.Timestamp{Millis: 3, NanoOfMilli: 4}), types.Timestamp{Millis: 3, NanoOfMilli: 4}},
	} {
		if c.got != c.want {
			t.Errorf("value %d: %#v, want %#v", i, c.got, c.want)
		}
	}
	for _, n := range []int64{0, -12345, 1 << 62} {
		d, ok := s.Decimal(n, 2).(types.Decimal)
		if !ok || d.Scale != 2 || d.Unscaled.Cmp(big.NewInt(n)) != 0 {
			t.Errorf("Decimal(%d, 2) = %#v", n, s.Decimal(n, 2))
		}
	}
	if r := s.Anys(3); len(r) != 3 || cap(r) != 3 {
		t.Errorf("Anys(3): len %d cap %d", len(r), cap(r))
	}
}
