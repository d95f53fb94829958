package write

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSort checks radixSort against a stable comparison sort by
// prefix, for buffers whose sequence numbers ascend: few and many distinct
// prefixes, shared and differing high bytes, sizes around its threshold.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 255, 256, 257, 5000} {
		for _, gen := range []func() uint64{
			func() uint64 { return rng.Uint64() },
			func() uint64 { return 1<<63 | rng.Uint64N(1000) },
			func() uint64 { return rng.Uint64N(3) << 40 },
			func() uint64 { return 7 },
		} {
			entries := make([]bufferEntry, n)
			for i := range entries {
				entries[i] = bufferEntry{prefix: gen(), seq: int64(i * 3), off: uint32(i)}
			}
			want := slices.Clone(entries)
			slices.SortStableFunc(want, func(x, y bufferEntry) int { return cmp.Compare(x.prefix, y.prefix) })
			radixSort(entries)
			if !slices.Equal(entries, want) {
				t.Fatalf("%d entries: radixSort differs from the comparison sort", n)
			}
		}
	}
}
