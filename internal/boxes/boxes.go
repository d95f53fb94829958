// Package boxes puts decoded values into interfaces (any) from slabs:
// converting an int64, a float64 or a string to any allocates its value on
// the heap, once per value, which dominates the allocations of readers that
// produce rows of any (a Parquet column, a BinaryRow). A Slab stores the
// values of many conversions in one array and makes each interface point
// at its element, as the runtime's conversion points at its own
// allocation: the interfaces are ordinary values, compare and convert back
// as any other, and keep their slab alive as long as they live.
//
// A Slab never writes an element twice, so no interface it made changes.
// It relies on the layout of an empty interface (a type word, then a
// pointer to the value for types that are not pointer-shaped), which
// reflect and the runtime share and which has not changed since Go 1.4.
//
// It lives outside lakecore because lakecore's readers and the paimon
// input's message builder both use it.
package boxes

import (
	"math/big"
	"unsafe"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// slabLen is the values of one slab array; strings of up to maxShared
// bytes share byte arrays of sharedBytes.
const (
	slabLen     = 128
	sharedBytes = 4096
	maxShared   = 256
)

// eface is the layout of an empty interface.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	int64Type   = typeOf(int64(0))
	int32Type   = typeOf(int32(0))
	float64Type = typeOf(float64(0))
	stringType  = typeOf("")
	stampType   = typeOf(types.Timestamp{})
	decimalType = typeOf(types.Decimal{})
)

// Slab makes interfaces from slab arrays. The zero value is ready for
// use; it is not safe for concurrent use. A nil *Slab makes each value
// its own heap allocation, as the plain conversion does, so that callers
// with and without a slab share one code path.
type Slab struct {
	ints    []int64
	int32s  []int32
	floats  []float64
	strs    []string
	strData []byte
	stamps  []types.Timestamp
	decs    []decimalBox
	bigDecs []types.Decimal
	anys    []any
}

func box(typ, data unsafe.Pointer) any {
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, data
	return v
}

// next stores v in the next element of *arr, a new array of slabLen when
// the last is used up, and returns the element's address.
func next[T any](arr *[]T, v T) unsafe.Pointer {
	if len(*arr) == 0 {
		*arr = make([]T, slabLen)
	}
	p := &(*arr)[0]
	*arr = (*arr)[1:]
	*p = v
	return unsafe.Pointer(p)
}

// Int64 returns any(v).
func (s *Slab) Int64(v int64) any {
	if s == nil {
		return v
	}
	return box(int64Type, next(&s.ints, v))
}

// Int32 returns any(v).
func (s *Slab) Int32(v int32) any {
	if s == nil {
		return v
	}
	return box(int32Type, next(&s.int32s, v))
}

// Float64 returns any(v).
func (s *Slab) Float64(v float64) any {
	if s == nil {
		return v
	}
	return box(float64Type, next(&s.floats, v))
}

// String returns any(string(b)): a copy of b, whose bytes share an array
// with other short strings of the slab.
func (s *Slab) String(b []byte) any {
	if s == nil {
		return string(b)
	}
	var str string
	switch {
	case len(b) == 0:
	case len(b) > maxShared:
		str = string(b)
	default:
		if len(s.strData) < len(b) {
			s.strData = make([]byte, sharedBytes)
		}
		n := copy(s.strData, b)
		str = unsafe.String(&s.strData[0], n)
		s.strData = s.strData[n:]
	}
	return box(stringType, next(&s.strs, str))
}

// Timestamp returns any(v).
func (s *Slab) Timestamp(v types.Timestamp) any {
	if s == nil {
		return v
	}
	return box(stampType, next(&s.stamps, v))
}

// decimalBox holds a decimal of up to one word and its big.Int in one
// slab element, so that one array serves all three.
type decimalBox struct {
	d types.Decimal
	z big.Int
	w [1]big.Word
}

// Decimal returns any(types.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}).
// The big.Int is the decimal's own: its word is a slice of capacity one,
// so arithmetic that grows it reallocates as for any big.Int, and no other
// value shares it.
func (s *Slab) Decimal(unscaled int64, scale int) any {
	u := uint64(unscaled)
	if unscaled < 0 {
		u = -u
	}
	if s == nil {
		return types.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
	}
	if unscaled == 0 || uint64(big.Word(u)) != u { // zero has no words; 32-bit words
		return box(decimalType, next(&s.bigDecs, types.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}))
	}
	if len(s.decs) == 0 {
		s.decs = make([]decimalBox, slabLen)
	}
	b := &s.decs[0]
	s.decs = s.decs[1:]
	b.w[0] = big.Word(u)
	b.z.SetBits(b.w[:1:1])
	if unscaled < 0 {
		b.z.Neg(&b.z)
	}
	b.d = types.Decimal{Unscaled: &b.z, Scale: scale}
	return box(decimalType, unsafe.Pointer(&b.d))
}

// Anys returns a zeroed []any of length and capacity n, a slice of a slab
// array for n up to slabLen (its capacity ends at its length, so appending
// to it reallocates and never writes into the next slice).
func (s *Slab) Anys(n int) []any {
	if s == nil || n > slabLen {
		return make([]any, n)
	}
	if len(s.anys) < n {
		s.anys = make([]any, slabLen*4)
	}
	v := s.anys[:n:n]
	s.anys = s.anys[n:]
	return v
}
