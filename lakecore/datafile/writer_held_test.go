package datafile

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// TestHeldValuesRoundTrip: values appended to a heldValues in chunks come
// back from values, over any range, with the kind, bits, bytes, levels and
// column index they went in with, for every physical kind, with and without
// levels and NULLs.
func TestHeldValuesRoundTrip(t *testing.T) {
	gens := map[string]func(i int) parquet.Value{
		"BOOLEAN":    func(i int) parquet.Value { return parquet.BooleanValue(i%3 == 0) },
		"INT32":      func(i int) parquet.Value { return parquet.Int32Value(int32(i*7919) - 1<<30) },
		"INT64":      func(i int) parquet.Value { return parquet.Int64Value(int64(i)*-7919 + math.MaxInt64/3) },
		"FLOAT":      func(i int) parquet.Value { return parquet.FloatValue(float32(i) / -3) },
		"DOUBLE":     func(i int) parquet.Value { return parquet.DoubleValue(math.Inf(1) - float64(i%2)*math.Inf(1)) },
		"DOUBLE NaN": func(i int) parquet.Value { return parquet.DoubleValue(math.NaN()) },
		"INT96": func(i int) parquet.Value {
			return parquet.Int96Value(deprecated.Int96{uint32(i), math.MaxUint32, 2440588})
		},
		"BYTE_ARRAY":           func(i int) parquet.Value { return parquet.ByteArrayValue(fmt.Appendf(nil, "%0*d", i%13, i)) },
		"FIXED_LEN_BYTE_ARRAY": func(i int) parquet.Value { return parquet.FixedLenByteArrayValue(fmt.Appendf(nil, "%016x", i)) },
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for name, gen := range gens {
		for _, shape := range []string{"required", "optional", "repeated"} {
			t.Run(name+"/"+shape, func(t *testing.T) {
				const column = 7
				vals := make([]parquet.Value, 700)
				for i := range vals {
					v := gen(i)
					switch {
					case shape == "required":
					case rng.IntN(4) == 0: // NULL, leading ones included
						v = parquet.Value{}.Level(rng.IntN(2), rng.IntN(2), column)
					default:
						v = v.Level(rng.IntN(2), 2, column)
					}
					vals[i] = v
				}
				var h heldValues
				h.reset(column, shape != "required")
				for rest := vals; len(rest) > 0; {
					cut := min(len(rest), rng.IntN(200))
					h.append(rest[:cut])
					rest = rest[cut:]
				}
				if h.len() != len(vals) {
					t.Fatalf("len = %d, want %d", h.len(), len(vals))
				}
				for range 50 {
					start := rng.IntN(len(vals) + 1)
					end := start + rng.IntN(len(vals)-start+1)
					got := h.values(make([]parquet.Value, 1, 8), start, end)[1:]
					if len(got) != end-start {
						t.Fatalf("values(%d, %d): %d values", start, end, len(got))
					}
					for j, g := range got {
						if w := vals[start+j]; !sameValue(g, w) {
							t.Fatalf("value %d: got %v (kind %v, levels %d/%d, column %d), want %v (kind %v, levels %d/%d, column %d)",
								start+j, g, g.Kind(), g.RepetitionLevel(), g.DefinitionLevel(), g.Column(),
								w, w.Kind(), w.RepetitionLevel(), w.DefinitionLevel(), w.Column())
						}
					}
				}
			})
		}
	}
}

// sameValue compares every part of two parquet.Values but where their
// bytes are stored.
func sameValue(a, b parquet.Value) bool {
	if a.IsNull() != b.IsNull() || a.RepetitionLevel() != b.RepetitionLevel() ||
		a.DefinitionLevel() != b.DefinitionLevel() || a.Column() != b.Column() {
		return false
	}
	if a.IsNull() {
		return true
	}
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case parquet.Boolean:
		return a.Boolean() == b.Boolean()
	case parquet.Int32, parquet.Float:
		return a.Uint32() == b.Uint32()
	case parquet.Int64, parquet.Double:
		return a.Uint64() == b.Uint64()
	case parquet.Int96:
		return a.Int96() == b.Int96()
	default:
		return bytes.Equal(a.ByteArray(), b.ByteArray())
	}
}
