package mergetree

import (
	"context"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// KeyValue is one record of a KeyValue data file: the row of every table
// column, its sequence number, its row kind and the level of the file it
// was read from (KeyValue.java). The key is the row's trimmed primary-key
// columns (RecordOrder.Key).
type KeyValue struct {
	Value []any
	Seq   int64
	Kind  kv.RowKind
	Level int32
}

// RecordReader returns records one by one: the records of one sorted run,
// in strictly ascending key order. Next returns io.EOF after the last one.
// Every record is a new one, the caller's to keep: the merge holds the
// records of one key while it reads the next ones.
type RecordReader interface {
	Next(ctx context.Context) (*KeyValue, error)
	Close() error
}

// RecordOrder is the order in which records are merged: by key, then by
// the user-defined sequence fields (sequence.field, NULL first, ascending
// or descending), then by sequence number (SortMergeReaderWithMinHeap's
// comparator).
type RecordOrder struct {
	// KeyFields are the indexes of the trimmed primary-key columns in the
	// value row, in primary-key order.
	KeyFields []int
	// Sequence compares the sequence.field columns; zero when unset.
	Sequence kv.Comparator
}

// CompareKeys orders the keys of two value rows.
func (o *RecordOrder) CompareKeys(a, b []any) int {
	for _, i := range o.KeyFields {
		if r := kv.CompareValues(a[i], b[i]); r != 0 {
			return r
		}
	}
	return 0
}

// Compare orders two records for merging.
func (o *RecordOrder) Compare(a, b *KeyValue) int {
	if r := o.CompareKeys(a.Value, b.Value); r != 0 {
		return r
	}
	if r := o.Sequence.Compare(a.Value, b.Value); r != 0 {
		return r
	}
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Key returns the key columns of a value row, in key order.
func (o *RecordOrder) Key(value []any) []any {
	k := make([]any, len(o.KeyFields))
	for i, j := range o.KeyFields {
		k[i] = value[j]
	}
	return k
}

// RecordSlab hands out records and value rows from arrays of slabSize
// records, for readers that make one record per row: two allocations per
// slabSize records instead of two per record. A record handed out is the
// caller's to keep (it keeps its slab alive); its Value has exactly the
// width asked for and no room to grow into its neighbour's. The zero
// value is ready for use; it is not safe for concurrent use.
type RecordSlab struct {
	recs []KeyValue
	vals []any
}

const slabSize = 256

// New returns a zeroed record whose Value has width nil values.
func (s *RecordSlab) New(width int) *KeyValue {
	if len(s.recs) == 0 {
		s.recs = make([]KeyValue, slabSize)
	}
	if len(s.vals) < width {
		s.vals = make([]any, slabSize*max(width, 1))
	}
	r := &s.recs[0]
	s.recs = s.recs[1:]
	r.Value = s.vals[:width:width]
	s.vals = s.vals[width:]
	return r
}
