package manifest

import (
	"fmt"
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
