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
	order   *RecordOrder
	reducer MergeFunction
	readers []RecordReader
	heap    []heapItem
	started bool
	err     error
}

type heapItem struct {
	kv  *KeyValue
	src int
}

// NewSortMergeReader merges readers, which it owns: Close closes them.
func NewSortMergeReader(order *RecordOrder, fn MergeFunction, readers []RecordReader) *SortMergeReader {
	return &SortMergeReader{order: order, reducer: NewReducer(fn), readers: readers}
}

// NewSortMergeReaderWrapped is NewSortMergeReader with a merge function
// wrapper that sees every record of every key, a key's only record too (no
// ReducerMergeFunctionWrapper): Java passes its changelog wrappers
// (LookupChangelogMergeFunctionWrapper) to the merge reader so.
func NewSortMergeReaderWrapped(order *RecordOrder, wrapper MergeFunction, readers []RecordReader) *SortMergeReader {
	return &SortMergeReader{order: order, reducer: wrapper, readers: readers}
}

func (m *SortMergeReader) less(i, j int) bool {
	return m.order.Compare(m.heap[i].kv, m.heap[j].kv) < 0
}

func (m *SortMergeReader) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !m.less(j, i) {
			break
		}
		m.heap[i], m.heap[j] = m.heap[j], m.heap[i]
		j = i
	}
}

func (m *SortMergeReader) down(i int) {
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
func (m *SortMergeReader) advance(ctx context.Context, src int) error {
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

// popMin removes the smallest record from the heap.
func (m *SortMergeReader) popMin() heapItem {
	top := m.heap[0]
	last := len(m.heap) - 1
	m.heap[0] = m.heap[last]
	m.heap = m.heap[:last]
	if last > 0 {
		m.down(0)
	}
	return top
}

// Next returns the merged record of the next key, or io.EOF. The record
// belongs to the caller. After an error, Next returns it again.
func (m *SortMergeReader) Next(ctx context.Context) (*KeyValue, error) {
	if m.err != nil {
		return nil, m.err
	}
	if !m.started {
		m.started = true
		for i := range m.readers {
			if err := m.advance(ctx, i); err != nil {
				m.err = err
				return nil, err
			}
		}
	}
	for len(m.heap) > 0 {
		first := m.popMin()
		m.reducer.Reset()
		if err := m.reducer.Add(first.kv); err != nil {
			m.err = err
			return nil, err
		}
		if err := m.advance(ctx, first.src); err != nil {
			m.err = err
			return nil, err
		}
		for len(m.heap) > 0 && m.order.CompareKeys(m.heap[0].kv.Value, first.kv.Value) == 0 {
			it := m.popMin()
			if err := m.reducer.Add(it.kv); err != nil {
				m.err = err
				return nil, err
			}
			if err := m.advance(ctx, it.src); err != nil {
				m.err = err
				return nil, err
			}
		}
		r, err := m.reducer.Result()
		if err != nil {
			m.err = fmt.Errorf("merge key %v: %w", m.order.Key(first.kv.Value), err)
			return nil, m.err
		}
		if r != nil {
			return r, nil
		}
	}
	return nil, io.EOF
}

// Close closes every reader and returns the first error.
func (m *SortMergeReader) Close() error {
	var first error
	for _, r := range m.readers {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	m.readers = nil
	return first
}
