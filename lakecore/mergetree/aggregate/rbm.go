package aggregate

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sort"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// rbm32Func is FieldRoaringBitmap32Agg over VARBINARY: both values are
// RoaringBitmap's portable serialization
// (https://github.com/RoaringBitmap/RoaringFormatSpec); the result is their
// union serialized as Paimon's RoaringBitmap32.serialize does it, after
// runOptimize, byte for byte as RoaringBitmap 1.2.1 (the version Paimon
// 1.4.2 bundles). A NULL side returns the other value unchanged.
//
// Java's container choice depends on the path of the union, not only on
// the result: a chunk whose run form is exactly as large as its array form
// (cardinality 2r or 2r+1 for r runs) stays a run container when a run
// container took part in its union (RunContainer.toEfficientContainer keeps
// a run on a tie, counting the array's 2-byte length), and stays an array
// when only arrays did (ArrayContainer.runOptimize converts only when
// strictly smaller). rbmUnion tracks that.
type rbm32Func struct{ noRetract }

func (f rbm32Func) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	a, ok1 := acc.([]byte)
	b, ok2 := in.([]byte)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: rbm32 wants VARBINARY ([]byte), got %T and %T", ErrInvalidValue, acc, in)
	}
	x, err := decodeRoaring(a)
	if err != nil {
		return nil, err
	}
	y, err := decodeRoaring(b)
	if err != nil {
		return nil, err
	}
	return encodeRoaring(rbmUnion(x, y)), nil
}

func (f rbm32Func) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }
func (rbm32Func) Reset()                                 {}

func newRBM32(f types.DataField) (Func, error) {
	if f.Type.Kind != types.KindVarBinary {
		return nil, typeError(nameRBM32, f, "VARBINARY")
	}
	return rbm32Func{noRetract{nameRBM32}}, nil
}

// Container kinds of the portable format.
const (
	rbArray = iota
	rbBitmap
	rbRun
)

const (
	serialCookieNoRun = 12346 // RoaringArray.SERIAL_COOKIE_NO_RUNCONTAINER
	serialCookie      = 12347 // RoaringArray.SERIAL_COOKIE
	noOffsetThreshold = 4     // RoaringArray.NO_OFFSET_THRESHOLD
	arrayMaxSize      = 4096  // ArrayContainer.DEFAULT_MAX_SIZE
	bitmapBytes       = 8192
)

// rbChunk is one container: the low 16 bits of the values whose high 16
// bits are key, and the container kind it had (or, for a union, the kind
// that decides Java's tie: rbRun when a run container took part).
type rbChunk struct {
	key  uint16
	kind int
	bits [1024]uint64
}

func (c *rbChunk) card() int {
	n := 0
	for _, w := range c.bits {
		n += bits.OnesCount64(w)
	}
	return n
}

func (c *rbChunk) runs() int {
	n := 0
	prev := uint64(0) // the bit before the current word
	for _, w := range c.bits {
		// A run starts at every set bit whose lower neighbour is clear.
		starts := w &^ (w<<1 | prev)
		n += bits.OnesCount64(starts)
		prev = w >> 63
	}
	return n
}

func (c *rbChunk) set(v uint16) { c.bits[v>>6] |= 1 << (v & 63) }

func decodeRoaring(b []byte) ([]*rbChunk, error) {
	bad := func(what string) error {
		return fmt.Errorf("%w: rbm32: unable to deserialize roaring bitmap: %s", ErrInvalidValue, what)
	}
	if len(b) < 4 {
		return nil, bad("shorter than its cookie")
	}
	pos := 0
	u16 := func() (uint16, bool) {
		if pos+2 > len(b) {
			return 0, false
		}
		v := binary.LittleEndian.Uint16(b[pos:])
		pos += 2
		return v, true
	}
	cookie := binary.LittleEndian.Uint32(b)
	pos = 4
	var size int
	var runFlags []byte
	hasOffsets := true
	switch {
	case cookie&0xFFFF == serialCookie:
		size = int(cookie>>16) + 1
		n := (size + 7) / 8
		if pos+n > len(b) {
			return nil, bad("truncated run flags")
		}
		runFlags = b[pos : pos+n]
		pos += n
		hasOffsets = size >= noOffsetThreshold
	case cookie == serialCookieNoRun:
		if len(b) < 8 {
			return nil, bad("truncated size")
		}
		size = int(binary.LittleEndian.Uint32(b[4:]))
		pos = 8
		if size > 1<<16 {
			return nil, bad("more than 65536 containers")
		}
	default:
		return nil, bad(fmt.Sprintf("unknown cookie %d", cookie))
	}
	if pos+4*size > len(b) {
		return nil, bad("truncated header")
	}
	chunks := make([]*rbChunk, size)
	cards := make([]int, size)
	for i := range chunks {
		k, _ := u16()
		c, _ := u16()
		chunks[i] = &rbChunk{key: k}
		cards[i] = int(c) + 1
	}
	if hasOffsets {
		pos += 4 * size
	}
	for i, c := range chunks {
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			c.kind = rbRun
			n, ok := u16()
			if !ok {
				return nil, bad("truncated run container")
			}
			for j := 0; j < int(n); j++ {
				start, ok1 := u16()
				length, ok2 := u16()
				if !ok1 || !ok2 {
					return nil, bad("truncated run container")
				}
				for v := int(start); v <= int(start)+int(length) && v <= 0xFFFF; v++ {
					c.set(uint16(v))
				}
			}
		case cards[i] > arrayMaxSize:
			c.kind = rbBitmap
			if pos+bitmapBytes > len(b) {
				return nil, bad("truncated bitmap container")
			}
			for j := range c.bits {
				c.bits[j] = binary.LittleEndian.Uint64(b[pos+8*j:])
			}
			pos += bitmapBytes
		default:
			c.kind = rbArray
			for j := 0; j < cards[i]; j++ {
				v, ok := u16()
				if !ok {
					return nil, bad("truncated array container")
				}
				c.set(v)
			}
		}
	}
	return chunks, nil
}

// rbmUnion is RoaringBitmap.or: chunks of both, by key.
func rbmUnion(x, y []*rbChunk) []*rbChunk {
	byKey := map[uint16]*rbChunk{}
	var out []*rbChunk
	for _, c := range x {
		cp := *c
		byKey[c.key] = &cp
		out = append(out, &cp)
	}
	for _, c := range y {
		d, ok := byKey[c.key]
		if !ok {
			cp := *c
			byKey[c.key] = &cp
			out = append(out, &cp)
			continue
		}
		for i := range d.bits {
			d.bits[i] |= c.bits[i]
		}
		switch {
		case d.kind == rbBitmap || c.kind == rbBitmap:
			d.kind = rbBitmap
		case d.kind == rbRun || c.kind == rbRun:
			d.kind = rbRun
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// finalKind is the container kind after runOptimize, given the kind the
// union left (see rbm32Func).
func finalKind(kind, card, runs int) int {
	if kind == rbArray && card > arrayMaxSize {
		kind = rbBitmap // ArrayContainer.ior makes a bitmap past 4096 values
	}
	runSize := 2 + 4*runs
	switch kind {
	case rbRun: // RunContainer.toEfficientContainer
		arraySize := 2*card + 2
		if runSize <= min(bitmapBytes, arraySize) {
			return rbRun
		}
	case rbArray: // ArrayContainer.runOptimize
		if card <= arrayMaxSize && 2*card > runSize {
			return rbRun
		}
	default: // BitmapContainer.runOptimize
		if bitmapBytes > runSize {
			return rbRun
		}
	}
	if card <= arrayMaxSize {
		return rbArray
	}
	return rbBitmap
}

// encodeRoaring is RoaringBitmap32.serialize: runOptimize, then
// RoaringArray.serialize (little-endian); empty chunks are dropped.
func encodeRoaring(chunks []*rbChunk) []byte { return encodeChunks(chunks, true) }

// encodeChunks serializes chunks, each as the kind finalKind picks
// (optimize) or as its own kind.
func encodeChunks(chunks []*rbChunk, optimize bool) []byte {
	type sized struct {
		c          *rbChunk
		kind, card int
		runs       int
	}
	var cs []sized
	hasRun := false
	for _, c := range chunks {
		card := c.card()
		if card == 0 {
			continue
		}
		r := c.runs()
		k := c.kind
		if optimize {
			k = finalKind(c.kind, card, r)
		}
		hasRun = hasRun || k == rbRun
		cs = append(cs, sized{c, k, card, r})
	}
	size := len(cs)
	var out []byte
	le := binary.LittleEndian
	var start int
	if hasRun {
		out = le.AppendUint32(out, uint32(serialCookie|(size-1)<<16))
		flags := make([]byte, (size+7)/8)
		for i, s := range cs {
			if s.kind == rbRun {
				flags[i/8] |= 1 << (i % 8)
			}
		}
		out = append(out, flags...)
		start = 4 + len(flags) + 4*size
		if size >= noOffsetThreshold {
			start += 4 * size
		}
	} else {
		out = le.AppendUint32(out, serialCookieNoRun)
		out = le.AppendUint32(out, uint32(size))
		start = 8 + 8*size
	}
	for _, s := range cs {
		out = le.AppendUint16(out, s.c.key)
		out = le.AppendUint16(out, uint16(s.card-1))
	}
	if !hasRun || size >= noOffsetThreshold {
		for _, s := range cs {
			out = le.AppendUint32(out, uint32(start))
			switch s.kind {
			case rbRun:
				start += 2 + 4*s.runs
			case rbArray:
				start += 2 * s.card
			default:
				start += bitmapBytes
			}
		}
	}
	for _, s := range cs {
		switch s.kind {
		case rbRun:
			out = le.AppendUint16(out, uint16(s.runs))
			v := 0
			for v < 1<<16 {
				if s.c.bits[v>>6]&(1<<(v&63)) == 0 {
					v++
					continue
				}
				begin := v
				for v < 1<<16 && s.c.bits[v>>6]&(1<<(v&63)) != 0 {
					v++
				}
				out = le.AppendUint16(out, uint16(begin))
				out = le.AppendUint16(out, uint16(v-1-begin))
			}
		case rbArray:
			for i, w := range s.c.bits {
				for w != 0 {
					t := bits.TrailingZeros64(w)
					out = le.AppendUint16(out, uint16(i*64+t))
					w &= w - 1
				}
			}
		default:
			for _, w := range s.c.bits {
				out = le.AppendUint64(out, w)
			}
		}
	}
	return out
}
