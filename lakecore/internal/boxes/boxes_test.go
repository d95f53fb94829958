package boxes

import (
	"math"
	"runtime"
	"strings"
	"testing"
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
