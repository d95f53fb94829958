package read

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// RowPosition locates the first row of a batch: the data file's name and
// the row's index in that file (0-based, counting deleted rows). The rows
// of one batch are consecutive rows of one file, so row i of the batch is
// at Row+i.
type RowPosition struct {
	File string
	Row  int64
}

// Batch is rows a SplitReader returns at once.
type Batch struct {
	// Rows are []any in the order of TableRead.Fields, holding lakecore's
	// Go values; they belong to the caller.
	Rows [][]any
	// Kinds holds the row kind of each row; nil means every row is an
	// insert (+I), as all rows of append tables are.
	Kinds []kv.RowKind
	// Pos is the position of the first row when the rows are consecutive
	// rows of one data file; its File is empty for merged rows.
	Pos RowPosition
}

// SplitReader reads the rows of one split in batches. There is one
// implementation per way of reading a split: RowIterator concatenates the
// files of an append table; the primary-key readers merge sorted runs
// (batch) or return records with their row kinds (streaming). A
// SplitReader is not safe for concurrent use; Close releases its files and
// goroutines and is idempotent.
type SplitReader interface {
	// Next returns the next batch, or io.EOF at the end of the split.
	// Errors name the data file. After an error while reading a file, ctx's
	// included, Next returns that error again.
	Next(ctx context.Context) (Batch, error)
	Close() error
}

// RowIterator returns the rows of one split's files in batches, file after
// file (the SplitReader of append tables, and the file reader under the
// primary-key readers). It holds at most two data files open: the one
// being read and the next, opened by one background goroutine that Close
// stops. It is not safe for concurrent use.
type RowIterator struct {
	tr    *TableRead
	split scan.Split
	// keyValue reads every column of the files of a primary-key table and
	// their _SEQUENCE_NUMBER and _VALUE_KIND, unprojected (TableRead.kvFields).
	keyValue bool
	paths    []string
	bg       context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	idx      int            // index of the file being read or awaited
	prefetch chan *openFile // result of the in-flight open of file idx or idx+1
	cur      *openFile      // file being read
	pos      int64          // row index in cur of the next row the reader returns
	pending  [][]any        // rows read but not yet returned (deletion vectors split batches)
	pendAt   int64          // row index of pending[0]
	err      error          // sticky
	closed   bool
}

// openFile is one data file opened for reading.
type openFile struct {
	idx  int
	meta *manifest.DataFileMeta
	path string
	f    storage.File
	r    *datafile.Reader
	dv   *manifest.DeletionVector
	err  error
}

func (o *openFile) close() {
	if o.r != nil {
		_ = o.r.Close()
	}
	if o.f != nil {
		_ = o.f.Close()
	}
}

func (it *RowIterator) startPrefetch(i int) {
	ch := make(chan *openFile, 1)
	it.prefetch = ch
	it.wg.Add(1)
	go func() {
		defer it.wg.Done()
		ch <- it.tr.openFile(it.bg, &it.split, i, it.paths[i], it.keyValue)
	}()
}

// openFile opens data file i of split and checks it against its manifest
// entry.
func (r *TableRead) openFile(ctx context.Context, split *scan.Split, i int, p string, keyValue bool) *openFile {
	meta := &split.Files[i]
	o := &openFile{idx: i, meta: meta, path: p, dv: split.DeletionVectors[meta.FileName]}
	loc := r.fio.String() + "/" + p
	fileFields, err := r.fileFields(ctx, meta.SchemaID)
	if err != nil {
		o.err = fmt.Errorf("read data file %s: schema %d: %w", loc, meta.SchemaID, err)
		return o
	}
	tableFields, projection := r.current.Fields, r.projection
	if keyValue {
		fileFields = append(fileFields[:len(fileFields):len(fileFields)], kv.SequenceNumberField, kv.ValueKindField)
		tableFields, projection = r.kvFields, nil
	}
	if o.f, err = r.fio.Open(ctx, p); err != nil {
		o.err = fmt.Errorf("read data file: %w", err)
		return o
	}
	if o.f.Size() != meta.FileSize {
		o.close()
		o.err = fmt.Errorf("read data file %s: %w: %d bytes, the manifest says %d (cut short or replaced)", loc, ErrFileMismatch, o.f.Size(), meta.FileSize)
		return o
	}
	o.r, err = datafile.NewReader(o.f, fileFields, tableFields, datafile.ReaderOptions{
		Projection: projection, BatchSize: r.batchSize, FileName: loc,
	})
	if err != nil {
		o.close()
		o.err = err
		return o
	}
	if n := o.r.NumRows(); n != meta.RowCount {
		o.close()
		o.err = fmt.Errorf("read data file %s: %w: %d rows, the manifest says %d", loc, ErrFileMismatch, n, meta.RowCount)
	}
	return o
}

// Next returns the next batch of rows with the position of its first row
// (Kinds nil: RowIterator does not interpret row kinds). At the end of the
// split it returns io.EOF. Errors name the data file. After an error while
// reading a file, ctx's included, Next returns that error again; only a
// ctx error while waiting for a file to open can be retried.
func (it *RowIterator) Next(ctx context.Context) (Batch, error) {
	rows, pos, err := it.next(ctx)
	return Batch{Rows: rows, Pos: pos}, err
}

func (it *RowIterator) next(ctx context.Context) ([][]any, RowPosition, error) {
	if it.closed {
		return nil, RowPosition{}, errors.New("read split: iterator is closed")
	}
	for {
		if it.err != nil {
			return nil, RowPosition{}, it.err
		}
		if len(it.pending) > 0 {
			if rows, pos := it.takeRun(); rows != nil {
				return rows, pos, nil
			}
			continue
		}
		if it.cur == nil {
			if it.idx >= len(it.paths) {
				return nil, RowPosition{}, io.EOF
			}
			var o *openFile
			select {
			case o = <-it.prefetch:
			case <-ctx.Done():
				return nil, RowPosition{}, fmt.Errorf("read split: %w", ctx.Err())
			}
			it.prefetch = nil
			if o.err != nil {
				it.err = o.err
				continue
			}
			it.cur, it.pos = o, 0
			if it.idx+1 < len(it.paths) {
				it.startPrefetch(it.idx + 1)
			}
		}
		rows, err := it.cur.r.Next(ctx)
		if errors.Is(err, io.EOF) {
			it.cur.close()
			it.cur = nil
			it.idx++
			continue
		}
		if err != nil {
			// The file reader cannot resume after an error, a cancelled
			// ctx included.
			it.err = err
			return nil, RowPosition{}, err
		}
		at := it.pos
		it.pos += int64(len(rows))
		if it.cur.dv == nil {
			return rows, RowPosition{File: it.cur.meta.FileName, Row: at}, nil
		}
		it.pending, it.pendAt = rows, at
	}
}

// takeRun returns the longest run of consecutive undeleted rows at the
// start of pending, skipping deleted ones; nil if pending holds only
// deleted rows.
func (it *RowIterator) takeRun() ([][]any, RowPosition) {
	dv := it.cur.dv
	for len(it.pending) > 0 && dv.IsDeleted(it.pendAt) {
		it.pending = it.pending[1:]
		it.pendAt++
	}
	if len(it.pending) == 0 {
		it.pending = nil
		return nil, RowPosition{}
	}
	n := 1
	for n < len(it.pending) && !dv.IsDeleted(it.pendAt+int64(n)) {
		n++
	}
	rows, pos := it.pending[:n:n], RowPosition{File: it.cur.meta.FileName, Row: it.pendAt}
	it.pending, it.pendAt = it.pending[n:], it.pendAt+int64(n)
	if len(it.pending) == 0 {
		it.pending = nil
	}
	return rows, pos
}

// Close stops the background open, waits for it and closes every file the
// iterator holds. It is idempotent.
func (it *RowIterator) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.cancel()
	it.wg.Wait()
	if it.prefetch != nil {
		select {
		case o := <-it.prefetch:
			o.close()
		default:
		}
		it.prefetch = nil
	}
	if it.cur != nil {
		it.cur.close()
		it.cur = nil
	}
	it.pending = nil
	return nil
}
