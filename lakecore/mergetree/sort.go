package mergetree

import (
	"cmp"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// RecordSorter sorts write buffers in a RecordOrder, as Java's
// BinaryInMemorySortBuffer does with normalized keys: each record gets a
// 64-bit prefix of its first key column whose unsigned order agrees with
// the column's, so that most comparisons are one integer comparison on a
// contiguous array instead of a walk through the boxed key values. Only
// records with equal prefixes are compared in full (RecordOrder.Compare).
// It keeps its scratch array between calls; it is not safe for concurrent
// use.
type RecordSorter struct {
	order   *RecordOrder
	entries []sortEntry
}

// sortEntry is one record to sort with its key prefix and sequence number.
type sortEntry struct {
	prefix uint64
	seq    int64
	rec    *KeyValue
}

// NewRecordSorter returns a sorter of records in order o.
func NewRecordSorter(o *RecordOrder) *RecordSorter { return &RecordSorter{order: o} }

// Sort sorts recs by RecordOrder.Compare, with the result
// slices.SortStableFunc gives, or with stable false slices.SortFunc.
// Records of one write buffer have distinct sequence numbers, so unless a
// float key or sequence field holds NaN (which CompareValues finds equal
// to every number) the order is total and both give one result, which the
// sorter reaches its own way; with NaN it runs the sort asked for, with a
// comparator that answers as RecordOrder.Compare does.
func (s *RecordSorter) Sort(recs []*KeyValue, stable bool) {
	o := s.order
	if len(o.KeyFields) == 0 || len(recs) < 2 {
		if stable {
			slices.SortStableFunc(recs, o.Compare)
		} else {
			slices.SortFunc(recs, o.Compare)
		}
		return
	}
	first, rest := o.KeyFields[0], o.KeyFields[1:]
	// exact: the prefix is the whole key of every record, so that equal
	// prefixes leave only the sequence number to compare.
	exact := len(rest) == 0 && len(o.Sequence.Fields) == 0
	nan := false
	entries := slices.Grow(s.entries[:0], len(recs))
	for _, r := range recs {
		p, whole := KeyPrefix(r.Value[first])
		exact = exact && whole
		if !whole {
			nan = nan || isNaN(r.Value[first])
			for _, i := range rest {
				nan = nan || isNaN(r.Value[i])
			}
			for _, i := range o.Sequence.Fields {
				nan = nan || isNaN(r.Value[i])
			}
		}
		entries = append(entries, sortEntry{prefix: p, seq: r.Seq, rec: r})
	}
	switch {
	case exact:
		slices.SortFunc(entries, func(a, b sortEntry) int {
			if a.prefix != b.prefix {
				return cmp.Compare(a.prefix, b.prefix)
			}
			return cmp.Compare(a.seq, b.seq)
		})
	case nan && stable:
		// Prefixes order as the keys do, so this comparator answers as
		// o.Compare does for every pair, and the sort takes the same steps.
		slices.SortStableFunc(entries, func(a, b sortEntry) int {
			if a.prefix != b.prefix {
				return cmp.Compare(a.prefix, b.prefix)
			}
			return o.Compare(a.rec, b.rec)
		})
	default:
		slices.SortFunc(entries, func(a, b sortEntry) int {
			if a.prefix != b.prefix {
				return cmp.Compare(a.prefix, b.prefix)
			}
			return o.Compare(a.rec, b.rec)
		})
	}
	for i := range entries {
		recs[i] = entries[i].rec
		entries[i].rec = nil // the scratch array must not keep records alive
	}
	s.entries = entries[:0]
}

// isNaN reports whether v is a float NaN.
func isNaN(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != x
	case float32:
		return x != x
	}
	return false
}

// KeyPrefix returns a prefix of key value v whose unsigned order agrees
// with kv.CompareValues (a smaller prefix means a smaller value; equal
// prefixes say nothing unless whole), and whether it determines the value.
// Types without a cheap order-preserving prefix get 0.
func KeyPrefix(v any) (prefix uint64, whole bool) {
	const sign = 1 << 63
	switch x := v.(type) {
	case int64:
		return uint64(x) ^ sign, true
	case int32:
		return uint64(int64(x)) ^ sign, true
	case int16:
		return uint64(int64(x)) ^ sign, true
	case int8:
		return uint64(int64(x)) ^ sign, true
	case types.Date:
		return uint64(int64(x)) ^ sign, true
	case types.Time:
		return uint64(int64(x)) ^ sign, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		return bytesPrefix(x[:min(len(x), 8)]), false
	case []byte:
		return bytesPrefix(x[:min(len(x), 8)]), false
	case types.Timestamp:
		return uint64(x.Millis) ^ sign, false
	}
	return 0, false
}

// bytesPrefix packs up to 8 bytes big-endian, zero-padded: Go and Java
// compare strings and binaries by unsigned bytes, so the packed prefixes
// order as the values do.
func bytesPrefix[T string | []byte](b T) uint64 {
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(b) {
			p |= uint64(b[i])
		}
	}
	return p
}
