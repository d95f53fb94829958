package read

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
)

// ErrCorruptRecord is wrapped for a record of a primary-key table's data
// file whose _SEQUENCE_NUMBER or _VALUE_KIND is missing or invalid, or a
// file whose key range does not decode.
var ErrCorruptRecord = errors.New("corrupt key-value record")

// The readers of primary-key tables (apache/paimon: paimon-core/.../operation/MergeFileSplitRead.java,
// table/source/splitread/PrimaryKeyTableRawFileSplitReadProvider.java,
// table/source/MergeTreeSplitGenerator.java). Files are read by
// RowIterator with keyValue set: every current column, then the sequence
// number and the row kind.

// project returns the projected row of a key-value record's value.
func (r *TableRead) project(value []any) []any {
	n := len(r.current.Fields)
	if r.projection == nil {
		return value[:n:n]
	}
	out := make([]any, len(r.projection))
	for i, j := range r.projection {
		out[i] = value[j]
	}
	return out
}

// record splits a key-value row into its value, sequence number and kind.
func (r *TableRead) record(row []any, file string) ([]any, int64, kv.RowKind, error) {
	n := len(r.current.Fields)
	if len(row) != n+2 {
		return nil, 0, 0, fmt.Errorf("read data file %s: %w: %d columns, want %d", file, ErrCorruptRecord, len(row), n+2)
	}
	seq, ok := row[n].(int64)
	if !ok {
		return nil, 0, 0, fmt.Errorf("read data file %s: %w: %s is %T", file, ErrCorruptRecord, kv.SequenceNumberName, row[n])
	}
	b, ok := row[n+1].(int8)
	if !ok {
		return nil, 0, 0, fmt.Errorf("read data file %s: %w: %s is %T", file, ErrCorruptRecord, kv.ValueKindName, row[n+1])
	}
	kind, err := kv.RowKindFromByte(b)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("read data file %s: %w: %w", file, ErrCorruptRecord, err)
	}
	return row[:n:n], seq, kind, nil
}

// changeReader returns the records of a streaming split as they are, with
// their row kinds (MergeFileSplitRead.createNoMergeReader and
// ValueContentRowDataRecordIterator).
type changeReader struct {
	r  *TableRead
	it *RowIterator
}

func (r *TableRead) openChanges(ctx context.Context, split scan.Split) (SplitReader, error) {
	split.DeletionVectors = nil // Java reads streaming splits without deletion vectors
	it, err := r.openFiles(ctx, split, true)
	if err != nil {
		return nil, err
	}
	return &changeReader{r: r, it: it}, nil
}

func (c *changeReader) Next(ctx context.Context) (Batch, error) {
	b, err := c.it.Next(ctx)
	if err != nil {
		return Batch{}, err
	}
	kinds := make([]kv.RowKind, len(b.Rows))
	for i, row := range b.Rows {
		value, _, kind, err := c.r.record(row, b.Pos.File)
		if err != nil {
			return Batch{}, err
		}
		b.Rows[i], kinds[i] = c.r.project(value), kind
	}
	b.Kinds = kinds
	return b, nil
}

func (c *changeReader) Close() error { return c.it.Close() }

// rawReader reads files whose records need no merge (raw-convertible
// splits): their rows as they are, deletion vectors applied, every row an
// insert (Java reads them as plain data files).
type rawReader struct {
	r  *TableRead
	it *RowIterator
}

func (w *rawReader) Next(ctx context.Context) (Batch, error) {
	b, err := w.it.Next(ctx)
	if err != nil {
		return Batch{}, err
	}
	for i, row := range b.Rows {
		value, _, _, err := w.r.record(row, b.Pos.File)
		if err != nil {
			return Batch{}, err
		}
		b.Rows[i] = w.r.project(value)
	}
	return b, nil
}

func (w *rawReader) Close() error { return w.it.Close() }

// withoutDeleteRows reports whether a file certainly holds no -U or -D
// record: its _DELETE_ROW_COUNT is present and 0. Java's split generator
// counts a missing count as 0, but its raw reader then falls back to
// merging, which this matches.
func withoutDeleteRows(f *manifest.DataFileMeta) bool {
	return f.DeleteRowCount != nil && *f.DeleteRowCount == 0
}

// rawConvertible is MergeTreeSplitGenerator.splitForBatch's test for a
// whole bucket: every file above level 0 without delete rows, and either
// deletion vectors, first-row, or all files in one level.
func (r *TableRead) rawConvertible(files []manifest.DataFileMeta) bool {
	oneLevel := true
	for i := range files {
		if files[i].Level == 0 || !withoutDeleteRows(&files[i]) {
			return false
		}
		if files[i].Level != files[0].Level {
			oneLevel = false
		}
	}
	return r.engine.DeletionVectors || r.engine.Name == mergetree.EngineFirstRow || oneLevel
}

// mergedReader reads a batch split of a primary-key table: section after
// section of IntervalPartition, merged by a SortMergeReader with deletes
// dropped, except where Java reads raw: Java packs the sections of a bucket
// into splits of source.split.target-size, and a split that is a single
// file without delete rows is read as a plain file (every row +I), any
// other split merged (its rows keep their kinds, +I or +U).
type mergedReader struct {
	r        *TableRead
	split    scan.Split
	sections [][]mergetree.SortedRun
	raw1     []bool // sections read raw
	next     int    // index of the next section
	raw      *rawReader
	merge    *mergetree.SortMergeReader
	err      error
	closed   bool
}

func (r *TableRead) openMerged(ctx context.Context, split scan.Split) (SplitReader, error) {
	if len(split.Files) == 0 || r.rawConvertible(split.Files) {
		it, err := r.openFiles(ctx, split, true)
		if err != nil {
			return nil, err
		}
		return &rawReader{r: r, it: it}, nil
	}
	files := make([]mergetree.File, len(split.Files))
	for i := range split.Files {
		f := &split.Files[i]
		minKey, err := binrow.Deserialize(r.keyTypes, f.MinKey)
		if err == nil {
			files[i].MaxKey, err = binrow.Deserialize(r.keyTypes, f.MaxKey)
		}
		if err != nil {
			return nil, fmt.Errorf("read data file %s of bucket %d: %w: key range: %w", f.FileName, split.Bucket, ErrCorruptRecord, err)
		}
		files[i].MinKey, files[i].Index = minKey, i
	}
	m := &mergedReader{r: r, split: split, sections: mergetree.IntervalPartition(files)}
	m.raw1 = make([]bool, len(m.sections))
	for _, bin := range packSections(m.sections, split.Files, r.splitTarget, r.openFileCost) {
		if len(bin) == 1 {
			sec := m.sections[bin[0]]
			m.raw1[bin[0]] = len(sec) == 1 && len(sec[0]) == 1 && withoutDeleteRows(&split.Files[sec[0][0].Index])
		}
	}
	return m, nil
}

// packSections is MergeTreeSplitGenerator.packSplits: sections in order
// into bins of at most target bytes (BinPacking.packForOrdered; a section
// weighs its files' size, at least openFileCost), as indexes of sections.
func packSections(sections [][]mergetree.SortedRun, files []manifest.DataFileMeta, target, openFileCost int64) [][]int {
	var bins [][]int
	var bin []int
	var weight int64
	for i, sec := range sections {
		var size int64
		for _, run := range sec {
			for _, f := range run {
				size += files[f.Index].FileSize
			}
		}
		w := max(size, openFileCost)
		if weight+w > target && len(bin) > 0 {
			bins, bin, weight = append(bins, bin), nil, 0
		}
		weight += w
		bin = append(bin, i)
	}
	if len(bin) > 0 {
		bins = append(bins, bin)
	}
	return bins
}

// subSplit is split restricted to files.
func (m *mergedReader) subSplit(files mergetree.SortedRun) scan.Split {
	s := m.split
	s.Files = make([]manifest.DataFileMeta, len(files))
	for i, f := range files {
		s.Files[i] = m.split.Files[f.Index]
	}
	return s
}

// openSection starts reading section i.
func (m *mergedReader) openSection(ctx context.Context, i int) error {
	sec := m.sections[i]
	if m.raw1[i] {
		it, err := m.r.openFiles(ctx, m.subSplit(sec[0]), true)
		if err != nil {
			return err
		}
		m.raw = &rawReader{r: m.r, it: it}
		return nil
	}
	readers := make([]mergetree.RecordReader, 0, len(sec))
	for _, run := range sec {
		it, err := m.r.openFiles(ctx, m.subSplit(run), true)
		if err != nil {
			for _, rr := range readers {
				_ = rr.Close()
			}
			return err
		}
		levels := make(map[string]int32, len(run))
		for _, f := range run {
			levels[m.split.Files[f.Index].FileName] = m.split.Files[f.Index].Level
		}
		readers = append(readers, &runReader{r: m.r, it: it, levels: levels})
	}
	fn, err := m.r.engine.NewMergeFunction()
	if err != nil {
		for _, rr := range readers {
			_ = rr.Close()
		}
		return err
	}
	m.merge = mergetree.NewSortMergeReader(&m.r.engine.Order, fn, readers)
	return nil
}

func (m *mergedReader) batchSize() int {
	if m.r.batchSize > 0 {
		return m.r.batchSize
	}
	return 1024
}

func (m *mergedReader) Next(ctx context.Context) (Batch, error) {
	if m.closed {
		return Batch{}, errors.New("read split: reader is closed")
	}
	if m.err != nil {
		return Batch{}, m.err
	}
	for {
		switch {
		case m.raw != nil:
			b, err := m.raw.Next(ctx)
			if errors.Is(err, io.EOF) {
				err = m.raw.Close()
				m.raw = nil
				if err != nil {
					m.err = err
					return Batch{}, err
				}
				continue
			}
			if err != nil {
				m.err = err
				return Batch{}, err
			}
			return b, nil
		case m.merge != nil:
			b, err := m.nextMerged(ctx)
			if err != nil {
				m.err = err
				return Batch{}, err
			}
			if len(b.Rows) > 0 {
				return b, nil
			}
			err = m.merge.Close()
			m.merge = nil
			if err != nil {
				m.err = err
				return Batch{}, err
			}
		default:
			if m.next >= len(m.sections) {
				return Batch{}, io.EOF
			}
			m.next++
			if err := m.openSection(ctx, m.next-1); err != nil {
				m.err = err
				return Batch{}, err
			}
		}
	}
}

// nextMerged returns up to a batch of merged rows of the current section,
// deletes dropped; an empty batch at the section's end.
func (m *mergedReader) nextMerged(ctx context.Context) (Batch, error) {
	var b Batch
	for len(b.Rows) < m.batchSize() {
		rec, err := m.merge.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Batch{}, fmt.Errorf("read bucket %d: %w", m.split.Bucket, err)
		}
		if mergetree.DropDelete(rec) {
			continue
		}
		b.Rows = append(b.Rows, m.r.project(rec.Value))
		b.Kinds = append(b.Kinds, rec.Kind)
	}
	return b, nil
}

func (m *mergedReader) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	var first error
	if m.raw != nil {
		first = m.raw.Close()
	}
	if m.merge != nil {
		if err := m.merge.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// runReader turns the rows of one sorted run's files into records.
type runReader struct {
	r      *TableRead
	it     *RowIterator
	levels map[string]int32
	batch  [][]any
	file   string
	level  int32
	slab   mergetree.RecordSlab
}

func (w *runReader) Next(ctx context.Context) (*mergetree.KeyValue, error) {
	for len(w.batch) == 0 {
		b, err := w.it.Next(ctx)
		if err != nil {
			return nil, err
		}
		w.batch, w.file, w.level = b.Rows, b.Pos.File, w.levels[b.Pos.File]
	}
	row := w.batch[0]
	w.batch = w.batch[1:]
	value, seq, kind, err := w.r.record(row, w.file)
	if err != nil {
		return nil, err
	}
	r := w.slab.New(0)
	r.Value, r.Seq, r.Kind, r.Level = value, seq, kind, w.level
	return r, nil
}

func (w *runReader) Close() error { return w.it.Close() }

// OpenRun returns the records of one sorted run of a primary-key table:
// split.Files are files of one bucket whose key ranges do not overlap, in
// key order. Each record carries its sequence number, its row kind and the
// level of its file, and deletion vectors of the split apply. Compaction
// merges runs read this way.
func (r *TableRead) OpenRun(ctx context.Context, split scan.Split) (mergetree.RecordReader, error) {
	if r.engine == nil {
		return nil, fmt.Errorf("read run of bucket %d: the table has no primary key", split.Bucket)
	}
	it, err := r.openFiles(ctx, split, true)
	if err != nil {
		return nil, err
	}
	levels := make(map[string]int32, len(split.Files))
	for i := range split.Files {
		levels[split.Files[i].FileName] = split.Files[i].Level
	}
	return &runReader{r: r, it: it, levels: levels}, nil
}

// Engine returns the merge engine of a primary-key table, nil for an
// append table.
func (r *TableRead) Engine() *mergetree.Engine { return r.engine }
