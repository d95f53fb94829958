package mergetree

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// SortMergeReader merges sorted runs into one record per key: it takes the
// records of the smallest key from every run in RecordOrder (key, then
// sequence fields, then sequence number), folds them with the reducer and
// returns the result (SortMergeReaderWithMinHeap.java; the loser tree
// Java uses by default gives the same sequence). Keys whose result is nil
// are skipped. It does not drop deletes: that is the caller's choice
// (DropDelete). Not safe for concurrent use.
type SortMergeReader struct {
	records *RecordMerger
	reducer MergeFunction
	err     error
}

// NewSortMergeReader merges readers, which it owns: Close closes them.
func NewSortMergeReader(order *RecordOrder, fn MergeFunction, readers []RecordReader) *SortMergeReader {
	return &SortMergeReader{records: NewRecordMerger(order, readers), reducer: NewReducer(fn)}
}

// NewSortMergeReaderWrapped is NewSortMergeReader with a merge function
// wrapper that sees every record of every key, a key's only record too (no
// ReducerMergeFunctionWrapper): Java passes its changelog wrappers
// (LookupChangelogMergeFunctionWrapper) to the merge reader so.
func NewSortMergeReaderWrapped(order *RecordOrder, wrapper MergeFunction, readers []RecordReader) *SortMergeReader {
	return &SortMergeReader{records: NewRecordMerger(order, readers), reducer: wrapper}
}

// Next returns the merged record of the next key, or io.EOF. The record
// belongs to the caller. After an error, Next returns it again.
func (m *SortMergeReader) Next(ctx context.Context) (*KeyValue, error) {
	if m.err != nil {
		return nil, m.err
	}
	r, err := m.next(ctx)
	if err != nil && !errors.Is(err, io.EOF) {
		m.err = err
	}
	return r, err
}

func (m *SortMergeReader) next(ctx context.Context) (*KeyValue, error) {
	for {
		first, err := m.records.Next(ctx)
		if err != nil {
			return nil, err
		}
		m.reducer.Reset()
		if err := m.reducer.Add(first); err != nil {
			return nil, err
		}
		for {
			p, err := m.records.Peek(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			if m.records.order.CompareKeys(p.Value, first.Value) != 0 {
				break
			}
			if _, err := m.records.Next(ctx); err != nil {
				return nil, err
			}
			if err := m.reducer.Add(p); err != nil {
				return nil, err
			}
		}
		r, err := m.reducer.Result()
		if err != nil {
			return nil, fmt.Errorf("merge key %v: %w", m.records.order.Key(first.Value), err)
		}
		if r != nil {
			return r, nil
		}
	}
}

// Close closes every reader and returns the first error.
func (m *SortMergeReader) Close() error { return m.records.Close() }

// RecordMerger merges sorted runs record by record: every record of every
// run, in RecordOrder, none merged with another (the sort merge of a
// spilled write buffer's runs, BinaryExternalMerger's
// BinaryMergeIterator; and the order SortMergeReader folds keys in). A run
// may hold several records of a key. Not safe for concurrent use.
type RecordMerger struct {
	order   *RecordOrder
	readers []RecordReader
	heap    []heapItem
	started bool
}

type heapItem struct {
	kv  *KeyValue
	src int
}

// NewRecordMerger merges readers, which it owns: Close closes them.
func NewRecordMerger(order *RecordOrder, readers []RecordReader) *RecordMerger {
	return &RecordMerger{order: order, readers: readers}
}

func (m *RecordMerger) less(i, j int) bool {
	return m.order.Compare(m.heap[i].kv, m.heap[j].kv) < 0
}

func (m *RecordMerger) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !m.less(j, i) {
			break
		}
		m.heap[i], m.heap[j] = m.heap[j], m.heap[i]
		j = i
	}
}

func (m *RecordMerger) down(i int) {
	n := len(m.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && m.less(r, l) {
			j = r
		}
		if !m.less(j, i) {
			return
		}
		m.heap[i], m.heap[j] = m.heap[j], m.heap[i]
		i = j
	}
}

// advance reads the next record of reader src into the heap.
func (m *RecordMerger) advance(ctx context.Context, src int) error {
	r, err := m.readers[src].Next(ctx)
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	m.heap = append(m.heap, heapItem{kv: r, src: src})
	m.up(len(m.heap) - 1)
	return nil
}

func (m *RecordMerger) start(ctx context.Context) error {
	if m.started {
		return nil
	}
	m.started = true
	for i := range m.readers {
		if err := m.advance(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// Peek returns the record Next returns next without taking it, or io.EOF.
func (m *RecordMerger) Peek(ctx context.Context) (*KeyValue, error) {
	if err := m.start(ctx); err != nil {
		return nil, err
	}
	if len(m.heap) == 0 {
		return nil, io.EOF
	}
	return m.heap[0].kv, nil
}

// Next returns the smallest record of all runs, or io.EOF after the last.
// The record belongs to the caller.
func (m *RecordMerger) Next(ctx context.Context) (*KeyValue, error) {
	if err := m.start(ctx); err != nil {
		return nil, err
	}
	if len(m.heap) == 0 {
		return nil, io.EOF
	}
	top := m.heap[0]
	last := len(m.heap) - 1
	m.heap[0] = m.heap[last]
	m.heap = m.heap[:last]
	if last > 0 {
		m.down(0)
	}
	if err := m.advance(ctx, top.src); err != nil {
		return nil, err
	}
	return top.kv, nil
}

// Close closes every reader and returns the first error.
func (m *RecordMerger) Close() error {
	var first error
	for _, r := range m.readers {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	m.readers = nil
	return first
}
