package datafile

import (
	"encoding/binary"
	"math"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// heldValues holds one leaf column's values of a file's first rows, while
// its encoding is chosen (see Writer), in slices without Go pointers: a
// streaming writer has a first batch open in every file, and as
// parquet.Value (24 bytes and a pointer each, keeping the caller's strings
// alive) the garbage collector scanned them all on every cycle. Values are
// copied in (append) and rebuilt as parquet.Value, equal to what was
// appended, by values.
type heldValues struct {
	kind parquet.Kind // of the non-NULL values; set by the first one
	// levels says whether the values carry levels and a column index
	// (Value.Level): every value of a nested or optional leaf does, none of
	// a required top-level leaf (which also has no NULLs).
	levels bool
	column int
	// words holds, per value, a number's bits (zero-extended from 32 bits
	// for INT32 and FLOAT) or, for byte arrays and INT96, where its bytes
	// end in bytes; a NULL's is the previous value's end, or 0.
	words []uint64
	bytes []byte
	// lv holds, per value when levels is set: the repetition level, the
	// definition level << 8 and heldNull.
	lv []uint32
}

// heldNull marks a NULL in heldValues.lv.
const heldNull = 1 << 16

// reset empties h for a leaf column column, whose values carry levels or
// not.
func (h *heldValues) reset(column int, levels bool) {
	h.kind, h.levels, h.column = 0, levels, column
	h.words, h.bytes, h.lv = h.words[:0], h.bytes[:0], h.lv[:0]
}

// len returns the number of values held.
func (h *heldValues) len() int { return len(h.words) }

// append copies vals in.
func (h *heldValues) append(vals []parquet.Value) {
	for i := range vals {
		h.add(&vals[i])
	}
}

// add copies v in.
func (h *heldValues) add(v *parquet.Value) {
	null := v.IsNull()
	if h.levels {
		x := uint32(v.RepetitionLevel()) | uint32(v.DefinitionLevel())<<8
		if null {
			x |= heldNull
		}
		h.lv = append(h.lv, x)
	}
	if null {
		h.words = append(h.words, h.lastEnd())
		return
	}
	k := v.Kind()
	h.kind = k
	switch k {
	case parquet.Boolean:
		var b uint64
		if v.Boolean() {
			b = 1
		}
		h.words = append(h.words, b)
	case parquet.Int32, parquet.Float:
		h.words = append(h.words, uint64(v.Uint32()))
	case parquet.Int64, parquet.Double:
		h.words = append(h.words, v.Uint64())
	case parquet.Int96:
		x := v.Int96()
		h.bytes = binary.LittleEndian.AppendUint32(h.bytes, x[0])
		h.bytes = binary.LittleEndian.AppendUint32(h.bytes, x[1])
		h.bytes = binary.LittleEndian.AppendUint32(h.bytes, x[2])
		h.words = append(h.words, uint64(len(h.bytes)))
	default:
		h.bytes = append(h.bytes, v.ByteArray()...)
		h.words = append(h.words, uint64(len(h.bytes)))
	}
}

// truncate drops the values from the n-th on.
func (h *heldValues) truncate(n int) {
	if n >= len(h.words) {
		return
	}
	if h.isBytes() {
		end := uint64(0)
		if n > 0 {
			end = h.words[n-1]
		}
		h.bytes = h.bytes[:end]
	}
	h.words = h.words[:n]
	if h.levels {
		h.lv = h.lv[:n]
	}
}

func (h *heldValues) lastEnd() uint64 {
	if n := len(h.words); n > 0 && h.isBytes() {
		return h.words[n-1]
	}
	return 0
}

// isBytes reports whether the column's words are ends of bytes.
func (h *heldValues) isBytes() bool {
	switch h.kind {
	case parquet.Int96, parquet.ByteArray, parquet.FixedLenByteArray:
		return true
	}
	return false
}

// null reports whether value i is a NULL.
func (h *heldValues) null(i int) bool { return h.levels && h.lv[i]&heldNull != 0 }

// valueBytes returns the bytes of byte-array or INT96 value i.
func (h *heldValues) valueBytes(i int) []byte {
	start := uint64(0)
	if i > 0 {
		start = h.words[i-1]
	}
	return h.bytes[start:h.words[i]:h.words[i]]
}

// values appends values start..end to dst, as they were appended; byte
// arrays refer to h's bytes, valid until the next reset.
func (h *heldValues) values(dst []parquet.Value, start, end int) []parquet.Value {
	for i := start; i < end; i++ {
		var v parquet.Value
		if !h.null(i) {
			w := h.words[i]
			switch h.kind {
			case parquet.Boolean:
				v = parquet.BooleanValue(w != 0)
			case parquet.Int32:
				v = parquet.Int32Value(int32(uint32(w)))
			case parquet.Float:
				v = parquet.FloatValue(math.Float32frombits(uint32(w)))
			case parquet.Int64:
				v = parquet.Int64Value(int64(w))
			case parquet.Double:
				v = parquet.DoubleValue(math.Float64frombits(w))
			case parquet.Int96:
				b := h.valueBytes(i)
				v = parquet.Int96Value(deprecated.Int96{
					binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:]),
				})
			case parquet.FixedLenByteArray:
				v = parquet.FixedLenByteArrayValue(h.valueBytes(i))
			default:
				v = parquet.ByteArrayValue(h.valueBytes(i))
			}
		}
		if h.levels {
			x := h.lv[i]
			v = v.Level(int(x&0xff), int(x>>8&0xff), h.column)
		}
		dst = append(dst, v)
	}
	return dst
}

// heldPageBuffer returns a page buffer size (parquet.PageBufferSize) for a
// file whose every row is held: a little more than the most a column's page
// buffer can reach (parquet-go counts at most 26 bytes per value plus its
// bytes: the PLAIN value or dictionary index, offsets, row indexes and
// levels), when that is below parquet-go's default, or 0 for the default.
// With either size no page is cut before the file ends (a page is cut once
// the buffer reaches 98% of the size), so the file is the same; but
// parquet-go sizes every column's first buffer to the page buffer (256 KiB
// by default), which a file of a few thousand rows never fills.
func (w *Writer) heldPageBuffer() int {
	if w.held == nil {
		return 0
	}
	var most int
	for _, h := range w.held {
		most = max(most, 32*h.len()+len(h.bytes))
	}
	if size := most + most/8 + 4<<10; size < parquet.DefaultPageBufferSize {
		return size
	}
	return 0
}

// capacity returns the bytes h's buffers hold.
func (h *heldValues) capacity() int { return 8*cap(h.words) + cap(h.bytes) + 4*cap(h.lv) }
