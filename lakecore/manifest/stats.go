package manifest

import (
	"bytes"
	"fmt"
	"math"
	"math/big"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// SimpleStats is Paimon's SimpleStats (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/stats/SimpleStats.java): the
// min and max values of a set of columns as serialized BinaryRows (4-byte
// big-endian arity prefix + row, encoded with every column type made
// nullable) and one null count per column. A nil NullCounts element means
// the count is unknown.
//
// Java's readers call NullCounts.size() unconditionally, so NullCounts must
// not be nil in anything written; EncodeEntries and EncodeFileMetas refuse a
// nil NullCounts. Decoding keeps a null _NULL_COUNTS as nil.
type SimpleStats struct {
	MinValues, MaxValues []byte
	NullCounts           []*int64
}

// emptyRowBytes is the serialized empty BinaryRow: arity 0 + 8 zero bytes.
func emptyRowBytes() []byte { return make([]byte, 12) }

// EmptyStats returns SimpleStats.EMPTY_STATS: empty min and max rows and an
// empty (not nil) NullCounts. Append tables use it for key stats, and dense
// "no stats" value stats pair it with an empty ValueStatsCols.
func EmptyStats() SimpleStats {
	return SimpleStats{MinValues: emptyRowBytes(), MaxValues: emptyRowBytes(), NullCounts: []*int64{}}
}

// decodeStats reads a SimpleStats record (_MIN_VALUES, _MAX_VALUES,
// _NULL_COUNTS) by field name.
func decodeStats(r *record) (SimpleStats, error) {
	var s SimpleStats
	var err error
	if s.MinValues, err = r.reqBytes("_MIN_VALUES"); err != nil {
		return s, err
	}
	if s.MaxValues, err = r.reqBytes("_MAX_VALUES"); err != nil {
		return s, err
	}
	items, it, err := r.optArray("_NULL_COUNTS")
	if err != nil {
		return s, err
	}
	if items == nil {
		return s, nil
	}
	if it.kind != kLong && it.kind != kInt {
		return s, wrongType("_NULL_COUNTS", r.n.fields[r.n.index["_NULL_COUNTS"]].typ, "array<[\"null\",\"long\"]>")
	}
	s.NullCounts = make([]*int64, len(items))
	for i, v := range items {
		switch x := v.(type) {
		case int64:
			s.NullCounts[i] = &x
		case int32:
			y := int64(x)
			s.NullCounts[i] = &y
		}
	}
	return s, nil
}

func (s *SimpleStats) check(what string) error {
	if len(s.MinValues) < 4 || len(s.MaxValues) < 4 {
		return fmt.Errorf("%s: min/max values must be serialized BinaryRows (at least the 4-byte arity), got %d and %d bytes",
			what, len(s.MinValues), len(s.MaxValues))
	}
	if s.NullCounts == nil {
		return fmt.Errorf("%s: NullCounts is nil; Java cannot read a null _NULL_COUNTS (use an empty slice)", what)
	}
	return nil
}

// appendStats writes a SimpleStats record of Java's schema.
func appendStats(b []byte, s *SimpleStats) []byte {
	b = appendBytes(b, s.MinValues)
	b = appendBytes(b, s.MaxValues)
	b = appendNotNull(b)
	if len(s.NullCounts) > 0 {
		b = appendLong(b, int64(len(s.NullCounts)))
		for _, c := range s.NullCounts {
			b = appendOptLong(b, c)
		}
	}
	return append(b, 0)
}

// nullableTypes returns the types with top-level nullability forced on, as
// SimpleStatsConverter does (type.copy(true)) before writing stats rows.
func nullableTypes(fieldTypes []types.DataType) []types.DataType {
	out := make([]types.DataType, len(fieldTypes))
	for i, t := range fieldTypes {
		out[i] = t.WithNullable(true)
	}
	return out
}

// NewStats serializes per-column statistics as Java's SimpleStatsConverter
// does: mins and maxs as BinaryRows of fieldTypes made nullable (nil = no
// min/max known), one null count per column (nil = unknown). mins, maxs and
// nullCounts must each have one element per field type, except that a nil
// nullCounts means every count is unknown. Values use lakecore's Go
// representation (lakecore/types). With no fields it returns EmptyStats().
func NewStats(fieldTypes []types.DataType, mins, maxs []any, nullCounts []*int64) (SimpleStats, error) {
	n := len(fieldTypes)
	if nullCounts == nil {
		nullCounts = make([]*int64, n)
	}
	if len(mins) != n || len(maxs) != n || len(nullCounts) != n {
		return SimpleStats{}, fmt.Errorf("new stats: %d field types but %d mins, %d maxs, %d null counts",
			n, len(mins), len(maxs), len(nullCounts))
	}
	nt := nullableTypes(fieldTypes)
	minRow, err := binrow.Serialize(nt, mins)
	if err != nil {
		return SimpleStats{}, fmt.Errorf("new stats: min values: %w", err)
	}
	maxRow, err := binrow.Serialize(nt, maxs)
	if err != nil {
		return SimpleStats{}, fmt.Errorf("new stats: max values: %w", err)
	}
	counts := make([]*int64, n)
	for i, c := range nullCounts {
		if c != nil {
			v := *c
			counts[i] = &v
		}
	}
	return SimpleStats{MinValues: minRow, MaxValues: maxRow, NullCounts: counts}, nil
}

// Decode returns the min and max values and null counts of s, read with
// fieldTypes: the columns the stats cover, i.e. the fields of schema
// _SCHEMA_ID, or those named by _VALUE_STATS_COLS in dense mode. A nil
// NullCounts (Java never writes one) decodes as nil. The rows' arity and the
// number of null counts must match fieldTypes.
func (s SimpleStats) Decode(fieldTypes []types.DataType) (mins, maxs []any, nullCounts []*int64, err error) {
	nt := nullableTypes(fieldTypes)
	if mins, err = binrow.Deserialize(nt, s.MinValues); err != nil {
		return nil, nil, nil, fmt.Errorf("decode stats min values: %w", err)
	}
	if maxs, err = binrow.Deserialize(nt, s.MaxValues); err != nil {
		return nil, nil, nil, fmt.Errorf("decode stats max values: %w", err)
	}
	if s.NullCounts != nil && len(s.NullCounts) != len(fieldTypes) {
		return nil, nil, nil, fmt.Errorf("decode stats: %w: %d null counts for %d columns", ErrCorrupt, len(s.NullCounts), len(fieldTypes))
	}
	if s.NullCounts != nil {
		nullCounts = make([]*int64, len(s.NullCounts))
		for i, c := range s.NullCounts {
			if c != nil {
				v := *c
				nullCounts[i] = &v
			}
		}
	}
	return mins, maxs, nullCounts, nil
}

// statsCollector accumulates full min/max/null-count statistics of rows, as
// Java's SimpleStatsCollector with FullSimpleColStatsCollector does (apache/paimon:
// paimon-common/src/main/java/org/apache/paimon/format/SimpleStatsCollector.java,
// statistics/FullSimpleColStatsCollector.java). Values that are not
// Comparable in Java (BYTES, nested types) get no min/max.
type statsCollector struct {
	types      []types.DataType
	mins, maxs []any
	nulls      []int64
}

func newStatsCollector(fieldTypes []types.DataType) *statsCollector {
	n := len(fieldTypes)
	return &statsCollector{types: fieldTypes, mins: make([]any, n), maxs: make([]any, n), nulls: make([]int64, n)}
}

func (c *statsCollector) collect(row []any) error {
	for i, v := range row {
		if v == nil {
			c.nulls[i]++
			continue
		}
		if !javaComparable(v) {
			continue
		}
		if c.mins[i] == nil {
			c.mins[i], c.maxs[i] = v, v
			continue
		}
		lo, err := compareValues(v, c.mins[i])
		if err != nil {
			return fmt.Errorf("field %d: %w", i, err)
		}
		if lo < 0 {
			c.mins[i] = v
		}
		hi, err := compareValues(v, c.maxs[i])
		if err != nil {
			return fmt.Errorf("field %d: %w", i, err)
		}
		if hi > 0 {
			c.maxs[i] = v
		}
	}
	return nil
}

func (c *statsCollector) stats() (SimpleStats, error) {
	counts := make([]*int64, len(c.nulls))
	for i := range c.nulls {
		counts[i] = &c.nulls[i]
	}
	return NewStats(c.types, c.mins, c.maxs, counts)
}

// javaComparable reports whether Java's internal value for v is Comparable.
func javaComparable(v any) bool {
	switch v.(type) {
	case bool, int8, int16, int32, int64, float32, float64, string, types.Decimal, types.Date, types.Time, types.Timestamp:
		return true
	}
	return false
}

// compareValues orders two values of the same type as Java's compareTo does:
// Float/Double.compare for floating point (NaN greatest, -0 < +0), unsigned
// bytes for strings (BinaryString.compareTo), numeric value for decimals.
func compareValues(a, b any) (int, error) {
	switch x := a.(type) {
	case bool:
		if y, ok := b.(bool); ok {
			return boolInt(x) - boolInt(y), nil
		}
	case int8:
		if y, ok := b.(int8); ok {
			return cmpOrdered(x, y), nil
		}
	case int16:
		if y, ok := b.(int16); ok {
			return cmpOrdered(x, y), nil
		}
	case int32:
		if y, ok := b.(int32); ok {
			return cmpOrdered(x, y), nil
		}
	case int64:
		if y, ok := b.(int64); ok {
			return cmpOrdered(x, y), nil
		}
	case types.Date:
		if y, ok := b.(types.Date); ok {
			return cmpOrdered(x, y), nil
		}
	case types.Time:
		if y, ok := b.(types.Time); ok {
			return cmpOrdered(x, y), nil
		}
	case float32:
		if y, ok := b.(float32); ok {
			return javaFloatCompare(float64(x), float64(y)), nil
		}
	case float64:
		if y, ok := b.(float64); ok {
			return javaFloatCompare(x, y), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return bytes.Compare([]byte(x), []byte(y)), nil
		}
	case types.Timestamp:
		if y, ok := b.(types.Timestamp); ok {
			return x.Compare(y), nil
		}
	case types.Decimal:
		if y, ok := b.(types.Decimal); ok && x.Unscaled != nil && y.Unscaled != nil {
			return decimalRat(x).Cmp(decimalRat(y)), nil
		}
	}
	return 0, fmt.Errorf("cannot compare %T with %T", a, b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpOrdered[T ~int8 | ~int16 | ~int32 | ~int64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// javaFloatCompare is Double.compare: NaN equals itself and is greater than
// everything, -0.0 is less than 0.0.
func javaFloatCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	if math.IsNaN(a) {
		ab = 0x7ff8000000000000
	}
	if math.IsNaN(b) {
		bb = 0x7ff8000000000000
	}
	return cmpOrdered(ab, bb)
}

func decimalRat(d types.Decimal) *big.Rat {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)
	if d.Scale < 0 {
		return new(big.Rat).SetInt(new(big.Int).Mul(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil)))
	}
	return new(big.Rat).SetFrac(d.Unscaled, den)
}
