package manifest

import (
	"fmt"

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
		if !types.Comparable(v) {
			continue
		}
		if c.mins[i] == nil {
			c.mins[i], c.maxs[i] = v, v
			continue
		}
		lo, ok1 := types.Compare(v, c.mins[i])
		hi, ok2 := types.Compare(v, c.maxs[i])
		if !ok1 || !ok2 {
			return fmt.Errorf("field %d: cannot compare %T with %T", i, v, c.mins[i])
		}
		if lo < 0 {
			c.mins[i] = v
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
