package datafile

import (
	"bufio"
	"encoding/binary"
	"fmt"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// createdBy names the writer in the footer. parquet-mr parses it
// (VersionParser) to decide whether to trust binary statistics, so it keeps
// the "<app> version <v> (build <b>)" shape.
const createdBy = "benthos-paimon version 0.1.0 (build lakecore)"

// rowGroupInfo keeps what the footer rewrite needs about a flushed row group.
type rowGroupInfo struct {
	nan        []bool   // per leaf column
	decimalMin [][]byte // per leaf column: signed min of a top-level DECIMAL p > 18, nil if none
	decimalMax [][]byte
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
