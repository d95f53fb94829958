package datafile

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// FileStats is what the manifest stores about one data file: its row count
// and, per top-level field in schema order, the value statistics.
type FileStats struct {
	RowCount int64
	Columns  []ColumnStats
}

// ColumnStats are the statistics of one top-level column, as Java Paimon
// derives them from the Parquet footer (ParquetSimpleStatsExtractor and the
// column's SimpleColStatsCollector). Min and Max hold lakecore/types Go values
// of the column's type; nil means unknown. NullCount nil means unknown.
//
// Per type and stats mode:
//   - none: everything unknown;
//   - counts: exact null count, no min/max;
//   - truncate(n), full: exact null count and min/max for BOOLEAN, the
//     integers, FLOAT/DOUBLE (none if the column holds a NaN; a zero min is
//     -0.0 and a zero max +0.0), CHAR/VARCHAR/STRING (bytewise unsigned;
//     truncate(n) keeps n code points of the min and rounds the max up, or
//     drops both when it cannot), DECIMAL, DATE, TIME and TIMESTAMP/LTZ up to
//     precision 6 at their stored precision; no min/max for
//     BINARY/VARBINARY/BYTES and TIMESTAMP(7..9) (released Java up to 2.0;
//     binary min/max came after);
//   - ARRAY, MAP, MULTISET, ROW: everything unknown, null count included,
//     whatever the mode (Java finds no Parquet column named after the field).
type ColumnStats struct {
	Min, Max  any
	NullCount *int64
}

// parquetMaxStatsSize is parquet-mr's ParquetMetadataConverter.MAX_STATS_SIZE:
// it writes no min/max for a column chunk whose binary min and max together
// take 4096 bytes or more, so Java's manifest then has no min/max either.
const parquetMaxStatsSize = 4096

// columnStatsCollector gathers the statistics of one top-level column the
// way Java does: from the Parquet footer's column chunk statistics, merged
// over the row groups (apache/paimon: paimon-format/src/main/java/org/apache/paimon/format/parquet/ParquetUtil.java
// extractColumnStats, ParquetSimpleStatsExtractor.java toFieldStats), then
// converted by the column's stats collector
// (paimon-common/src/main/java/org/apache/paimon/statistics/*SimpleColStatsCollector.java).
// The footer statistics are over the values as stored (epoch millis or
// micros for timestamps, unscaled integers or two's-complement bytes for
// decimals) and have been corrected by the footer rewrite where parquet-go
// and parquet-mr disagree.
type columnStatsCollector struct {
	node *schemaNode
	mode schema.StatsMode

	// minMax is false when the column never gets min/max: stats mode none or
	// counts, nested types, BINARY/VARBINARY and TIMESTAMP(7..9).
	minMax bool

	nulls    int64
	hasValue bool
	sawNaN   bool

	minInt, maxInt     int64   // integer-like kinds and decimals p <= 18
	minFloat, maxFloat float64 // FLOAT and DOUBLE
	hasFalse, hasTrue  bool    // BOOLEAN
	minBytes, maxBytes []byte  // strings (UTF-8) and DECIMAL p > 18 (two's complement)

	// Row-group-local signed min/max of DECIMAL p > 18, for the footer:
	// parquet-go compares FIXED_LEN_BYTE_ARRAY unsigned, Java signed.
	rgHasValue   bool
	rgMin, rgMax []byte
}

func newColumnStatsCollector(n *schemaNode, mode schema.StatsMode) *columnStatsCollector {
	c := &columnStatsCollector{node: n, mode: mode}
	if n.role == roleLeaf && (mode.Kind == schema.StatsTruncate || mode.Kind == schema.StatsFull) {
		switch n.kind {
		case leafBytes, leafTimestampInt96:
		default:
			c.minMax = true
		}
	}
	return c
}

// observeBatch scans the stored values of a top-level leaf column, one per
// row, for what parquet-go's statistics get wrong: NaN (which parquet-go
// leaves out of min/max) and signed DECIMAL p > 18 bounds. *nan is set when
// a NaN is seen.
func (c *columnStatsCollector) observeBatch(vals []parquet.Value, nan *bool) {
	switch c.node.kind {
	case leafFloat:
		for i := range vals {
			if x := vals[i].Float(); x != x && !vals[i].IsNull() {
				*nan = true
			}
		}
	case leafDouble:
		for i := range vals {
			if x := vals[i].Double(); x != x && !vals[i].IsNull() {
				*nan = true
			}
		}
	case leafDecimalFixed:
		for i := range vals {
			if !vals[i].IsNull() {
				c.observeRowGroupDecimal(vals[i].ByteArray())
			}
		}
	}
}

// markNaN sets *nan when vals, of a FLOAT or DOUBLE leaf, hold a NaN.
func markNaN(vals []parquet.Value, k leafKind, nan *bool) {
	for i := range vals {
		if vals[i].IsNull() {
			continue
		}
		if (k == leafFloat && vals[i].Float() != vals[i].Float()) || (k == leafDouble && vals[i].Double() != vals[i].Double()) {
			*nan = true
			return
		}
	}
}

// addChunk merges the (corrected) footer statistics of one row group;
// nan reports whether the chunk holds a NaN.
func (c *columnStatsCollector) addChunk(st *format.Statistics, nan bool) {
	c.nulls += st.NullCount
	c.sawNaN = c.sawNaN || nan
	if !c.minMax || st.MinValue == nil || st.MaxValue == nil {
		return // no non-null value, or no order parquet-mr trusts
	}
	lo, hi := st.MinValue, st.MaxValue
	first := !c.hasValue
	c.hasValue = true
	switch c.node.kind {
	case leafBoolean:
		if len(lo) > 0 && lo[0] == 0 {
			c.hasFalse = true
		} else {
			c.hasTrue = true
		}
		if len(hi) > 0 && hi[0] != 0 {
			c.hasTrue = true
		} else {
			c.hasFalse = true
		}
	case leafTinyInt, leafSmallInt, leafInt, leafDate, leafTime, leafDecimal32:
		c.mergeInt(first, int64(int32(binary.LittleEndian.Uint32(lo))), int64(int32(binary.LittleEndian.Uint32(hi))))
	case leafBigInt, leafDecimal64, leafTimestampMillis, leafTimestampMicros:
		c.mergeInt(first, int64(binary.LittleEndian.Uint64(lo)), int64(binary.LittleEndian.Uint64(hi)))
	case leafFloat, leafDouble:
		var l, h float64
		if c.node.kind == leafFloat {
			l = float64(math.Float32frombits(binary.LittleEndian.Uint32(lo)))
			h = float64(math.Float32frombits(binary.LittleEndian.Uint32(hi)))
		} else {
			l = math.Float64frombits(binary.LittleEndian.Uint64(lo))
			h = math.Float64frombits(binary.LittleEndian.Uint64(hi))
		}
		if first || l < c.minFloat {
			c.minFloat = l
		}
		if first || h > c.maxFloat {
			c.maxFloat = h
		}
	case leafString:
		if first || bytes.Compare(lo, c.minBytes) < 0 {
			c.minBytes = append(c.minBytes[:0], lo...)
		}
		if first || bytes.Compare(hi, c.maxBytes) > 0 {
			c.maxBytes = append(c.maxBytes[:0], hi...)
		}
	case leafDecimalFixed:
		if first || statsCompareSigned(lo, c.minBytes) < 0 {
			c.minBytes = append(c.minBytes[:0], lo...)
		}
		if first || statsCompareSigned(hi, c.maxBytes) > 0 {
			c.maxBytes = append(c.maxBytes[:0], hi...)
		}
	}
}

func (c *columnStatsCollector) mergeInt(first bool, lo, hi int64) {
	if first || lo < c.minInt {
		c.minInt = lo
	}
	if first || hi > c.maxInt {
		c.maxInt = hi
	}
}

func (c *columnStatsCollector) observeRowGroupDecimal(b []byte) {
	if !c.rgHasValue || statsCompareSigned(b, c.rgMin) < 0 {
		c.rgMin = append(c.rgMin[:0], b...)
	}
	if !c.rgHasValue || statsCompareSigned(b, c.rgMax) > 0 {
		c.rgMax = append(c.rgMax[:0], b...)
	}
	c.rgHasValue = true
}

// statsCompareSigned orders equal-length big-endian two's-complement
// integers, as parquet-mr's BINARY_AS_SIGNED_INTEGER_COMPARATOR does.
func statsCompareSigned(a, b []byte) int {
	na, nb := len(a) > 0 && a[0]&0x80 != 0, len(b) > 0 && b[0]&0x80 != 0
	switch {
	case na && !nb:
		return -1
	case !na && nb:
		return 1
	}
	return bytes.Compare(a, b)
}

// result returns the column's statistics as the manifest should store them.
func (c *columnStatsCollector) result() ColumnStats {
	if c.mode.Kind == schema.StatsNone || c.node.role != roleLeaf {
		// Nested columns have no Parquet column named after the field, so
		// Java finds no statistics at all, not even a null count.
		return ColumnStats{}
	}
	nulls := c.nulls
	out := ColumnStats{NullCount: &nulls}
	if !c.minMax || !c.hasValue {
		return out
	}
	t := c.node.dataType
	switch c.node.kind {
	case leafBoolean:
		out.Min, out.Max = !c.hasFalse, c.hasTrue
	case leafTinyInt:
		out.Min, out.Max = int8(c.minInt), int8(c.maxInt)
	case leafSmallInt:
		out.Min, out.Max = int16(c.minInt), int16(c.maxInt)
	case leafInt:
		out.Min, out.Max = int32(c.minInt), int32(c.maxInt)
	case leafDate:
		out.Min, out.Max = types.Date(c.minInt), types.Date(c.maxInt)
	case leafTime:
		out.Min, out.Max = types.Time(c.minInt), types.Time(c.maxInt)
	case leafBigInt:
		out.Min, out.Max = c.minInt, c.maxInt
	case leafDecimal32, leafDecimal64:
		out.Min = types.NewDecimal(c.minInt, t.Scale)
		out.Max = types.NewDecimal(c.maxInt, t.Scale)
	case leafDecimalFixed:
		out.Min = types.Decimal{Unscaled: statsDecimalFromBytes(c.minBytes), Scale: t.Scale}
		out.Max = types.Decimal{Unscaled: statsDecimalFromBytes(c.maxBytes), Scale: t.Scale}
	case leafTimestampMillis:
		out.Min, out.Max = types.Timestamp{Millis: c.minInt}, types.Timestamp{Millis: c.maxInt}
	case leafTimestampMicros:
		out.Min, out.Max = statsTimestampFromMicros(c.minInt), statsTimestampFromMicros(c.maxInt)
	case leafFloat, leafDouble:
		if c.sawNaN {
			// parquet-mr orders NaN above every number, and its statistics
			// reader drops a min/max pair containing NaN.
			return out
		}
		// parquet-mr widens a zero min to -0.0 and a zero max to +0.0 when
		// reading statistics (Statistics.FloatBuilder/DoubleBuilder).
		lo, hi := c.minFloat, c.maxFloat
		if lo == 0 {
			lo = math.Copysign(0, -1)
		}
		if hi == 0 {
			hi = 0
		}
		if c.node.kind == leafFloat {
			out.Min, out.Max = float32(lo), float32(hi)
		} else {
			out.Min, out.Max = lo, hi
		}
	case leafString:
		if len(c.minBytes)+len(c.maxBytes) >= parquetMaxStatsSize {
			return out
		}
		lo, hi := string(c.minBytes), string(c.maxBytes)
		if c.mode.Kind == schema.StatsTruncate {
			var ok bool
			lo = truncateStringMin(lo, c.mode.Length)
			if hi, ok = truncateStringMax(hi, c.mode.Length); !ok {
				return out
			}
		}
		out.Min, out.Max = lo, hi
	}
	return out
}

func statsTimestampFromMicros(us int64) types.Timestamp {
	ms := us / 1000
	rem := us % 1000
	if rem < 0 {
		ms--
		rem += 1000
	}
	return types.Timestamp{Millis: ms, NanoOfMilli: int32(rem * 1000)}
}

func statsDecimalFromBytes(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// truncateStringMin keeps the first n code points
// (TruncateSimpleColStatsCollector.truncateMin, BinaryString.substring).
func truncateStringMin(s string, n int) string {
	i := 0
	for cp := 0; cp < n; cp++ {
		if i >= len(s) {
			return s
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// truncateStringMax returns a string >= s of at most n code points
// (TruncateSimpleColStatsCollector.truncateMax): s itself if it is short
// enough, else its first n code points with the last code point that can be
// incremented incremented and the rest dropped. ok is false when no code
// point can be incremented; Java then drops min and max.
//
// Java can increment U+D7FF into a lone surrogate, which its UTF-8 encoder
// turns into '?', a bound below s; Go skips the surrogate block to U+E000,
// which keeps the bound correct.
func truncateStringMax(s string, n int) (string, bool) {
	t := truncateStringMin(s, n)
	if len(t) == len(s) {
		return s, true
	}
	runes := []rune(t)
	for i := len(runes) - 1; i >= 0; i-- {
		next := runes[i] + 1
		if next >= 0xD800 && next <= 0xDFFF {
			next = 0xE000
		}
		if next <= utf8.MaxRune {
			runes = append(runes[:i], next)
			return string(runes), true
		}
	}
	return "", false
}
