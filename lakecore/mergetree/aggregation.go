package mergetree

import "github.com/benthos-paimon/benthos-paimon/lakecore/kv"

// RowAggregator folds the rows of one key column by column, as package
// aggregate's RowAggregator does (AggregateMergeFunction's field logic).
type RowAggregator interface {
	Reset()
	Add(kind kv.RowKind, row []any) error
	Result() (row []any, kind kv.RowKind)
}

// Aggregation is AggregateMergeFunction: every record of a key goes through
// the row aggregator in merge order; the result carries the last
// record's sequence number.
type Aggregation struct {
	Rows RowAggregator

	latestSeq int64
	level     int32
}

// Reset implements MergeFunction.
func (a *Aggregation) Reset() {
	a.Rows.Reset()
	a.latestSeq, a.level = 0, 0
}

// Add implements MergeFunction.
func (a *Aggregation) Add(r *KeyValue) error {
	a.latestSeq, a.level = r.Seq, r.Level
	return a.Rows.Add(r.Kind, r.Value)
}

// Result implements MergeFunction.
func (a *Aggregation) Result() (*KeyValue, error) {
	row, kind := a.Rows.Result()
	return &KeyValue{Value: row, Seq: a.latestSeq, Kind: kind, Level: a.level}, nil
}
