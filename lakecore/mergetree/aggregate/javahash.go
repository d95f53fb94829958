package aggregate

import (
	"fmt"
	"math"
	"math/big"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// hashableKind reports whether Java hashes and compares the internal value
// of a t by its content (Boolean, Byte, Short, Integer, Long, Float,
// Double, BinaryString, Decimal, Timestamp), so that a HashMap over them
// can be reproduced. byte[] (BINARY, VARBINARY) uses identity, and the
// nested types are the reader's own objects; both are refused.
func hashableKind(t types.DataType) bool {
	switch t.Kind {
	case types.KindBinary, types.KindVarBinary, types.KindArray, types.KindMap, types.KindMultiset, types.KindRow:
		return false
	}
	return true
}

// javaHash is hashCode of the Java internal value of v (0 for NULL):
// Boolean 1231/1237, Byte/Short/Integer (and DATE, TIME) their value,
// Long and Double folded with x ^ x>>>32, Float.floatToIntBits,
// BinaryString Murmur3 of its UTF-8 (MemorySegmentUtils.hash), Decimal
// BigDecimal.hashCode (31 × BigInteger hash of the unscaled value +
// scale), Timestamp (int)millis ^ (int)(millis>>32), × 31 + nanos.
func javaHash(v any) (int32, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case bool:
		if x {
			return 1231, nil
		}
		return 1237, nil
	case int8:
		return int32(x), nil
	case int16:
		return int32(x), nil
	case int32:
		return x, nil
	case types.Date:
		return int32(x), nil
	case types.Time:
		return int32(x), nil
	case int64:
		return int32(x ^ int64(uint64(x)>>32)), nil
	case float32:
		return int32(floatToIntBits(x)), nil
	case float64:
		b := doubleToLongBits(x)
		return int32(b ^ b>>32), nil
	case string:
		return binrow.Hash([]byte(x)), nil
	case types.Decimal:
		return 31*bigIntHash(unscaled(x)) + int32(x.Scale), nil
	case types.Timestamp:
		h := int32(x.Millis) ^ int32(x.Millis>>32)
		return 31*h + x.NanoOfMilli, nil
	}
	return 0, fmt.Errorf("%w: Java's hash of a %T is not reproduced", ErrUnsupportedFunction, v)
}

func floatToIntBits(f float32) uint32 {
	if f != f {
		return 0x7fc00000
	}
	return math.Float32bits(f)
}

func doubleToLongBits(f float64) uint64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return math.Float64bits(f)
}

// bigIntHash is BigInteger.hashCode: the 32-bit big-endian words of the
// magnitude folded with h = 31h + word, times the signum.
func bigIntHash(u *big.Int) int32 {
	mag := new(big.Int).Abs(u).Bytes()
	for len(mag)%4 != 0 {
		mag = append([]byte{0}, mag...)
	}
	var h int32
	for i := 0; i < len(mag); i += 4 {
		w := uint32(mag[i])<<24 | uint32(mag[i+1])<<16 | uint32(mag[i+2])<<8 | uint32(mag[i+3])
		h = 31*h + int32(w)
	}
	return h * int32(u.Sign())
}

// javaEquals is equals of two Java internal values of one hashable type:
// Float/Double by their bits (NaN equals NaN, -0.0 differs from 0.0),
// Decimal by compareTo, the others by value.
func javaEquals(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case float32:
		y, ok := b.(float32)
		return ok && floatToIntBits(x) == floatToIntBits(y)
	case float64:
		y, ok := b.(float64)
		return ok && doubleToLongBits(x) == doubleToLongBits(y)
	case types.Decimal:
		y, ok := b.(types.Decimal)
		return ok && x.Cmp(y) == 0
	case string, bool, int8, int16, int32, int64, types.Date, types.Time, types.Timestamp:
		return a == b
	}
	return false
}

// hashMap reproduces the iteration order of java.util.HashMap (new
// HashMap<>(): 16 bins, load factor 0.75): an entry goes to bin
// (h ^ h>>>16) & (n-1), bins are lists in insertion order, and a resize
// doubles n keeping each bin's relative order, so iteration is by bin then
// by insertion. A bin Java would convert to a red-black tree (a ninth
// entry in a table of at least 64 bins) makes put fail: the tree's order is
// not reproduced.
type hashMap struct {
	bins [][]*hashEntry
	size int
	eq   func(a, b any) bool
}

type hashEntry struct {
	hash       int32
	key, value any
}

const (
	treeifyThreshold   = 8
	minTreeifyCapacity = 64
)

func newHashMap(eq func(a, b any) bool) *hashMap { return &hashMap{eq: eq} }

func spread(h int32) int32 { return h ^ int32(uint32(h)>>16) }

func (m *hashMap) index(h int32) int { return int(spread(h)) & (len(m.bins) - 1) }

func (m *hashMap) find(h int32, key any) *hashEntry {
	if len(m.bins) == 0 {
		return nil
	}
	for _, e := range m.bins[m.index(h)] {
		if e.hash == h && m.eq(e.key, key) {
			return e
		}
	}
	return nil
}

// get returns the value of key and whether it is present.
func (m *hashMap) get(h int32, key any) (any, bool) {
	if e := m.find(h, key); e != nil {
		return e.value, true
	}
	return nil, false
}

// put is HashMap.put: an existing key keeps its place and takes the value.
func (m *hashMap) put(h int32, key, value any) error {
	if len(m.bins) == 0 {
		m.bins = make([][]*hashEntry, 16)
	}
	if e := m.find(h, key); e != nil {
		e.value = value
		return nil
	}
	i := m.index(h)
	n := len(m.bins[i])
	m.bins[i] = append(m.bins[i], &hashEntry{hash: h, key: key, value: value})
	if n >= treeifyThreshold {
		// HashMap.treeifyBin: resize a small table, else build a tree.
		if len(m.bins) < minTreeifyCapacity {
			m.resize()
		} else {
			return fmt.Errorf("%w: %d keys collide in one bin of Java's HashMap, which Java turns into a tree whose order is not reproduced",
				ErrUnsupportedFunction, n+1)
		}
	}
	m.size++
	if m.size > len(m.bins)*3/4 {
		m.resize()
	}
	return nil
}

// computeIfAbsent is HashMap.computeIfAbsent, which differs from put in
// three ways that change the order: it resizes before inserting, when the
// size already exceeds the threshold (put resizes right after the
// insertion that exceeds it); it inserts at the head of the bin; and it
// treeifies a bin that already held 7 entries. It returns the key's value,
// adding value() when the key is absent.
func (m *hashMap) computeIfAbsent(h int32, key any, value func() any) (any, error) {
	if len(m.bins) == 0 {
		m.bins = make([][]*hashEntry, 16)
	} else if m.size > len(m.bins)*3/4 {
		m.resize()
	}
	if e := m.find(h, key); e != nil {
		return e.value, nil
	}
	i := m.index(h)
	n := len(m.bins[i])
	v := value()
	m.bins[i] = append([]*hashEntry{{hash: h, key: key, value: v}}, m.bins[i]...)
	if n >= treeifyThreshold-1 {
		if len(m.bins) < minTreeifyCapacity {
			m.resize()
		} else {
			return nil, fmt.Errorf("%w: %d keys collide in one bin of Java's HashMap, which Java turns into a tree whose order is not reproduced",
				ErrUnsupportedFunction, n+1)
		}
	}
	m.size++
	return v, nil
}

// remove is HashMap.remove.
func (m *hashMap) remove(h int32, key any) {
	if len(m.bins) == 0 {
		return
	}
	i := m.index(h)
	for j, e := range m.bins[i] {
		if e.hash == h && m.eq(e.key, key) {
			m.bins[i] = append(m.bins[i][:j:j], m.bins[i][j+1:]...)
			m.size--
			return
		}
	}
}

func (m *hashMap) resize() {
	old := m.bins
	m.bins = make([][]*hashEntry, 2*len(old))
	for _, bin := range old {
		for _, e := range bin {
			i := m.index(e.hash)
			m.bins[i] = append(m.bins[i], e)
		}
	}
}

// entries returns the entries in Java's iteration order.
func (m *hashMap) entries() []*hashEntry {
	out := make([]*hashEntry, 0, m.size)
	for _, bin := range m.bins {
		out = append(out, bin...)
	}
	return out
}
