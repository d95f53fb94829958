package datafile

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/benthos-paimon/benthos-paimon/internal/paymentevent"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
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

// TestHeldPageBufferSameFile: a file Close starts (every row held) gets a
// page buffer sized to its rows, and the file is byte for byte the one
// parquet-go's default page buffer writes, for every type, NULLs and
// nested values included; a file too large for that keeps the default.
func TestHeldPageBufferSameFile(t *testing.T) {
	for _, tc := range heldFileCases() {
		fields, base, n := tc.fields, tc.rows, tc.n
		t.Run(fmt.Sprint(tc.name, "/", n), func(t *testing.T) {
			var files [2][]byte
			var pageBuffer int
			for k, defaultSize := range []bool{true, false} {
				var buf bytes.Buffer
				w, err := NewWriter(&buf, fields, WriterOptions{})
				if err != nil {
					t.Fatal(err)
				}
				w.defaultPageBuffer = defaultSize
				for i := range n {
					if err := w.Write(base[i%len(base)]); err != nil {
						t.Fatal(err)
					}
				}
				pageBuffer = w.heldPageBuffer()
				if _, err := w.Close(); err != nil {
					t.Fatal(err)
				}
				files[k] = buf.Bytes()
			}
			if small := tc.sized; (pageBuffer > 0) != small {
				t.Fatalf("%d rows: page buffer %d, want it sized to the rows: %v", n, pageBuffer, small)
			}
			if !bytes.Equal(files[0], files[1]) {
				t.Fatalf("%d rows: the file differs with a page buffer of %d bytes (%d vs %d bytes)", n, pageBuffer, len(files[1]), len(files[0]))
			}
		})
	}
}

type heldFileCase struct {
	name   string
	fields []types.DataField
	rows   [][]any
	n      int  // rows written, cycling through rows
	sized  bool // heldPageBuffer applies
}

// heldFileCases are the all-types rows (NULLs, nested, every kind) and
// the payment rows (required columns, no levels), small and large files.
func heldFileCases() []heldFileCase {
	var out []heldFileCase
	for _, n := range []int{1, 7, 130, 1000, 2000, 5000} {
		out = append(out, heldFileCase{"all types", wAllTypesFields(), wAllTypesRows(), n, n <= 2000})
	}
	var payments [][]any
	for i := range int64(20_000) {
		payments = append(payments, paymentevent.Row(i+1, 1))
	}
	for _, n := range []int{1, 1000, 2500, 20_000} {
		out = append(out, heldFileCase{"payments", paymentevent.Fields(), payments, n, n <= 2500})
	}
	return out
}
