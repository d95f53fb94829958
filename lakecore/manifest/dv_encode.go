package manifest

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
)

// DataFileVector is the deletion vector of one data file to encode: the
// deleted row positions, in any order (duplicates are ignored).
type DataFileVector struct {
	DataFile  string
	Positions []int64
}

// EncodeDeletionVectorsFile encodes a deletion-vector index file as
// DeletionVectorIndexFileWriter.writeSingleFile writes it (apache/paimon:
// paimon-core/.../deletionvectors/DeletionFileWriter.java,
// BitmapDeletionVector.serializeTo): the version byte 1, then per vector
// its int32 BE size, the magic 1581511376, the 32-bit portable
// RoaringBitmap after runOptimize, and the int32 BE CRC32 of magic and
// bitmap. It returns the file and the DVRange of each vector, in the order
// of vectors (Java writes its HashMap's order; readers go by the ranges).
// Vectors without positions are left out, as Java never keeps an empty
// one. No vectors give the 1-byte file Java writes when a compaction drops
// a bucket's last deletion vector. Positions must be in [0, 2^31-1]
// (RoaringBitmap32); deletion-vectors.bitmap64 is not written.
func EncodeDeletionVectorsFile(vectors []DataFileVector) ([]byte, []DVRange, error) {
	out := []byte{dvFileVersion}
	ranges := make([]DVRange, 0, len(vectors))
	for _, v := range vectors {
		pos := normalizePositions(v.Positions)
		if len(pos) == 0 {
			continue
		}
		start := len(out)
		var err error
		out, err = appendDeletionVector(out, pos)
		if err != nil {
			return nil, nil, fmt.Errorf("encode deletion vector of %s: %w", v.DataFile, err)
		}
		card := int64(len(pos))
		ranges = append(ranges, DVRange{DataFile: v.DataFile, Offset: int32(start), Length: int32(binary.BigEndian.Uint32(out[start:])), Cardinality: &card})
	}
	return out, ranges, nil
}

// NewDeletionVector returns the deletion vector of positions (any order,
// duplicates ignored, each in [0, 2^31-1]), as a reader would decode it.
func NewDeletionVector(positions []int64) (*DeletionVector, error) {
	pos := normalizePositions(positions)
	if len(pos) == 0 {
		return &DeletionVector{}, nil
	}
	b, err := appendDeletionVector(nil, pos)
	if err != nil {
		return nil, err
	}
	dv, _, err := DecodeDeletionVector(b, int32(binary.BigEndian.Uint32(b)))
	return dv, err
}

func normalizePositions(p []int64) []int64 {
	p = slices.Clone(p)
	slices.Sort(p)
	return slices.Compact(p)
}

// appendDeletionVector appends the serialized BitmapDeletionVector of the
// sorted, distinct positions.
func appendDeletionVector(dst []byte, positions []int64) ([]byte, error) {
	if positions[0] < 0 || positions[len(positions)-1] > 1<<31-1 {
		return nil, fmt.Errorf("%w: row positions %d..%d outside a 32-bit deletion vector", ErrCorrupt, positions[0], positions[len(positions)-1])
	}
	bin := binary.BigEndian.AppendUint32(nil, dvMagic32)
	bin = appendRoaring32(bin, positions)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(bin)))
	dst = append(dst, bin...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(bin)), nil
}

// roaringOut is one container being serialized: the low 16 bits of the
// values sharing key.
type roaringOut struct {
	key    uint16
	values []uint16
	runs   int
	kind   byte // 'a' array, 'b' bitmap, 'r' run
}

// size is the container's body in bytes (getArraySizeInBytes).
func (c *roaringOut) size() int {
	switch c.kind {
	case 'r':
		return 2 + 4*c.runs
	case 'b':
		return 8192
	}
	return 2 * len(c.values)
}

// appendRoaring32 appends the portable serialization
// (RoaringArray.serialize) of the sorted distinct 31-bit values as Java's
// RoaringBitmap32.serialize writes it: a bitmap built by adding the values
// (array containers up to 4096 values, bitmap containers beyond), then
// runOptimize (ArrayContainer: run if 2*card > 2+4*runs; BitmapContainer:
// run if 8192 > 2+4*runs).
func appendRoaring32(dst []byte, values []int64) []byte {
	var conts []roaringOut
	for _, v := range values {
		key, low := uint16(v>>16), uint16(v)
		if n := len(conts); n == 0 || conts[n-1].key != key {
			conts = append(conts, roaringOut{key: key})
		}
		c := &conts[len(conts)-1]
		if len(c.values) == 0 || c.values[len(c.values)-1] != low-1 {
			c.runs++
		}
		c.values = append(c.values, low)
	}
	hasRun := false
	for i := range conts {
		c := &conts[i]
		c.kind = 'a'
		if len(c.values) > roaringArrayMax {
			c.kind = 'b'
		}
		if c.size() > 2+4*c.runs {
			c.kind, hasRun = 'r', true
		}
	}
	size := len(conts)
	var start int
	if hasRun {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(roaringCookieRun|(size-1)<<16))
		flags := make([]byte, (size+7)/8)
		for i := range conts {
			if conts[i].kind == 'r' {
				flags[i/8] |= 1 << (i % 8)
			}
		}
		dst = append(dst, flags...)
		start = 4 + 4*size + len(flags)
		if size >= roaringNoOffsetMax {
			start += 4 * size
		}
	} else {
		dst = binary.LittleEndian.AppendUint32(dst, roaringCookieNoRun)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(size))
		start = 4 + 4 + 8*size
	}
	for i := range conts {
		dst = binary.LittleEndian.AppendUint16(dst, conts[i].key)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(conts[i].values)-1))
	}
	if !hasRun || size >= roaringNoOffsetMax {
		for i := range conts {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(start))
			start += conts[i].size()
		}
	}
	for i := range conts {
		c := &conts[i]
		switch c.kind {
		case 'a':
			for _, v := range c.values {
				dst = binary.LittleEndian.AppendUint16(dst, v)
			}
		case 'b':
			var words [1024]uint64
			for _, v := range c.values {
				words[v>>6] |= 1 << (v & 63)
			}
			for _, w := range words {
				dst = binary.LittleEndian.AppendUint64(dst, w)
			}
		case 'r':
			dst = binary.LittleEndian.AppendUint16(dst, uint16(c.runs))
			for j := 0; j < len(c.values); {
				k := j + 1
				for k < len(c.values) && c.values[k] == c.values[k-1]+1 {
					k++
				}
				dst = binary.LittleEndian.AppendUint16(dst, c.values[j])
				dst = binary.LittleEndian.AppendUint16(dst, uint16(k-j-1))
				j = k
			}
		}
	}
	return dst
}
