// Package datafile reads and writes the Parquet data files of Paimon append
// tables, byte-compatible with what Java Paimon writes and reads
// (paimon-format.md §11).
package datafile

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

var (
	// ErrInvalidValue is wrapped by Writer.Write when a row does not fit the
	// file's fields: a value of the wrong Go type, NULL in a NOT NULL
	// column, a decimal that does not fit its precision or needs rounding,
	// a string longer than its VARCHAR/CHAR length, invalid UTF-8 in a
	// string. The row is not written; the writer stays usable.
	ErrInvalidValue = errors.New("invalid value")

	// ErrWriterClosed is returned by Writer.Write and Writer.Close after
	// Close was called.
	ErrWriterClosed = errors.New("data file writer closed")

	// ErrInvalidWriterOptions is wrapped by NewWriter for options or fields
	// it cannot write: an unknown compression, a stats mode per field that
	// does not match the fields, an unsupported type.
	ErrInvalidWriterOptions = errors.New("invalid data file writer options")
)

// DefaultRowGroupSize is parquet-mr's default row group size
// (ParquetWriter.DEFAULT_BLOCK_SIZE, parquet.block.size), which Java Paimon
// keeps.
const DefaultRowGroupSize = 128 << 20

const (
	// writeBatchRows rows are shredded into per-column value buffers before
	// they are handed to parquet-go's column writers; the first batch of a
	// file holds probeRows rows.
	writeBatchRows = 128
	// outputBufferSize buffers the small writes of page headers.
	outputBufferSize = 64 << 10
)

// WriterOptions configure a Writer. The zero value writes zstd level 1 with
// Paimon's default stats mode truncate(16) and 128 MiB row groups.
type WriterOptions struct {
	// Compression is Paimon's file.compression: "zstd" (also the default
	// for ""), "snappy", "gzip", "lz4" (written as LZ4_RAW), "none" or
	// "uncompressed", case-insensitive.
	Compression string
	// ZstdLevel is file.compression.zstd-level; 0 means Paimon's default 1.
	ZstdLevel int
	// Compressor, when set, compresses the pages instead of one built from
	// Compression and ZstdLevel, which are then ignored. Writers open at
	// the same time should share one: see Compressor.
	Compressor *Compressor
	// StatsModes holds the stats mode of each top-level field, in field
	// order (metadata.stats-mode and fields.<name>.stats-mode); nil means
	// truncate(16) for every field.
	StatsModes []schema.StatsMode
	// Buffers, when set, recycles the buffers of the first rows of a file
	// (see Writer) for the next file; writers open at the same time may
	// share one. nil gives the file buffers of its own.
	Buffers *WriteBuffers
	// RowGroupSize is the buffered size at which a row group is flushed
	// (parquet.block.size); 0 means DefaultRowGroupSize. A writer holds
	// about one row group of compressed pages plus one uncompressed page
	// per column in memory.
	RowGroupSize int64
}

// Writer writes one Parquet data file exactly as Java Paimon lays it out
// (paimon-format.md §11.1; apache/paimon:
// paimon-format/src/main/java/org/apache/paimon/format/parquet/writer/ParquetRowDataWriter.java)
// and collects the statistics the manifest stores for it.
//
// Columns are dictionary-encoded where parquet-mr's v1 writer would keep
// its dictionary (see dictionaryProbeRows): the first rows of a file (up to
// 20,000, fewer for more than 8 columns) are held, shredded, until that is
// decided.
//
// Memory is bounded by the open row group: its compressed pages (flushed to
// the io.Writer once they reach RowGroupSize), one uncompressed page buffer
// and dictionary per column, and up to 128 shredded rows not yet handed to
// the column writers (before the first are, the held first rows: 8 bytes
// per value, up to about 1.3 MiB, plus their byte arrays and, for optional
// and nested leaves, 4 bytes of levels per value); plus
// the compressor's encoder (about 1.5 MiB for zstd) unless
// WriterOptions.Compressor shares one. The footer follows on Close; the
// io.Writer is not closed.
//
// The statistics Close returns are derived from the file's own footer
// statistics, merged over row groups, as Java's ParquetSimpleStatsExtractor
// does, so the manifest and the Parquet footer always agree.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	schema *writeSchema
	fields []types.DataField
	codec  compress.Codec
	out    *outputWriter
	pw     *parquet.GenericWriter[any] // nil until the first batch is flushed (startFile)
	cols   []*parquet.ColumnWriter

	batch        [][]parquet.Value // per leaf column, the shredded values of the pending rows
	marks        []int             // per leaf column, len(batch) before the row being written
	tops         []topColumn       // per top-level field
	nestedLeaves []int             // leaf columns under nested top-level fields
	leafField    []int             // per leaf column, the top-level field it is, or -1
	arena        []byte            // copies of []byte values and decimal bytes of the pending rows
	batchRows    int
	batchLimit   int // rows of the batch being filled: probeRows, then writeBatchRows
	// The first batch of a file is held per leaf column, without Go
	// pointers (see heldValues): a top-level leaf's values go there as
	// Write converts them, a nested leaf's are shredded into its batch and
	// copied there every writeBatchRows rows (holdBlock), blockRow counting
	// them. held is nil after the first batch.
	held     []*heldValues
	blockRow int
	buffers  *WriteBuffers
	// batchMaxBytes ends the first batch early (dictionaryPageBytes per
	// column); no limit after it.
	batchMaxBytes int64
	nestedStarts  [][]int32 // per nested leaf, where each row of the first batch starts
	batchBytes    int64

	rowGroupSize int64
	rgRows       int64
	rgNaN        []bool // per leaf column: a NaN was written in the current row group
	rowGroups    []rowGroupInfo
	rows         int64

	stats   []*columnStatsCollector // per top-level field
	scratch big.Int

	closed bool
	// defaultPageBuffer turns heldPageBuffer off (tests compare the files).
	defaultPageBuffer bool
	err               error // sticky I/O or encoder failure
}

// topColumn packs what the hot path of Write needs about a top-level field.
type topColumn struct {
	node        *schemaNode
	values      []parquet.Value // primitive fields: the batch, one slot per row; nil for nested fields
	kind        leafKind
	required    bool
	plainString bool // STRING without a length to check
	def         int  // definition level of a non-null value
	column      int  // leaf column index
	scale       int  // DECIMAL scale
	null        parquet.Value
}

// NewWriter starts a Parquet file for rows of fields on w. Errors wrap
// ErrInvalidWriterOptions.
func NewWriter(w io.Writer, fields []types.DataField, o WriterOptions) (*Writer, error) {
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: a data file needs at least one field", ErrInvalidWriterOptions)
	}
	comp := o.Compressor
	if comp == nil {
		var err error
		if comp, err = NewCompressor(o.Compression, o.ZstdLevel); err != nil {
			return nil, err
		}
	}
	buffers := o.Buffers
	if buffers == nil {
		buffers = NewWriteBuffers() // the file's own
	}
	modes := o.StatsModes
	if modes == nil {
		modes = make([]schema.StatsMode, len(fields))
		for i := range modes {
			modes[i] = schema.DefaultStatsMode
		}
	}
	if len(modes) != len(fields) {
		return nil, fmt.Errorf("%w: %d stats modes for %d fields", ErrInvalidWriterOptions, len(modes), len(fields))
	}
	for i, m := range modes {
		switch {
		case m.Kind < schema.StatsNone || m.Kind > schema.StatsFull:
			return nil, fmt.Errorf("%w: field %q: unknown stats mode %v", ErrInvalidWriterOptions, fields[i].Name, m)
		case m.Kind == schema.StatsTruncate && m.Length <= 0:
			// TruncateSimpleColStatsCollector: "Truncate length should larger than zero."
			return nil, fmt.Errorf("%w: field %q: stats mode %v needs a length above zero", ErrInvalidWriterOptions, fields[i].Name, m)
		}
	}
	rgSize := o.RowGroupSize
	if rgSize == 0 {
		rgSize = DefaultRowGroupSize
	}
	if rgSize < 0 {
		return nil, fmt.Errorf("%w: row group size %d", ErrInvalidWriterOptions, rgSize)
	}
	if err := checkWriteFieldNames(fields); err != nil {
		return nil, err
	}
	s, err := buildWriteSchema(fields, schemaOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidWriterOptions, err)
	}

	wr := &Writer{
		schema:        s,
		fields:        fields,
		codec:         comp.codec,
		out:           &outputWriter{bw: buffers.bufWriter(w)},
		batch:         make([][]parquet.Value, len(s.leaves)),
		batchLimit:    probeRows(len(s.leaves)),
		held:          make([]*heldValues, len(s.leaves)),
		buffers:       buffers,
		batchMaxBytes: dictionaryPageBytes * int64(len(s.leaves)),
		marks:         make([]int, len(s.leaves)),
		rowGroupSize:  rgSize,
		rgNaN:         make([]bool, len(s.leaves)),
		stats:         make([]*columnStatsCollector, len(fields)),
	}
	wr.leafField = make([]int, len(s.leaves))
	for i := range wr.leafField {
		wr.leafField[i] = -1
	}
	for i, n := range s.fields {
		wr.stats[i] = newColumnStatsCollector(n, modes[i])
		t := topColumn{node: n}
		if n.role == roleLeaf {
			wr.leafField[n.leaf] = i
			wr.batch[n.leaf] = wr.buffers.get(writeBatchRows)
			t.values, t.kind, t.required, t.def, t.column, t.null = wr.batch[n.leaf], n.kind, n.required, n.defLevel, n.leaf, n.nullValue
			t.plainString = n.kind == leafString && n.dataType.Length >= types.MaxLength
			t.scale = n.dataType.Scale
		}
		wr.tops = append(wr.tops, t)
		if n.role != roleLeaf {
			for leaf := n.firstLeaf; leaf < n.endLeaf; leaf++ {
				wr.nestedLeaves = append(wr.nestedLeaves, leaf)
			}
		}
	}
	wr.nestedStarts = make([][]int32, len(wr.nestedLeaves))
	for leaf := range wr.held {
		// A top-level leaf's values carry levels when it is optional
		// (see Write); a nested leaf's always do (writeLeaf).
		levels := true
		if f := wr.leafField[leaf]; f >= 0 {
			levels = wr.tops[f].def != 0
		}
		wr.held[leaf] = wr.buffers.held(leaf, levels)
	}
	return wr, nil
}

// startFile creates parquet-go's writer once the first batch is complete,
// with the columns dictionary-encoded that parquet-mr would encode so, and
// shrinks the batch to writeBatchRows.
func (w *Writer) startFile() error {
	s, err := buildWriteSchema(w.fields, schemaOptions{dictionary: w.dictionaryChoices()})
	if err != nil {
		return w.fail(fmt.Errorf("%w: %w", ErrInvalidWriterOptions, err))
	}
	pageBuffer := 0
	if w.closed && !w.defaultPageBuffer {
		pageBuffer = w.heldPageBuffer()
	}
	pw, err := newParquetWriter(w.out, s, w.codec, pageBuffer)
	if err != nil {
		return w.fail(err)
	}
	cols := pw.ColumnWriters()
	if len(cols) != len(w.schema.leaves) {
		return w.fail(fmt.Errorf("create parquet writer: %d column writers for %d columns", len(cols), len(w.schema.leaves)))
	}
	w.pw, w.cols = pw, cols
	return nil
}

// holdBlock copies the nested leaves' shredded values of the first
// batch's rows since the last call to held and empties their batches.
func (w *Writer) holdBlock() {
	for _, leaf := range w.nestedLeaves {
		w.held[leaf].append(w.batch[leaf])
		w.batch[leaf] = w.batch[leaf][:0]
	}
	w.arena = w.arena[:0]
	w.blockRow = 0
}

// pending returns the values of rows start..end of the batch in leaf
// column leaf, the k-th nested leaf or a top-level one (k < 0); in the
// first batch they are rebuilt from held into the column's batch buffer.
func (w *Writer) pending(leaf, k, start, end int) []parquet.Value {
	if w.held == nil {
		if k < 0 {
			return w.batch[leaf][start:end]
		}
		return w.batch[leaf] // one slice: the whole batch
	}
	h := w.held[leaf]
	if k < 0 {
		return h.values(w.batch[leaf][:0], start, end)
	}
	from, to := int(w.nestedStarts[k][start]), h.len()
	if end < w.batchRows {
		to = int(w.nestedStarts[k][end])
	}
	w.batch[leaf] = h.values(w.batch[leaf][:0], from, to)
	return w.batch[leaf]
}

// endFirstBatch returns the held values to the buffers; the batches that
// follow hold writeBatchRows rows in one block.
func (w *Writer) endFirstBatch() {
	w.batchLimit = writeBatchRows
	w.releaseHeld()
	w.nestedStarts, w.batchMaxBytes = nil, math.MaxInt64
}

func (w *Writer) releaseHeld() {
	for _, h := range w.held {
		w.buffers.putHeld(h)
	}
	w.held = nil
}

// newParquetWriter creates parquet-go's writer; pageBuffer is its page
// buffer size (parquet.PageBufferSize), 0 for parquet-go's default.
func newParquetWriter(out io.Writer, s *writeSchema, codec compress.Codec, pageBuffer int) (pw *parquet.GenericWriter[any], err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: create parquet writer: %v", ErrInvalidWriterOptions, r)
		}
	}()
	opts := []parquet.WriterOption{
		parquet.NewSchema(parquetRootName, s.root),
		parquet.Compression(codec),
		// parquet-mr writes v1 data pages with RLE definition levels and,
		// since 1.11, no statistics in page headers.
		parquet.DataPageVersion(1),
		parquet.DataPageStatistics(false),
		parquet.WriteBufferSize(0),
		parquet.DictionaryMaxBytes(dictionaryMaxBytes),
	}
	if pageBuffer > 0 {
		opts = append(opts, parquet.PageBufferSize(pageBuffer))
	}
	return parquet.NewGenericWriter[any](out, opts...), nil
}

// checkWriteFieldNames rejects duplicate names among the top-level fields and the
// fields of each ROW: Java readers match Parquet columns by name.
func checkWriteFieldNames(fields []types.DataField) error {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if seen[f.Name] {
			return fmt.Errorf("%w: duplicate field name %q", ErrInvalidWriterOptions, f.Name)
		}
		seen[f.Name] = true
		if err := checkWriteNestedNames(f.Type); err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
	}
	return nil
}

func checkWriteNestedNames(t types.DataType) error {
	switch t.Kind {
	case types.KindRow:
		return checkWriteFieldNames(t.Fields)
	case types.KindArray, types.KindMultiset:
		if t.Element != nil {
			return checkWriteNestedNames(*t.Element)
		}
	case types.KindMap:
		if t.Key != nil {
			if err := checkWriteNestedNames(*t.Key); err != nil {
				return err
			}
		}
		if t.Value != nil {
			return checkWriteNestedNames(*t.Value)
		}
	}
	return nil
}

// Write appends one row: row[i] is the value of field i as a lakecore/types
// Go value (nil for NULL). A row that does not fit the fields is rejected
// whole with an error wrapping ErrInvalidValue that names the field (as a
// path into nested values) and what was wrong; nothing of it is written.
// Timestamps are stored at their column's precision like Java does: epoch
// millis for p <= 3, micros for p <= 6 (finer digits are dropped), INT96
// nanoseconds above.
func (w *Writer) Write(row []any) error {
	if w.closed {
		return ErrWriterClosed
	}
	if w.err != nil {
		return w.err
	}
	fields := w.schema.fields
	if len(row) != len(fields) {
		return fmt.Errorf("%w: row has %d values for %d fields", ErrInvalidValue, len(row), len(fields))
	}
	if w.blockRow == writeBatchRows {
		w.holdBlock()
	}
	// Only the leaves of nested fields take a varying number of values per
	// row; a top-level leaf has exactly blockRow before this row.
	for _, leaf := range w.nestedLeaves {
		w.marks[leaf] = len(w.batch[leaf])
	}
	arenaMark, bytesMark := len(w.arena), w.batchBytes
	row = row[:len(w.tops)]
	for i := range w.tops {
		t := &w.tops[i]
		// The commonest primitive kinds are converted inline; everything
		// else, and every value that needs an error, takes writeTopLeaf.
		if v := row[i]; t.values != nil && v != nil {
			var val parquet.Value
			ok := false
			switch t.kind {
			case leafBigInt:
				var x int64
				x, ok = v.(int64)
				val = parquet.Int64Value(x)
			case leafInt:
				var x int32
				x, ok = v.(int32)
				val = parquet.Int32Value(x)
			case leafDouble:
				var x float64
				x, ok = v.(float64)
				val = parquet.DoubleValue(x)
			case leafTimestampMillis:
				var ts types.Timestamp
				ts, ok = v.(types.Timestamp)
				ok = ok && uint32(ts.NanoOfMilli) <= 999_999
				val = parquet.Int64Value(ts.Millis)
			case leafTimestampMicros:
				var ts types.Timestamp
				ts, ok = v.(types.Timestamp)
				ok = ok && uint32(ts.NanoOfMilli) <= 999_999 && ts.Millis <= math.MaxInt64/1000-1 && ts.Millis >= math.MinInt64/1000+1
				val = parquet.Int64Value(ts.Millis*1000 + int64(ts.NanoOfMilli)/1000)
			case leafDecimal64, leafDecimal32:
				// Already at the column's scale and within an int64: only
				// the precision is left to check (decimalValue does the rest).
				var d types.Decimal
				d, ok = v.(types.Decimal)
				if ok = ok && d.Scale == t.scale && d.Unscaled != nil && d.Unscaled.IsInt64(); ok {
					u := d.Unscaled.Int64()
					ok = u < t.node.decimalBound && u > -t.node.decimalBound
					if t.kind == leafDecimal32 {
						val = parquet.Int32Value(int32(u))
					} else {
						val = parquet.Int64Value(u)
					}
				}
			case leafDate:
				var x types.Date
				x, ok = v.(types.Date)
				val = parquet.Int32Value(int32(x))
			case leafString:
				var x string
				x, ok = v.(string)
				if ok = ok && t.plainString && utf8.ValidString(x); ok {
					// See stringValue on aliasing the string.
					val = parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(x), len(x)))
					w.batchBytes += int64(len(x))
				}
			}
			if ok {
				if t.def != 0 {
					val = val.Level(0, t.def, t.column)
				}
				if w.held != nil {
					w.held[t.column].add(&val)
				} else {
					t.values[w.blockRow] = val
				}
				continue
			}
		}
		var verr *valueError
		if t.values != nil {
			if verr = w.writeTopLeaf(t, row[i]); verr == nil && w.held != nil {
				w.held[t.column].add(&t.values[w.blockRow])
			}
		} else {
			verr = w.shred(t.node, row[i], 0)
		}
		if verr != nil {
			n := t.node
			for _, leaf := range w.nestedLeaves {
				w.batch[leaf] = w.batch[leaf][:w.marks[leaf]]
			}
			if w.held != nil {
				for j := range i {
					if c := w.tops[j].column; w.tops[j].values != nil {
						w.held[c].truncate(w.batchRows)
					}
				}
			}
			w.arena, w.batchBytes = w.arena[:arenaMark], bytesMark
			return verr.within(n.name)
		}
	}
	if w.held != nil {
		// The first batch is written in slices (flushBatch): remember
		// where this row starts in each nested leaf's held values.
		for k, leaf := range w.nestedLeaves {
			w.nestedStarts[k] = append(w.nestedStarts[k], int32(w.held[leaf].len()+w.marks[leaf]))
		}
	}
	w.rows++
	w.batchRows++
	w.blockRow++
	w.batchBytes += int64(8 * len(w.batch))
	if w.batchRows >= w.batchLimit || w.batchBytes >= w.batchMaxBytes {
		return w.flushBatch()
	}
	return nil
}

// EstimatedSize returns the bytes written so far plus an estimate of the
// buffered rows (pages of the open row group, values not yet encoded); the
// footer is not counted. Paimon rolls files on this (target-file-size).
// Until the first rows of the file are encoded (see Writer on dictionaries)
// they count at their PLAIN size, which may be more than they take.
func (w *Writer) EstimatedSize() int64 {
	if w.pw == nil {
		return w.batchBytes
	}
	return w.pw.Size() + w.batchBytes
}

// Close flushes the last row group and writes the footer, then returns the
// file's row count and per-column statistics. The io.Writer is flushed but
// not closed. Close after Close returns ErrWriterClosed.
func (w *Writer) Close() (*FileStats, error) {
	if w.closed {
		return nil, ErrWriterClosed
	}
	w.closed = true
	if w.err != nil {
		return nil, w.err
	}
	if err := w.flushBatch(); err != nil {
		return nil, err
	}
	if w.pw == nil { // no rows
		if err := w.startFile(); err != nil {
			return nil, err
		}
	}
	if err := w.flushRowGroup(); err != nil {
		return nil, err
	}
	// parquet-go writes the page indexes and the footer on Close; capture
	// them and write them again the way Java does (see rewriteTail).
	base := w.out.written
	w.out.capture = true
	if err := w.pw.Close(); err != nil {
		return nil, w.fail(fmt.Errorf("close parquet file: %w", err))
	}
	w.out.capture = false
	tail, err := w.rewriteTail(w.out.captured, base)
	if err != nil {
		return nil, w.fail(err)
	}
	if _, err := w.out.bw.Write(tail); err != nil {
		return nil, w.fail(fmt.Errorf("write parquet footer: %w", err))
	}
	if err := w.out.bw.Flush(); err != nil {
		return nil, w.fail(fmt.Errorf("flush parquet file: %w", err))
	}
	w.buffers.putBufWriter(w.out.bw)
	w.out.bw = nil
	for i := range w.tops {
		if t := &w.tops[i]; t.values != nil {
			w.buffers.put(t.values, writeBatchRows)
		}
	}
	if w.held != nil { // no rows
		w.releaseHeld()
	}
	w.batch, w.tops, w.arena = nil, nil, nil // drop references to the caller's strings
	st := &FileStats{RowCount: w.rows, Columns: make([]ColumnStats, len(w.stats))}
	for i, c := range w.stats {
		st.Columns[i] = c.result()
	}
	return st, nil
}

func (w *Writer) fail(err error) error {
	w.err = err
	return err
}

// flushBatch hands the pending rows to parquet-go's column writers, which
// encode and compress pages as they fill, and flushes the row group once
// its buffered size reaches RowGroupSize.
func (w *Writer) flushBatch() error {
	if w.batchRows == 0 {
		return nil
	}
	first := w.pw == nil
	if first {
		w.holdBlock()
		if err := w.startFile(); err != nil {
			return err
		}
	}
	// The first batch of a file is larger; it goes in writeBatchRows slices
	// so that row groups are cut as often as after it.
	for start := 0; start < w.batchRows; start += writeBatchRows {
		if err := w.writeRows(start, min(start+writeBatchRows, w.batchRows)); err != nil {
			return err
		}
	}
	for _, leaf := range w.nestedLeaves {
		w.batch[leaf] = w.batch[leaf][:0]
	}
	for k := range w.nestedStarts {
		w.nestedStarts[k] = w.nestedStarts[k][:0]
	}
	w.arena = w.arena[:0]
	w.batchRows, w.blockRow, w.batchBytes = 0, 0, 0
	if first {
		w.endFirstBatch()
	}
	return nil
}

// writeRows hands rows start..end of the batch to the column writers and
// flushes the row group once its buffered size reaches RowGroupSize.
func (w *Writer) writeRows(start, end int) error {
	for i, n := range w.schema.fields {
		if n.role != roleLeaf {
			continue
		}
		vals := w.pending(n.leaf, -1, start, end)
		if n.kind == leafFloat || n.kind == leafDouble || n.kind == leafDecimalFixed {
			w.stats[i].observeBatch(vals, &w.rgNaN[n.leaf])
		}
		if err := w.writeColumn(n.leaf, vals); err != nil {
			return err
		}
	}
	for k, leaf := range w.nestedLeaves {
		vals := w.pending(leaf, k, start, end)
		if n := w.schema.leaves[leaf]; n.kind == leafFloat || n.kind == leafDouble {
			markNaN(vals, n.kind, &w.rgNaN[leaf])
		}
		if err := w.writeColumn(leaf, vals); err != nil {
			return err
		}
	}
	w.rgRows += int64(end - start)
	if w.pw.Size()-w.out.written >= w.rowGroupSize {
		return w.flushRowGroup()
	}
	return nil
}

func (w *Writer) writeColumn(leaf int, vals []parquet.Value) error {
	if _, err := w.cols[leaf].WriteRowValues(vals); err != nil {
		return w.fail(fmt.Errorf("write parquet column %s: %w", strings.Join(w.schema.paths[leaf], "."), err))
	}
	return nil
}

func (w *Writer) flushRowGroup() error {
	if w.rgRows == 0 {
		return nil
	}
	if err := w.pw.Flush(); err != nil {
		return w.fail(fmt.Errorf("write parquet row group: %w", err))
	}
	info := rowGroupInfo{nan: w.rgNaN}
	w.rgNaN = make([]bool, len(w.schema.leaves))
	for _, c := range w.stats {
		if c.node.role != roleLeaf || c.node.kind != leafDecimalFixed || !c.rgHasValue {
			continue
		}
		if info.decimalMin == nil {
			info.decimalMin = make([][]byte, len(w.schema.leaves))
			info.decimalMax = make([][]byte, len(w.schema.leaves))
		}
		info.decimalMin[c.node.leaf] = append([]byte(nil), c.rgMin...)
		info.decimalMax[c.node.leaf] = append([]byte(nil), c.rgMax...)
		c.rgHasValue = false
	}
	w.rowGroups = append(w.rowGroups, info)
	w.rgRows = 0
	return nil
}
