package read

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
)

// SetLatestChanges makes the streaming splits of a primary-key table
// (scan.Split.Streaming) return the latest change of each key instead of
// every record: an upsert stream, as a key-value store or Flink's
// upsert-kafka sink consumes a changelog. Call it before Open. Batch
// splits and append tables are not affected.
//
// Within the split (one bucket of one snapshot's delta or changelog) the
// records of a key are ordered as the merge orders them (sequence.field,
// then sequence number, then file order) and the last one is kept. If it
// adds a row (+I or +U) it is returned as it is; if it retracts (-D, or a
// -U the merge would treat as a delete) it is returned as -D with the
// retracted values. No -U is ever returned. The kept records come in
// their read order, with their file positions, in batches of consecutive
// rows of one file.
//
// The whole split is read before its first batch is returned, so memory
// grows with one bucket's changes in one snapshot.
func (r *TableRead) SetLatestChanges(on bool) { r.latest = on }

// latestReader is the SplitReader of SetLatestChanges.
type latestReader struct {
	r   *TableRead
	it  *RowIterator
	out []latestRecord // kept records in read order; nil until read
	at  int            // next record of out to return
	err error
}

// latestRecord is one record of the split with its read position.
type latestRecord struct {
	kv   mergetree.KeyValue
	file string
	row  int64
	n    int // read order
}

func (r *TableRead) openLatest(ctx context.Context, split scan.Split) (SplitReader, error) {
	split.DeletionVectors = nil // Java reads streaming splits without deletion vectors
	it, err := r.openFiles(ctx, split, true)
	if err != nil {
		return nil, err
	}
	return &latestReader{r: r, it: it}, nil
}

// collect reads the whole split and keeps the last record of each key.
func (l *latestReader) collect(ctx context.Context) error {
	var recs []latestRecord
	for {
		b, err := l.it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for i, row := range b.Rows {
			value, seq, kind, err := l.r.record(row, b.Pos.File)
			if err != nil {
				return err
			}
			recs = append(recs, latestRecord{kv: mergetree.KeyValue{Value: value, Seq: seq, Kind: kind}, file: b.Pos.File, row: b.Pos.Row + int64(i), n: len(recs)})
		}
	}
	order := &l.r.engine.Order
	slices.SortFunc(recs, func(a, b latestRecord) int {
		if c := order.Compare(&a.kv, &b.kv); c != 0 {
			return c
		}
		return a.n - b.n
	})
	kept := make([]latestRecord, 0, len(recs))
	for i := range recs {
		if i+1 < len(recs) && order.CompareKeys(recs[i].kv.Value, recs[i+1].kv.Value) == 0 {
			continue
		}
		rec := recs[i]
		if rec.kv.Kind.IsRetract() {
			rec.kv.Kind = kv.Delete
		}
		kept = append(kept, rec)
	}
	slices.SortFunc(kept, func(a, b latestRecord) int { return a.n - b.n })
	l.out = kept
	return nil
}

func (l *latestReader) Next(ctx context.Context) (Batch, error) {
	if l.err != nil {
		return Batch{}, l.err
	}
	if l.out == nil {
		if err := l.collect(ctx); err != nil {
			l.err = err
			return Batch{}, err
		}
	}
	if l.at >= len(l.out) {
		return Batch{}, io.EOF
	}
	limit := l.r.batchSize
	if limit <= 0 {
		limit = 1024
	}
	first := &l.out[l.at]
	b := Batch{Pos: RowPosition{File: first.file, Row: first.row}}
	for l.at < len(l.out) && len(b.Rows) < limit {
		rec := &l.out[l.at]
		if rec.file != first.file || rec.row != first.row+int64(len(b.Rows)) {
			break
		}
		b.Rows = append(b.Rows, l.r.project(rec.kv.Value))
		b.Kinds = append(b.Kinds, rec.kv.Kind)
		l.at++
	}
	return b, nil
}

func (l *latestReader) Close() error { return l.it.Close() }
