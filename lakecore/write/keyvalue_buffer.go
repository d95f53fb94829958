package write

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// writeBuffer holds the changes of one bucket's write buffer as Java's
// SortBufferWriteBuffer does: each value row encoded as a BinaryRow in
// large byte chunks, and per change a small entry with its key prefix
// (mergetree.KeyPrefix), sequence number and row kind. Nothing in it
// points into the Go heap but the chunks themselves, so the garbage
// collector does not trace buffered changes one by one, and a flush reads
// them from a few contiguous chunks instead of from wherever the caller's
// rows were allocated. A change is decoded again when it is flushed; what
// write-buffer-size counts stays estimateRow's estimate of the rows as
// given, so flushes and spills happen where they did before.
//
// A float NaN is encoded as Java's canonical NaN (binrow), which would
// change the bits a data file gets when the caller's NaN has another
// payload (Go's math.NaN() has): such a row is kept as given in raw, by
// sequence number (unique in a bucket's buffer), and read from there.
type writeBuffer struct {
	chunks  [][]byte
	entries []bufferEntry
	raw     map[int64][]any
	// partial: some entry's prefix is not its whole key.
	partial bool
}

// bufferEntry is one buffered change: its encoded value row is
// chunks[chunk][off:off+n].
type bufferEntry struct {
	prefix     uint64
	seq        int64
	chunk, off uint32
	n          uint32
	kind       kv.RowKind
}

// bufferChunkSize is the size of a buffer chunk; a larger row gets a chunk
// of its own.
const bufferChunkSize = 1 << 20

func (b *writeBuffer) len() int { return len(b.entries) }

// bufferSpare is what emptied write buffers of a writer leave for the next
// ones: entry arrays and chunks, up to max bytes together, so that a large
// commit does not grow its arrays from nothing and clear new memory again.
// The buffer's estimate (estimateRow) counts more than a change takes
// encoded, which leaves room for the spare within write-buffer-size.
type bufferSpare struct {
	entries    [][]bufferEntry
	chunks     [][]byte
	bytes, max int
}

// entrySize is the bytes of a bufferEntry.
const entrySize = int(unsafe.Sizeof(bufferEntry{}))

// add buffers a change whose value row encodes as row (copied) and whose
// first key column has prefix (whole when it is the whole key); raw, when
// not nil, is the row to read back instead of row's decoding.
func (b *writeBuffer) add(row []byte, raw []any, prefix uint64, whole bool, seq int64, kind kv.RowKind, spare *bufferSpare) {
	if b.entries == nil {
		if n := len(spare.entries); n > 0 {
			b.entries = spare.entries[n-1]
			spare.entries = spare.entries[:n-1]
			spare.bytes -= cap(b.entries) * entrySize
		}
	}
	if raw != nil {
		if b.raw == nil {
			b.raw = map[int64][]any{}
		}
		b.raw[seq] = raw
	}
	last := len(b.chunks) - 1
	if last < 0 || cap(b.chunks[last])-len(b.chunks[last]) < len(row) {
		if n := len(spare.chunks); n > 0 && len(row) <= bufferChunkSize {
			b.chunks = append(b.chunks, spare.chunks[n-1])
			spare.chunks = spare.chunks[:n-1]
			spare.bytes -= bufferChunkSize
		} else {
			b.chunks = append(b.chunks, make([]byte, 0, max(bufferChunkSize, len(row))))
		}
		last++
	}
	c := b.chunks[last]
	b.entries = append(b.entries, bufferEntry{prefix: prefix, seq: seq, chunk: uint32(last), off: uint32(len(c)), n: uint32(len(row)), kind: kind})
	b.chunks[last] = append(c, row...)
	b.partial = b.partial || !whole
}

// row returns the encoded value row of e.
func (b *writeBuffer) row(e *bufferEntry) []byte {
	return b.chunks[e.chunk][e.off : e.off+e.n]
}

// reset empties the buffer, leaving its arrays to spare as far as it
// takes them, and lets the rest go.
func (b *writeBuffer) reset(spare *bufferSpare) {
	if n := cap(b.entries) * entrySize; n > 0 && spare.bytes+n <= spare.max {
		spare.entries = append(spare.entries, b.entries[:0])
		spare.bytes += n
	}
	for _, c := range b.chunks {
		if cap(c) == bufferChunkSize && spare.bytes+bufferChunkSize <= spare.max {
			spare.chunks = append(spare.chunks, c[:0])
			spare.bytes += bufferChunkSize
		}
	}
	*b = writeBuffer{}
}

// sorted returns the buffered changes in the buffer's order (key,
// sequence.field, sequence number), as RecordSorter.Sort(stable) sorts
// them as records. When the first key column's prefix is the whole key of
// every change and the key has no other column and no sequence.field, the
// entries alone are sorted, and each change is decoded only when it is
// read; otherwise all are decoded and sorted as records. The buffer must
// not change while the result is read.
func (w *KeyValueWriter) sorted(b *writeBuffer, stable bool) (mergetree.RecordReader, error) {
	o := &w.engine.Order
	if !b.partial && len(o.KeyFields) == 1 && len(o.Sequence.Fields) == 0 {
		radixSort(b.entries)
		return &bufferRecords{w: w, b: b}, nil
	}
	recs := make([]*mergetree.KeyValue, len(b.entries))
	for i := range b.entries {
		r, err := w.decodeEntry(b, &b.entries[i])
		if err != nil {
			return nil, err
		}
		recs[i] = r
	}
	w.sorter().Sort(recs, stable)
	return &sliceRecords{recs: recs}, nil
}

// decodeEntry decodes one buffered change.
func (w *KeyValueWriter) decodeEntry(b *writeBuffer, e *bufferEntry) (*mergetree.KeyValue, error) {
	if v, ok := b.raw[e.seq]; ok {
		return &mergetree.KeyValue{Value: v, Seq: e.seq, Kind: e.kind}, nil
	}
	r := w.slab.New(len(w.valueTypes))
	if err := binrow.DecodeInto(r.Value, w.valueTypes, b.row(e), &w.boxes); err != nil {
		// The writer encoded it: only a bug gets here.
		return nil, fmt.Errorf("decode a buffered change: %w", err)
	}
	r.Seq, r.Kind = e.seq, e.kind
	return r, nil
}

// bufferRecords reads a sorted writeBuffer's changes, decoding each.
type bufferRecords struct {
	w    *KeyValueWriter
	b    *writeBuffer
	next int
}

func (r *bufferRecords) Next(context.Context) (*mergetree.KeyValue, error) {
	if r.next == len(r.b.entries) {
		return nil, io.EOF
	}
	r.next++
	return r.w.decodeEntry(r.b, &r.b.entries[r.next-1])
}

func (r *bufferRecords) Close() error { return nil }

// floatFields returns the indexes of fields whose values may hold a float
// (FLOAT, DOUBLE, or nested types with one inside).
func floatFields(fields []types.DataField) []int {
	var out []int
	for i, f := range fields {
		if hasFloat(f.Type) {
			out = append(out, i)
		}
	}
	return out
}

func hasFloat(t types.DataType) bool {
	switch t.Kind {
	case types.KindFloat, types.KindDouble:
		return true
	case types.KindRow:
		for _, f := range t.Fields {
			if hasFloat(f.Type) {
				return true
			}
		}
	}
	for _, e := range []*types.DataType{t.Element, t.Key, t.Value} {
		if e != nil && hasFloat(*e) {
			return true
		}
	}
	return false
}

// oddNaN reports whether v holds a float NaN that is not Java's canonical
// NaN, whose bits encoding would change.
func oddNaN(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != x && math.Float64bits(x) != 0x7ff8000000000000
	case float32:
		return x != x && math.Float32bits(x) != 0x7fc00000
	case []any:
		for _, e := range x {
			if oddNaN(e) {
				return true
			}
		}
	case types.Map:
		for _, e := range x.Keys {
			if oddNaN(e) {
				return true
			}
		}
		for _, e := range x.Values {
			if oddNaN(e) {
				return true
			}
		}
	}
	return false
}

// radixSort sorts entries by (prefix, seq) when their sequence numbers
// ascend in slice order, as a buffer's do until it is sorted: a stable
// least-significant-digit radix sort on the prefix, one pass per byte that
// differs between entries (integer keys of one table share their high
// bytes, which cost nothing).
func radixSort(entries []bufferEntry) {
	n := len(entries)
	if n < 256 {
		slices.SortFunc(entries, compareEntries)
		return
	}
	var counts [8][256]int
	for i := range entries {
		p := entries[i].prefix
		for d := range 8 {
			counts[d][byte(p>>(8*d))]++
		}
	}
	src, dst := entries, make([]bufferEntry, n)
	for d := range 8 {
		c := &counts[d]
		if c[byte(src[0].prefix>>(8*d))] == n {
			continue // every entry has the same byte here
		}
		var offs [256]int
		sum := 0
		for v := range 256 {
			offs[v] = sum
			sum += c[v]
		}
		shift := 8 * d
		for i := range src {
			v := byte(src[i].prefix >> shift)
			dst[offs[v]] = src[i]
			offs[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &entries[0] {
		copy(entries, src)
	}
}

// compareEntries orders entries by (prefix, seq).
func compareEntries(x, y bufferEntry) int {
	if x.prefix != y.prefix {
		return cmp.Compare(x.prefix, y.prefix)
	}
	return cmp.Compare(x.seq, y.seq)
}
