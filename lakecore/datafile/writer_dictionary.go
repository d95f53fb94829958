package datafile

import (
	"math/bits"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
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
// group; lakecore keeps the first row group's choice for the file.
const (
	// dictionaryProbeRows is parquet.page.row.count.limit's default.
	dictionaryProbeRows = 20_000
	// dictionaryMaxBytes is parquet.dictionary.page.size's default.
	dictionaryMaxBytes = 1 << 20
	// dictionaryPageBytes is parquet.page.size's default: a column's first
	// page also ends at this many bytes of PLAIN values. The first batch
	// ends once it holds as many per column.
	dictionaryPageBytes = 1 << 20
)

// dictionaryCandidate reports whether parquet-mr's v1 writer gives a leaf
// of kind k a dictionary at all.
func dictionaryCandidate(k leafKind) bool {
	return k != leafBoolean && k != leafDecimalFixed
}

// dictionaryChoices decides, per leaf column, whether the file's columns
// are dictionary-encoded, from the shredded values of the pending rows.
func (w *Writer) dictionaryChoices() []bool {
	out := make([]bool, len(w.schema.leaves))
	for i, n := range w.schema.leaves {
		if !dictionaryCandidate(n.kind) {
			continue
		}
		vals := w.batch[i]
		if w.leafField[i] >= 0 {
			vals = vals[:w.batchRows]
		}
		out[i] = dictionaryPays(n.kind, vals)
	}
	return out
}

// dictionaryPays is FallbackValuesWriter's first-page decision for the
// values of one column: the sizes are counted as parquet-mr counts them
// (PLAIN: 4 bytes per INT32/FLOAT, 8 per INT64/DOUBLE, 4 plus the length
// per BYTE_ARRAY and INT96; the dictionary: the PLAIN size of each distinct
// value, without the length prefix for INT96), and the dictionary indexes as
// RunLengthBitPackingHybridEncoder encodes them behind their bit width byte.
// NULLs are not values. An empty column keeps no dictionary.
func dictionaryPays(k leafKind, vals []parquet.Value) bool {
	var raw, dict int64
	ids := make([]int32, 0, len(vals))
	var (
		numbers = map[uint64]int32{}
		strs    = map[string]int32{}
		int96s  = map[deprecated.Int96]int32{}
	)
	for i := range vals {
		v := &vals[i]
		if v.IsNull() {
			continue
		}
		var id int32
		var ok bool
		switch v.Kind() {
		case parquet.Int32, parquet.Float:
			raw += 4
			key := uint64(v.Uint32())
			if id, ok = numbers[key]; !ok {
				id = int32(len(numbers))
				numbers[key] = id
				dict += 4
			}
		case parquet.Int64, parquet.Double:
			raw += 8
			key := v.Uint64()
			if id, ok = numbers[key]; !ok {
				id = int32(len(numbers))
				numbers[key] = id
				dict += 8
			}
		case parquet.Int96:
			raw += 4 + 12
			key := v.Int96()
			if id, ok = int96s[key]; !ok {
				id = int32(len(int96s))
				int96s[key] = id
				dict += 12
			}
		default:
			b := v.ByteArray()
			raw += 4 + int64(len(b))
			if id, ok = strs[string(b)]; !ok {
				id = int32(len(strs))
				strs[string(b)] = id
				dict += 4 + int64(len(b))
			}
		}
		if dict > dictionaryMaxBytes {
			return false
		}
		ids = append(ids, id)
		if raw >= dictionaryPageBytes {
			break // FallbackValuesWriter.getBufferedSize: the page is full
		}
	}
	if len(ids) == 0 {
		return false
	}
	distinct := len(numbers) + len(strs) + len(int96s)
	width := bits.Len32(uint32(distinct - 1))
	encoded := 1 + hybridEncodedSize(ids, width)
	return encoded+dict < raw
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
