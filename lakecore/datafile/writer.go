// Package datafile reads and writes the Parquet data files of Paimon append
// tables, byte-compatible with what Java Paimon writes and reads
// (paimon-format.md §11).
package datafile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

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

// createdBy names the writer in the footer. parquet-mr parses it
// (VersionParser) to decide whether to trust binary statistics, so it keeps
// the "<app> version <v> (build <b>)" shape.
const createdBy = "benthos-paimon version 0.1.0 (build lakecore)"

const (
	// writeBatchRows rows are shredded into per-column value buffers before
	// they are handed to parquet-go's column writers.
	writeBatchRows = 128
	// outputBufferSize buffers the small writes of page headers.
	outputBufferSize = 64 << 10
	// dictionaryMaxBytes is when a dictionary-encoded column falls back to
	// PLAIN for the rest of the row group, as parquet-mr does at its default
	// parquet.dictionary.page.size of 1 MiB.
	dictionaryMaxBytes = 1 << 20
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
// Memory is bounded by the open row group: its compressed pages (flushed to
// the io.Writer once they reach RowGroupSize), one uncompressed page buffer
// and dictionary per column, and up to 128 shredded rows not yet handed to
// the column writers; plus the compressor's encoder (about 1.5 MiB for
// zstd) unless WriterOptions.Compressor shares one. The footer follows on Close; the io.Writer is not
// closed.
//
// The statistics Close returns are derived from the file's own footer
// statistics, merged over row groups, as Java's ParquetSimpleStatsExtractor
// does, so the manifest and the Parquet footer always agree.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	schema *writeSchema
	out    *outputWriter
	pw     *parquet.GenericWriter[any]
	cols   []*parquet.ColumnWriter

	batch        [][]parquet.Value // per leaf column, the shredded values of the pending rows
	marks        []int             // per leaf column, len(batch) before the row being written
	tops         []topColumn       // per top-level field
	nestedLeaves []int             // leaf columns under nested top-level fields
	leafField    []int             // per leaf column, the top-level field it is, or -1
	arena        []byte            // copies of []byte values and decimal bytes of the pending rows
	batchRows    int
	batchBytes   int64

	rowGroupSize int64
	rgRows       int64
	rgNaN        []bool // per leaf column: a NaN was written in the current row group
	rowGroups    []rowGroupInfo
	rows         int64

	stats   []*columnStatsCollector // per top-level field
	scratch big.Int

	closed bool
	err    error // sticky I/O or encoder failure
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
	null        parquet.Value
}

// rowGroupInfo keeps what the footer rewrite needs about a flushed row group.
type rowGroupInfo struct {
	nan        []bool   // per leaf column
	decimalMin [][]byte // per leaf column: signed min of a top-level DECIMAL p > 18, nil if none
	decimalMax [][]byte
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
	s, err := buildWriteSchema(fields, schemaOptions{dictionaryStrings: true})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidWriterOptions, err)
	}

	out := &outputWriter{bw: bufio.NewWriterSize(w, outputBufferSize)}
	pw, err := newParquetWriter(out, s, comp.codec)
	if err != nil {
		return nil, err
	}
	wr := &Writer{
		schema:       s,
		out:          out,
		pw:           pw,
		cols:         pw.ColumnWriters(),
		batch:        make([][]parquet.Value, len(s.leaves)),
		marks:        make([]int, len(s.leaves)),
		rowGroupSize: rgSize,
		rgNaN:        make([]bool, len(s.leaves)),
		stats:        make([]*columnStatsCollector, len(fields)),
	}
	if len(wr.cols) != len(s.leaves) {
		return nil, fmt.Errorf("create parquet writer: %d column writers for %d columns", len(wr.cols), len(s.leaves))
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
			wr.batch[n.leaf] = make([]parquet.Value, writeBatchRows)
			t.values, t.kind, t.required, t.def, t.column, t.null = wr.batch[n.leaf], n.kind, n.required, n.defLevel, n.leaf, n.nullValue
			t.plainString = n.kind == leafString && n.dataType.Length >= types.MaxLength
		}
		wr.tops = append(wr.tops, t)
		if n.role != roleLeaf {
			for leaf := n.firstLeaf; leaf < n.endLeaf; leaf++ {
				wr.nestedLeaves = append(wr.nestedLeaves, leaf)
			}
		}
	}
	return wr, nil
}

func newParquetWriter(out io.Writer, s *writeSchema, codec compress.Codec) (pw *parquet.GenericWriter[any], err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: create parquet writer: %v", ErrInvalidWriterOptions, r)
		}
	}()
	return parquet.NewGenericWriter[any](out,
		parquet.NewSchema(parquetRootName, s.root),
		parquet.Compression(codec),
		// parquet-mr writes v1 data pages with RLE definition levels and,
		// since 1.11, no statistics in page headers.
		parquet.DataPageVersion(1),
		parquet.DataPageStatistics(false),
		parquet.WriteBufferSize(0),
		parquet.DictionaryMaxBytes(dictionaryMaxBytes),
	), nil
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
	// Only the leaves of nested fields take a varying number of values per
	// row; a top-level leaf has exactly batchRows before this row.
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
				t.values[w.batchRows] = val
				continue
			}
		}
		var verr *valueError
		if t.values != nil {
			verr = w.writeTopLeaf(t, row[i])
		} else {
			verr = w.shred(t.node, row[i], 0)
		}
		if verr != nil {
			n := t.node
			for _, leaf := range w.nestedLeaves {
				w.batch[leaf] = w.batch[leaf][:w.marks[leaf]]
			}
			w.arena, w.batchBytes = w.arena[:arenaMark], bytesMark
			return verr.within(n.name)
		}
	}
	w.rows++
	w.batchRows++
	w.batchBytes += int64(8 * len(w.batch))
	if w.batchRows >= writeBatchRows {
		return w.flushBatch()
	}
	return nil
}

// EstimatedSize returns the bytes written so far plus an estimate of the
// buffered rows (pages of the open row group, values not yet encoded); the
// footer is not counted. Paimon rolls files on this (target-file-size).
func (w *Writer) EstimatedSize() int64 {
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
	for _, c := range w.stats {
		if n := c.node; n.role == roleLeaf && (n.kind == leafFloat || n.kind == leafDouble || n.kind == leafDecimalFixed) {
			c.observeBatch(w.batch[n.leaf][:w.batchRows], &w.rgNaN[n.leaf])
		}
	}
	for _, n := range w.schema.fields {
		if n.role == roleLeaf {
			if err := w.writeColumn(n.leaf, w.batch[n.leaf][:w.batchRows]); err != nil {
				return err
			}
		}
	}
	for _, leaf := range w.nestedLeaves {
		if err := w.writeColumn(leaf, w.batch[leaf]); err != nil {
			return err
		}
		w.batch[leaf] = w.batch[leaf][:0]
	}
	w.arena = w.arena[:0]
	w.rgRows += int64(w.batchRows)
	w.batchRows, w.batchBytes = 0, 0
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

// writeTopLeaf appends the value of a top-level primitive field: NULLs,
// the kinds Write does not convert inline, and every bad value.
//
// A top-level leaf holds exactly one value per row, so its batch has a
// fixed length and the value goes to slot batchRows; a rejected row is
// simply overwritten by the next one.
func (w *Writer) writeTopLeaf(t *topColumn, v any) *valueError {
	slot := &t.values[w.batchRows]
	if v == nil {
		if t.required {
			return valueNullError(t.node)
		}
		*slot = t.null
		return nil
	}
	val, err := w.leafValue(t.node, v)
	if err != nil {
		return err
	}
	if t.def != 0 {
		val = val.Level(0, t.def, t.column)
	}
	*slot = val
	return nil
}

// writeLeaf appends one value of a leaf column with repetition level r.
func (w *Writer) writeLeaf(n *schemaNode, v any, r int) *valueError {
	if v == nil {
		if n.required {
			return valueNullError(n)
		}
		w.batch[n.leaf] = append(w.batch[n.leaf], parquet.Value{}.Level(r, n.defLevel-1, n.leaf))
		return nil
	}
	val, err := w.leafValue(n, v)
	if err != nil {
		return err
	}
	w.batch[n.leaf] = append(w.batch[n.leaf], val.Level(r, n.defLevel, n.leaf))
	return nil
}

// shred appends the values of a nested field (Dremel record shredding, as
// parquet-mr's record consumer does for ParquetRowDataWriter's group
// writers): r is the repetition level of the first value it appends.
func (w *Writer) shred(n *schemaNode, v any, r int) *valueError {
	if n.role == roleLeaf {
		return w.writeLeaf(n, v, r)
	}
	if v == nil {
		if n.required {
			return valueNullError(n)
		}
		w.appendNulls(n, r, n.defLevel-1)
		return nil
	}
	switch n.role {
	case roleRow:
		vals, ok := v.([]any)
		if !ok {
			return valueTypeError(v, n)
		}
		if len(vals) != len(n.children) {
			return &valueError{msg: fmt.Sprintf("got %d values, want %d for %s", len(vals), len(n.children), n.dataType)}
		}
		for i, c := range n.children {
			if err := w.shred(c, vals[i], r); err != nil {
				return err.within(c.name)
			}
		}
	case roleList:
		vals, ok := v.([]any)
		if !ok {
			return valueTypeError(v, n)
		}
		rep := n.children[0]
		if len(vals) == 0 {
			w.appendNulls(n, r, n.defLevel)
			return nil
		}
		elem := rep.children[0]
		for i, e := range vals {
			if i > 0 {
				r = rep.repLevel
			}
			if err := w.shred(elem, e, r); err != nil {
				return err.at(i)
			}
		}
	case roleMap:
		m, ok := v.(types.Map)
		if !ok {
			return valueTypeError(v, n)
		}
		if len(m.Keys) != len(m.Values) {
			return &valueError{msg: fmt.Sprintf("map has %d keys and %d values", len(m.Keys), len(m.Values))}
		}
		rep := n.children[0]
		if len(m.Keys) == 0 {
			w.appendNulls(n, r, n.defLevel)
			return nil
		}
		key, val := rep.children[0], rep.children[1]
		for i := range m.Keys {
			if i > 0 {
				r = rep.repLevel
			}
			if m.Keys[i] == nil {
				// ParquetRowDataWriter.MapWriter: "Parquet does not support null keys in maps."
				return (&valueError{msg: "null map key (Parquet map keys are required)"}).at(i)
			}
			if err := w.shred(key, m.Keys[i], r); err != nil {
				return err.within(parquetMapKey).at(i)
			}
			if err := w.shred(val, m.Values[i], r); err != nil {
				return err.within(parquetMapValue).at(i)
			}
		}
	}
	return nil
}

// appendNulls appends a NULL at definition level d to every leaf under n.
func (w *Writer) appendNulls(n *schemaNode, r, d int) {
	for leaf := n.firstLeaf; leaf < n.endLeaf; leaf++ {
		w.batch[leaf] = append(w.batch[leaf], parquet.Value{}.Level(r, d, leaf))
	}
}

// leafValue checks v against the leaf's Paimon type and returns it in its
// Parquet representation (levels not yet set).
func (w *Writer) leafValue(n *schemaNode, v any) (parquet.Value, *valueError) {
	switch n.kind {
	case leafBoolean:
		if x, ok := v.(bool); ok {
			return parquet.BooleanValue(x), nil
		}
	case leafTinyInt:
		if x, ok := v.(int8); ok {
			return parquet.Int32Value(int32(x)), nil
		}
	case leafSmallInt:
		if x, ok := v.(int16); ok {
			return parquet.Int32Value(int32(x)), nil
		}
	case leafInt:
		if x, ok := v.(int32); ok {
			return parquet.Int32Value(x), nil
		}
	case leafBigInt:
		if x, ok := v.(int64); ok {
			return parquet.Int64Value(x), nil
		}
	case leafFloat:
		if x, ok := v.(float32); ok {
			if x != x && w.leafField[n.leaf] < 0 { // top-level: observeBatch
				w.rgNaN[n.leaf] = true
			}
			return parquet.FloatValue(x), nil
		}
	case leafDouble:
		if x, ok := v.(float64); ok {
			if x != x && w.leafField[n.leaf] < 0 { // top-level: observeBatch
				w.rgNaN[n.leaf] = true
			}
			return parquet.DoubleValue(x), nil
		}
	case leafString:
		if s, ok := v.(string); ok {
			return w.stringValue(n, s)
		}
	case leafBytes:
		if b, ok := v.([]byte); ok {
			if n.dataType.Length < types.MaxLength && len(b) > n.dataType.Length {
				return parquet.Value{}, &valueError{msg: fmt.Sprintf("%d bytes exceed %s", len(b), n.dataType)}
			}
			start := len(w.arena)
			w.arena = append(w.arena, b...)
			w.batchBytes += int64(len(b))
			return parquet.ByteArrayValue(w.arena[start:len(w.arena):len(w.arena)]), nil
		}
	case leafDecimal32, leafDecimal64, leafDecimalFixed:
		if d, ok := v.(types.Decimal); ok {
			return w.decimalValue(n, d)
		}
	case leafDate:
		if x, ok := v.(types.Date); ok {
			return parquet.Int32Value(int32(x)), nil
		}
	case leafTime:
		if x, ok := v.(types.Time); ok {
			if x < 0 || x >= 86_400_000 {
				return parquet.Value{}, &valueError{msg: fmt.Sprintf("time %d ms is outside the day", int32(x))}
			}
			return parquet.Int32Value(int32(x)), nil
		}
	case leafTimestampMillis, leafTimestampMicros, leafTimestampInt96:
		if ts, ok := v.(types.Timestamp); ok {
			return timestampValue(n, ts)
		}
	}
	return parquet.Value{}, valueTypeError(v, n)
}

func (w *Writer) stringValue(n *schemaNode, s string) (parquet.Value, *valueError) {
	if !utf8.ValidString(s) {
		return parquet.Value{}, &valueError{msg: fmt.Sprintf("invalid UTF-8 in %s value %q", n.dataType, s)}
	}
	if max := n.dataType.Length; max < types.MaxLength && len(s) > max {
		if c := utf8.RuneCountInString(s); c > max {
			return parquet.Value{}, &valueError{msg: fmt.Sprintf("string of %d characters exceeds %s", c, n.dataType)}
		}
	}
	w.batchBytes += int64(len(s))
	// Go strings are immutable and parquet-go copies the bytes into its page
	// buffer, so the value may alias the string until the batch is flushed.
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s))), nil
}

// decimalValue rescales d to the column's scale (exactly, or fails) and
// checks the precision, as Decimal.fromBigDecimal would reject it.
func (w *Writer) decimalValue(n *schemaNode, d types.Decimal) (parquet.Value, *valueError) {
	t := n.dataType
	if d.Unscaled == nil {
		return parquet.Value{}, &valueError{msg: "decimal without an unscaled value"}
	}
	if n.kind != leafDecimalFixed && d.Unscaled.IsInt64() {
		if u, ok := encRescaleInt64(d.Unscaled.Int64(), d.Scale, t.Scale); ok {
			if u >= n.decimalBound || u <= -n.decimalBound {
				return parquet.Value{}, decimalRangeError(d, t)
			}
			if n.kind == leafDecimal32 {
				return parquet.Int32Value(int32(u)), nil
			}
			return parquet.Int64Value(u), nil
		}
	}
	u := &w.scratch
	u.Set(d.Unscaled)
	switch {
	case d.Scale < t.Scale:
		u.Mul(u, types.Pow10Big(t.Scale-d.Scale))
	case d.Scale > t.Scale:
		var rem big.Int
		u.QuoRem(u, types.Pow10Big(d.Scale-t.Scale), &rem)
		if rem.Sign() != 0 {
			return parquet.Value{}, &valueError{msg: fmt.Sprintf("%s needs rounding to fit %s", d, t)}
		}
	}
	if u.CmpAbs(types.Pow10Big(t.Precision)) >= 0 {
		return parquet.Value{}, decimalRangeError(d, t)
	}
	switch n.kind {
	case leafDecimal32:
		return parquet.Int32Value(int32(u.Int64())), nil
	case leafDecimal64:
		return parquet.Int64Value(u.Int64()), nil
	}
	// FIXED_LEN_BYTE_ARRAY: big-endian two's complement, sign-extended to
	// fixedLen bytes (ParquetRowDataWriter UnscaledBytesWriter).
	if u.Sign() < 0 {
		var mod big.Int
		mod.Lsh(big.NewInt(1), uint(8*n.fixedLen))
		u.Add(u, &mod)
	}
	start := len(w.arena)
	w.arena = append(w.arena, make([]byte, n.fixedLen)...)
	buf := w.arena[start:len(w.arena):len(w.arena)]
	u.FillBytes(buf)
	w.batchBytes += int64(n.fixedLen)
	return parquet.FixedLenByteArrayValue(buf), nil
}

// encRescaleInt64 returns u × 10^(to-from) when it is exact and fits an int64.
func encRescaleInt64(u int64, from, to int) (int64, bool) {
	switch {
	case from == to:
		return u, true
	case from < to:
		if to-from > 18 {
			return 0, false
		}
		p := types.Pow10(to - from)
		hi, lo := bits.Mul64(uint64(encAbsInt64(u)), uint64(p))
		if hi != 0 || lo > math.MaxInt64 || u == math.MinInt64 {
			return 0, false
		}
		if u < 0 {
			return -int64(lo), true
		}
		return int64(lo), true
	default:
		if from-to > 18 {
			return 0, false
		}
		p := types.Pow10(from - to)
		if u%p != 0 {
			return 0, false // the big.Int path reports the rounding
		}
		return u / p, true
	}
}

func encAbsInt64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func decimalRangeError(d types.Decimal, t types.DataType) *valueError {
	return &valueError{msg: fmt.Sprintf("%s does not fit %s", d, t)}
}

// Java: paimon-format/src/main/java/org/apache/paimon/format/parquet/writer/ParquetRowDataWriter.java
// (JULIAN_EPOCH_OFFSET_DAYS, MILLIS_IN_DAY, NANOS_PER_MILLISECOND).
const (
	int96JulianEpochOffsetDays = 2_440_588
	int96MillisPerDay          = 86_400_000
)

// timestampValue stores a timestamp at its column's precision:
// TimestampMillsWriter (getMillisecond), TimestampMicrosWriter (toMicros)
// and TimestampInt96Writer (timestampToInt96, with Java's truncating / and %
// so that instants before 1970 get a negative nanos-of-day).
func timestampValue(n *schemaNode, ts types.Timestamp) (parquet.Value, *valueError) {
	if ts.NanoOfMilli < 0 || ts.NanoOfMilli > 999_999 {
		return parquet.Value{}, timestampNanoError(ts)
	}
	switch n.kind {
	case leafTimestampMillis:
		return parquet.Int64Value(ts.Millis), nil
	case leafTimestampMicros:
		if ts.Millis > math.MaxInt64/1000-1 || ts.Millis < math.MinInt64/1000+1 {
			return parquet.Value{}, &valueError{msg: fmt.Sprintf("timestamp %d ms overflows %s", ts.Millis, n.dataType)}
		}
		return parquet.Int64Value(ts.Millis*1000 + int64(ts.NanoOfMilli)/1000), nil
	}
	julian := ts.Millis/int96MillisPerDay + int96JulianEpochOffsetDays
	if julian > math.MaxInt32 || julian < math.MinInt32 {
		return parquet.Value{}, &valueError{msg: fmt.Sprintf("timestamp %d ms overflows %s", ts.Millis, n.dataType)}
	}
	nanosOfDay := (ts.Millis%int96MillisPerDay)*1_000_000 + int64(ts.NanoOfMilli)
	return parquet.Int96Value(deprecated.Int96{
		uint32(uint64(nanosOfDay)), uint32(uint64(nanosOfDay) >> 32), uint32(int32(julian)),
	}), nil
}

func timestampNanoError(ts types.Timestamp) *valueError {
	return &valueError{msg: fmt.Sprintf("timestamp nano-of-millisecond %d is outside 0..999999", ts.NanoOfMilli)}
}

// valueError describes a value that does not fit its column; path holds the
// path segments innermost first.
type valueError struct {
	path []string
	msg  string
}

func (e *valueError) within(name string) *valueError {
	e.path = append(e.path, "."+name)
	return e
}

func (e *valueError) at(i int) *valueError {
	e.path = append(e.path, "["+strconv.Itoa(i)+"]")
	return e
}

func (e *valueError) Error() string {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		if i == len(e.path)-1 {
			seg = strings.TrimPrefix(seg, ".")
		}
		b.WriteString(seg)
	}
	return fmt.Sprintf("%s: field %q: %s", ErrInvalidValue, b.String(), e.msg)
}

func (e *valueError) Unwrap() error { return ErrInvalidValue }

func valueTypeError(v any, n *schemaNode) *valueError {
	return &valueError{msg: fmt.Sprintf("got %T, want %s", v, n.dataType)}
}

func valueNullError(n *schemaNode) *valueError {
	return &valueError{msg: fmt.Sprintf("got NULL, want %s", n.dataType)}
}

// outputWriter buffers parquet-go's writes to the caller's io.Writer and
// can capture them instead, for the footer rewrite.
type outputWriter struct {
	bw       *bufio.Writer
	written  int64 // bytes parquet-go has written, captured ones included
	capture  bool
	captured []byte
}

func (o *outputWriter) Write(p []byte) (int, error) {
	if o.capture {
		o.captured = append(o.captured, p...)
		o.written += int64(len(p))
		return len(p), nil
	}
	n, err := o.bw.Write(p)
	o.written += int64(n)
	return n, err
}

// rewriteTail takes what parquet-go wrote on Close (page indexes, footer,
// footer length, magic; plus the leading magic if no row group was
// written), starting at file offset base, and returns it as Java would have
// it:
//
//   - the schema elements are the ones ParquetSchemaConverter produces,
//     with field_id 0 kept (parquet-go omits a zero field id) and
//     parquet-mr's converted types;
//   - the footer version is 1, as parquet-mr writes;
//   - column chunk statistics that parquet-go gets wrong for Java are fixed:
//     DECIMAL p > 18 is ordered as signed (parquet-go compares the bytes
//     unsigned), INT96 gets no min/max (parquet-mr has no order for it), and
//     a FLOAT/DOUBLE chunk that holds NaN gets no min/max (parquet-go skips
//     NaN, parquet-mr's reader would then wrongly skip the row group for
//     "x <> v");
//   - column indexes whose bounds would be wrong for parquet-mr for the same
//     reasons (and BYTES, whose truncated max parquet-go can get wrong) are
//     dropped; offset indexes are kept.
func (w *Writer) rewriteTail(tail []byte, base int64) ([]byte, error) {
	n := len(tail)
	if n < 8 || string(tail[n-4:]) != "PAR1" {
		return nil, fmt.Errorf("rewrite parquet footer: unexpected file tail of %d bytes", n)
	}
	footerLen := int(binary.LittleEndian.Uint32(tail[n-8:]))
	if footerLen > n-8 {
		return nil, fmt.Errorf("rewrite parquet footer: footer length %d exceeds tail of %d bytes", footerLen, n)
	}
	region := tail[:n-8-footerLen]
	var md footerMetadata
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), tail[n-8-footerLen:n-8], &md); err != nil {
		return nil, fmt.Errorf("rewrite parquet footer: decode: %w", err)
	}
	if len(md.Schema) != len(w.schema.elements) {
		return nil, fmt.Errorf("rewrite parquet footer: %d schema elements, want %d", len(md.Schema), len(w.schema.elements))
	}
	if len(md.RowGroups) != len(w.rowGroups) {
		return nil, fmt.Errorf("rewrite parquet footer: %d row groups, %d flushed", len(md.RowGroups), len(w.rowGroups))
	}
	md.Version = 1
	md.Schema = w.schema.elements
	md.CreatedBy = createdBy

	// Where the page indexes start inside region; anything before (the
	// leading magic of an empty file) is kept as is.
	prefix := int64(len(region))
	for i := range md.RowGroups {
		rg := &md.RowGroups[i]
		if len(rg.Columns) != len(w.schema.leaves) {
			return nil, fmt.Errorf("rewrite parquet footer: row group %d has %d columns, want %d", i, len(rg.Columns), len(w.schema.leaves))
		}
		for j := range rg.Columns {
			c := &rg.Columns[j]
			if c.ColumnIndexLength > 0 {
				prefix = min(prefix, c.ColumnIndexOffset-base)
			}
			if c.OffsetIndexLength > 0 {
				prefix = min(prefix, c.OffsetIndexOffset-base)
			}
		}
	}
	slice := func(off int64, length int32) ([]byte, error) {
		start := off - base
		if start < 0 || length < 0 || start+int64(length) > int64(len(region)) {
			return nil, fmt.Errorf("rewrite parquet footer: page index at %d+%d outside the tail", off, length)
		}
		return region[start : start+int64(length)], nil
	}
	if prefix < 0 {
		return nil, fmt.Errorf("rewrite parquet footer: page index before the tail")
	}
	out := make([]byte, 0, len(tail)+256)
	out = append(out, region[:prefix]...)
	pos := base + prefix
	for i := range md.RowGroups {
		info := w.rowGroups[i]
		for j := range md.RowGroups[i].Columns {
			c := &md.RowGroups[i].Columns[j]
			keep := w.fixChunkStatistics(&c.MetaData.Statistics, j, info)
			if f := w.leafField[j]; f >= 0 {
				w.stats[f].addChunk(&c.MetaData.Statistics, info.nan[j])
			}
			if c.ColumnIndexLength > 0 && keep {
				b, err := slice(c.ColumnIndexOffset, c.ColumnIndexLength)
				if err != nil {
					return nil, err
				}
				out = append(out, b...)
				c.ColumnIndexOffset = pos
				pos += int64(len(b))
			} else {
				c.ColumnIndexOffset, c.ColumnIndexLength = 0, 0
			}
		}
	}
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			c := &md.RowGroups[i].Columns[j]
			if c.OffsetIndexLength == 0 {
				continue
			}
			b, err := slice(c.OffsetIndexOffset, c.OffsetIndexLength)
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
			c.OffsetIndexOffset = pos
			pos += int64(len(b))
		}
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return nil, fmt.Errorf("rewrite parquet footer: encode: %w", err)
	}
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}

// fixChunkStatistics corrects the footer statistics of leaf column leaf in
// one row group and reports whether its column index is right for parquet-mr.
func (w *Writer) fixChunkStatistics(st *format.Statistics, leaf int, info rowGroupInfo) bool {
	strip := func() { st.Min, st.Max, st.MinValue, st.MaxValue = nil, nil, nil, nil }
	switch w.schema.leaves[leaf].kind {
	case leafTimestampInt96:
		strip()
		return false
	case leafDecimalFixed:
		strip()
		if info.decimalMin != nil && info.decimalMin[leaf] != nil {
			st.MinValue, st.MaxValue = info.decimalMin[leaf], info.decimalMax[leaf]
		}
		return false
	case leafBytes:
		return false
	case leafFloat, leafDouble:
		if info.nan[leaf] {
			strip()
			return false
		}
	}
	return true
}
