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
package boxes

import "unsafe"

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
)

// Slab makes interfaces from slab arrays. The zero value is ready for
// use; it is not safe for concurrent use.
type Slab struct {
	ints    []int64
	int32s  []int32
	floats  []float64
	strs    []string
	strData []byte
}

func box(typ, data unsafe.Pointer) any {
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, data
	return v
}

// Int64 returns any(v).
func (s *Slab) Int64(v int64) any {
	if len(s.ints) == 0 {
		s.ints = make([]int64, slabLen)
	}
	p := &s.ints[0]
	s.ints = s.ints[1:]
	*p = v
	return box(int64Type, unsafe.Pointer(p))
}

// Int32 returns any(v).
func (s *Slab) Int32(v int32) any {
	if len(s.int32s) == 0 {
		s.int32s = make([]int32, slabLen)
	}
	p := &s.int32s[0]
	s.int32s = s.int32s[1:]
	*p = v
	return box(int32Type, unsafe.Pointer(p))
}

// Float64 returns any(v).
func (s *Slab) Float64(v float64) any {
	if len(s.floats) == 0 {
		s.floats = make([]float64, slabLen)
	}
	p := &s.floats[0]
	s.floats = s.floats[1:]
	*p = v
	return box(float64Type, unsafe.Pointer(p))
}

// String returns any(string(b)): a copy of b, whose bytes share an array
// with other short strings of the slab.
func (s *Slab) String(b []byte) any {
	if len(s.strs) == 0 {
		s.strs = make([]string, slabLen)
	}
	p := &s.strs[0]
	s.strs = s.strs[1:]
	switch {
	case len(b) == 0:
		*p = ""
	case len(b) > maxShared:
		*p = string(b)
	default:
		if len(s.strData) < len(b) {
			s.strData = make([]byte, sharedBytes)
		}
		n := copy(s.strData, b)
		*p = unsafe.String(&s.strData[0], n)
		s.strData = s.strData[n:]
	}
	return box(stringType, unsafe.Pointer(p))
}
