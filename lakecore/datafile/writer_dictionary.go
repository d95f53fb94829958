package datafile

import (
	"bufio"
	"hash/maphash"
	"io"
	"math/bits"
	"strings"
	"sync"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// Java Paimon writes Parquet v1 files (parquet.writer.version PARQUET_1_0)
// with parquet.enable.dictionary true, parquet.dictionary.page.size 1 MiB
// and parquet.page.row.count.limit 20,000, parquet-mr's defaults. parquet-mr's
// DefaultV1ValuesWriterFactory gives every column but BOOLEAN and
// FIXED_LEN_BYTE_ARRAY a dictionary writer with a PLAIN fallback
// (FallbackValuesWriter), which drops the dictionary:
//
//   - on the column chunk's first page, when the dictionary-encoded page
//     plus the dictionary is not smaller than the values in PLAIN
//     (DictionaryValuesWriter.isCompressionSatisfying);
//   - whenever the dictionary outgrows parquet.dictionary.page.size
//     (shouldFallBack), for the rest of the column chunk.
//
// lakecore makes the first decision once per file, on the values of its
// first page as parquet-mr cuts it (dictionaryProbeRows rows or
// dictionaryPageBytes of PLAIN values), and leaves the second to
// parquet-go's DictionaryMaxBytes. parquet-mr decides again in every row
// group; lakecore keeps the first row group's choice for the file. The
// rows are held until then, so a file of more than
// dictionaryProbeValues/dictionaryProbeRows (8) columns decides on fewer
// rows (probeRows) to keep that memory bounded.
const (
	// dictionaryProbeRows is parquet.page.row.count.limit's default.
	dictionaryProbeRows = 20_000
	// dictionaryProbeValues bounds the shredded values held for the
	// decision: 8 bytes each in heldValues, about 1.3 MiB, plus their
	// bytes and levels.
	dictionaryProbeValues = 8 * dictionaryProbeRows
	// dictionaryProbeMinRows is the fewest rows a wide file decides on.
	dictionaryProbeMinRows = 1024
	// dictionaryMaxBytes is parquet.dictionary.page.size's default.
	dictionaryMaxBytes = 1 << 20
	// dictionaryPageBytes is parquet.page.size's default: a column's first
	// page also ends at this many bytes of PLAIN values. The first batch
	// ends once it holds as many per column.
	dictionaryPageBytes = 1 << 20
)

// WriteBuffers recycles the buffers that hold the first rows of a file
// while its encodings are chosen (see Writer): a streaming table writer
// opens a file per partition and bucket on every commit, most of them
// smaller than the first page, and the paimon output makes a table writer
// per batch, so the same buffers serve the files of every batch. It keeps
// up to writeBuffersKeep bytes of them in free lists, not a sync.Pool: a
// pool is emptied by every second garbage collection, and a pipeline
// collects several times between two commits. It is safe for concurrent
// use.
type WriteBuffers struct {
	mu     sync.Mutex
	kept   int               // bytes of capacity in the lists below
	values [][]parquet.Value // each cleared, of length 0
	helds  []*heldValues
	sets   []*distinctSet  // each reset, holding no caller's bytes
	outs   []*bufio.Writer // each of outputBufferSize, writing to nothing
	// compressors are made once per compression and level (Compressor).
	compressors map[compressorKey]*Compressor
}

// compressorKey names a Compressor's settings.
type compressorKey struct {
	name  string
	level int
}

// writeBuffersKeep bounds the bytes a WriteBuffers keeps for reuse: the
// first rows of a hundred open files of 2,500 rows of 8 columns with
// their output buffers (about 50 MiB), or of a few full first pages
// (dictionaryProbeValues). A buffer returned beyond it is left to the
// garbage collector.
const writeBuffersKeep = 64 << 20

// NewWriteBuffers returns an empty WriteBuffers.
func NewWriteBuffers() *WriteBuffers { return &WriteBuffers{} }

// Compressor returns the Compressor of file.compression name and
// file.compression.zstd-level zstdLevel (see NewCompressor), made on the
// first call with them and returned by every later one: writers made one
// after another (a writer per batch) then share one zstd encoder and its
// history instead of each building its own.
func (b *WriteBuffers) Compressor(name string, zstdLevel int) (*Compressor, error) {
	key := compressorKey{strings.ToLower(strings.TrimSpace(name)), zstdLevel}
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.compressors[key]; c != nil {
		return c, nil
	}
	c, err := NewCompressor(name, zstdLevel)
	if err != nil {
		return nil, err
	}
	if b.compressors == nil {
		b.compressors = map[compressorKey]*Compressor{}
	}
	b.compressors[key] = c
	return c, nil
}

// take removes the buffer last returned to *list, one of b's free lists,
// and uncounts its size; ok is false when the list is empty.
func take[T any](b *WriteBuffers, list *[]T, size func(T) int) (v T, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(*list)
	if n == 0 {
		return v, false
	}
	v = (*list)[n-1]
	var zero T
	(*list)[n-1] = zero // not to keep it alive from the array
	*list = (*list)[:n-1]
	b.kept -= size(v)
	return v, true
}

// give returns v, of size bytes, to *list, one of b's free lists, unless
// that would keep more than writeBuffersKeep bytes.
func give[T any](b *WriteBuffers, list *[]T, v T, size int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.kept+size <= writeBuffersKeep {
		b.kept += size
		*list = append(*list, v)
	}
}

// held returns an empty heldValues for leaf column column, recycled when
// it can; putHeld takes it back.
func (b *WriteBuffers) held(column int, levels bool) *heldValues {
	h, ok := take(b, &b.helds, (*heldValues).capacity)
	if !ok {
		h = &heldValues{}
	}
	h.reset(column, levels)
	return h
}

func (b *WriteBuffers) putHeld(h *heldValues) { give(b, &b.helds, h, h.capacity()) }

// set returns an empty distinctSet, recycled when it can; putSet takes it
// back.
func (b *WriteBuffers) set() *distinctSet {
	if s, ok := take(b, &b.sets, (*distinctSet).capacity); ok {
		return s
	}
	return &distinctSet{}
}

func (b *WriteBuffers) putSet(s *distinctSet) {
	s.reset(0)
	clear(s.bytes[:cap(s.bytes)]) // the caller's strings
	give(b, &b.sets, s, s.capacity())
}

// bufWriter returns a writer to w buffering outputBufferSize bytes,
// recycled when it can; putBufWriter takes it back, flushed.
func (b *WriteBuffers) bufWriter(w io.Writer) *bufio.Writer {
	if bw, ok := take(b, &b.outs, func(*bufio.Writer) int { return outputBufferSize }); ok {
		bw.Reset(w)
		return bw
	}
	return bufio.NewWriterSize(w, outputBufferSize)
}

func (b *WriteBuffers) putBufWriter(bw *bufio.Writer) {
	bw.Reset(nil) // not to keep the file
	give(b, &b.outs, bw, outputBufferSize)
}

// get returns n zero values, recycled when it can (every caller asks for
// writeBatchRows, so a recycled slice too small is dropped).
func (b *WriteBuffers) get(n int) []parquet.Value {
	if v, ok := take(b, &b.values, valuesSize); ok && cap(v) >= n {
		return v[:n]
	}
	return make([]parquet.Value, n)
}

// put takes back v, of which the first used (plus one: a rejected row's)
// values were set; they are cleared so as not to keep the caller's strings.
func (b *WriteBuffers) put(v []parquet.Value, used int) {
	clear(v[:min(used+1, len(v))])
	give(b, &b.values, v[:0], valuesSize(v))
}

// valuesSize returns the bytes of v's array.
func valuesSize(v []parquet.Value) int { return cap(v) * valueSize }

// valueSize is the size of a parquet.Value.
const valueSize = int(unsafe.Sizeof(parquet.Value{}))

// probeRows is how many rows a file of leaves leaf columns holds for the
// dictionary decision.
func probeRows(leaves int) int {
	return max(dictionaryProbeMinRows, min(dictionaryProbeRows, dictionaryProbeValues/max(leaves, 1)))
}

// dictionaryCandidate reports whether parquet-mr's v1 writer gives a leaf
// of kind k a dictionary at all.
func dictionaryCandidate(k leafKind) bool {
	return k != leafBoolean && k != leafDecimalFixed
}

// dictionaryChoices decides, per leaf column, whether the file's columns
// are dictionary-encoded, from the held values of the first rows.
func (w *Writer) dictionaryChoices() []bool {
	out := make([]bool, len(w.schema.leaves))
	set := w.buffers.set()
	defer w.buffers.putSet(set)
	for i, n := range w.schema.leaves {
		if dictionaryCandidate(n.kind) {
			out[i] = w.held[i].dictionaryPays(set)
		}
	}
	return out
}

// dictionaryPays is FallbackValuesWriter's first-page decision for vals,
// the values of one column (see heldValues.dictionaryPays).
func dictionaryPays(set *distinctSet, vals []parquet.Value) bool {
	var h heldValues
	h.reset(0, true)
	h.append(vals)
	return h.dictionaryPays(set)
}

// dictionaryPays is FallbackValuesWriter's first-page decision for the
// held values: the sizes are counted as parquet-mr counts them (PLAIN: 4
// bytes per INT32/FLOAT, 8 per INT64/DOUBLE, 4 plus the length per
// BYTE_ARRAY and INT96; the dictionary: the PLAIN size of each distinct
// value, without the length prefix for INT96), and the dictionary indexes as
// RunLengthBitPackingHybridEncoder encodes them behind their bit width byte.
// NULLs are not values. An empty column keeps no dictionary. set is
// scratch space, reset here.
func (h *heldValues) dictionaryPays(set *distinctSet) bool {
	// The page's values and PLAIN size, to stop counting once the answer
	// is sure: raw - dict never shrinks (a new value adds as much to both,
	// INT96 more to raw), so once it exceeds the longest the indexes can
	// encode to, and the dictionary cannot outgrow its limit in what is
	// left, the dictionary pays.
	var n, rawPage int64
	page := 0 // values on the first page, NULLs included
	for page < h.len() && rawPage < dictionaryPageBytes {
		i := page
		page++
		if h.null(i) {
			continue
		}
		n++
		rawPage += h.plainSize(i)
	}
	encodedMax := 2 + (n+7)/8*int64(max(bits.Len64(uint64(max(n, 1)-1)), 9)+1)

	set.reset(page)
	var raw, dict int64
	for i := range page {
		if h.null(i) {
			continue
		}
		switch h.kind {
		case parquet.Boolean, parquet.Int32, parquet.Float, parquet.Int64, parquet.Double:
			size := h.plainSize(i)
			raw += size
			if set.addNumber(h.words[i]) {
				dict += size
			}
		case parquet.Int96:
			raw += 4 + 12
			if set.addBytes(h.valueBytes(i)) {
				dict += 12
			}
		default:
			b := h.valueBytes(i)
			raw += 4 + int64(len(b))
			if set.addBytes(b) {
				dict += 4 + int64(len(b))
			}
		}
		if dict > dictionaryMaxBytes {
			return false
		}
		if raw-dict > encodedMax && dict+rawPage-raw <= dictionaryMaxBytes {
			return true
		}
	}
	if len(set.ids) == 0 {
		return false
	}
	width := bits.Len32(uint32(len(set.hashes) - 1))
	encoded := 1 + hybridEncodedSize(set.ids, width)
	return encoded+dict < raw
}

// plainSize is the PLAIN size of non-NULL value i as parquet-mr counts it.
func (h *heldValues) plainSize(i int) int64 {
	switch h.kind {
	case parquet.Int32, parquet.Float:
		return 4
	case parquet.Int64, parquet.Double:
		return 8
	case parquet.Int96:
		return 16
	case parquet.Boolean:
		return 1 // not a dictionary candidate; counted for completeness
	}
	return 4 + int64(len(h.valueBytes(i)))
}

// distinctSet numbers the distinct values of one column in order of first
// appearance (the dictionary ids) in an open-addressing table, reused from
// column to column. Byte-array values are kept by reference.
type distinctSet struct {
	slots   []int32  // entry + 1, 0 when empty
	hashes  []uint64 // per entry
	numbers []uint64 // per entry: the value's bits (numbers)
	bytes   [][]byte // per entry: the value (byte arrays)
	ids     []int32  // the id of each value added
	seed    maphash.Seed
}

// capacity returns the bytes s's buffers hold.
func (s *distinctSet) capacity() int {
	return 4*cap(s.slots) + 8*cap(s.hashes) + 8*cap(s.numbers) + 24*cap(s.bytes) + 4*cap(s.ids)
}

// reset empties the set for a column of up to values values.
func (s *distinctSet) reset(values int) {
	size := 64
	for size < 2*values {
		size *= 2
	}
	if cap(s.slots) < size {
		s.slots = make([]int32, size)
		s.seed = maphash.MakeSeed()
	} else {
		s.slots = s.slots[:size]
		clear(s.slots)
	}
	s.hashes, s.numbers, s.bytes, s.ids = s.hashes[:0], s.numbers[:0], s.bytes[:0], s.ids[:0]
}

// addNumber records x and reports whether it is new.
func (s *distinctSet) addNumber(x uint64) bool {
	h := x * 0x9E3779B97F4A7C15
	h ^= h >> 32
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for ; s.slots[i] != 0; i = (i + 1) & mask {
		if e := s.slots[i] - 1; s.numbers[e] == x {
			s.ids = append(s.ids, e)
			return false
		}
	}
	s.slots[i] = int32(len(s.hashes)) + 1
	s.ids = append(s.ids, int32(len(s.hashes)))
	s.hashes = append(s.hashes, h)
	s.numbers = append(s.numbers, x)
	return true
}

// addBytes records b and reports whether it is new.
func (s *distinctSet) addBytes(b []byte) bool {
	h := maphash.Bytes(s.seed, b)
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for ; s.slots[i] != 0; i = (i + 1) & mask {
		if e := s.slots[i] - 1; s.hashes[e] == h && string(s.bytes[e]) == string(b) {
			s.ids = append(s.ids, e)
			return false
		}
	}
	s.slots[i] = int32(len(s.hashes)) + 1
	s.ids = append(s.ids, int32(len(s.hashes)))
	s.hashes = append(s.hashes, h)
	s.bytes = append(s.bytes, b)
	return true
}

// hybridEncodedSize is the length of what parquet-mr's
// RunLengthBitPackingHybridEncoder writes for ids at bit width width: a
// value repeated at least 8 times becomes an RLE run, everything else goes
// into bit-packed runs of up to 63 groups of 8 (the last group padded).
func hybridEncodedSize(ids []int32, width int) int64 {
	var (
		size      int64
		prev      int32
		repeats   int
		buffered  int
		groups    int
		openRun   bool
		rleValLen = int64((width + 7) / 8)
	)
	endBitPacked := func() { openRun, groups = false, 0 }
	appendGroup := func() {
		if groups >= 63 {
			endBitPacked()
		}
		if !openRun {
			size++ // the run's header byte
			openRun = true
		}
		size += int64(width)
		buffered, repeats = 0, 0
		groups++
	}
	rleRun := func() {
		endBitPacked()
		size += int64(uvarintLen(uint64(repeats) << 1))
		size += rleValLen
		repeats, buffered = 0, 0
	}
	for _, id := range ids {
		if id == prev {
			repeats++
			if repeats >= 8 {
				continue
			}
		} else {
			if repeats >= 8 {
				rleRun()
			}
			repeats, prev = 1, id
		}
		buffered++
		if buffered == 8 {
			appendGroup()
		}
	}
	switch {
	case repeats >= 8:
		rleRun()
	case buffered > 0:
		appendGroup()
	}
	return size
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
