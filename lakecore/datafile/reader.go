package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

const (
	defaultBatchSize      = 1024
	defaultReadBufferSize = 256 << 10
	// minParquetSize is the smallest valid file: "PAR1", a 4-byte footer
	// length and "PAR1".
	minParquetSize = 12
)

// ReaderOptions configures NewReader. The zero value reads every column in
// batches of 1024 rows.
type ReaderOptions struct {
	// Projection lists indexes into tableFields: the columns Next returns, in
	// that order. Nil returns every table field. Only the Parquet columns of
	// projected fields are read and decoded.
	Projection []int
	// BatchSize is the largest number of rows one Next call returns; 0 means
	// 1024.
	BatchSize int
	// FileName names the file in error messages. When empty, the name of f
	// is used if f has a Name() string method (as local files do).
	FileName string
	// Location is the session time zone of casts between TIMESTAMP WITH
	// LOCAL TIME ZONE and zone-less types, where Java uses the JVM's default
	// zone. Nil means UTC. Reading values never depends on it.
	Location *time.Location
	// ReadBufferSize is the read-ahead per Parquet column in bytes; 0 means
	// 256 KiB. On object stores each buffer fill is one ranged request.
	ReadBufferSize int
}

// Reader reads the rows of one Parquet data file, row group by row group,
// converting them from the schema the file was written with to the table's
// current schema. It is not safe for concurrent use.
type Reader struct {
	name    string
	src     *recordingReaderAt
	file    *parquet.File
	numRows int64
	batch   int
	width   int
	cols    []*outColumn
	leaves  []*leafCursor // every leaf column read, in file order

	rowGroup int   // index of the current row group
	left     int64 // rows of the current row group not yet returned
	returned int64
	err      error // sticky: once a read fails the reader's position is lost
	closed   bool

	// LZ4_RAW and LZ4 chunks, declared UNCOMPRESSED to parquet-go (reader_lz4.go),
	// and the real file size.
	lz4Chunks map[chunkKey]format.ColumnMetaData
	size      int64
}

// outColumn produces one projected table column.
type outColumn struct {
	name    string
	at      []int  // positions in the output row (more than one if projected twice)
	node    *rnode // nil when the file lacks the column: all NULL
	flat    bool   // a top-level leaf without repetition
	cast    castFunc
	notNull bool
}

// NewReader opens the Parquet data file f for reading. fileFields are the
// fields of the schema the file was written with (schema _SCHEMA_ID of its
// manifest entry); tableFields those of the schema to read as, normally the
// table's current one.
//
// It follows Java (apache/paimon paimon-format/.../parquet/ParquetReaderFactory.java
// and paimon-core/.../schema/SchemaEvolutionUtil.java): Parquet columns are
// found BY NAME using fileFields, and file fields are matched to table fields
// BY FIELD ID, so renamed, reordered, dropped and added columns read
// correctly. A table field the file lacks reads as NULL; if that field is NOT
// NULL, NewReader fails with ErrSchemaMismatch. A column whose type changed is
// converted with Paimon's cast rules; a change without a rule fails with
// ErrUnsupportedCast. A Parquet column that cannot hold its Paimon type fails
// with ErrSchemaMismatch, a file that is not valid Parquet with
// ErrCorruptFile, and an encrypted file or a codec other than UNCOMPRESSED,
// SNAPPY, GZIP, ZSTD, LZ4_RAW and LZ4 (Hadoop framing) with ErrUnsupportedFile. An I/O error of f is
// returned wrapped as it is. Errors name the file.
//
// Only the footer is read here. The caller keeps ownership of f: Close does
// not close it, and f must stay open until the Reader is closed.
func NewReader(f storage.File, fileFields, tableFields []types.DataField, o ReaderOptions) (r *Reader, err error) {
	name := o.FileName
	if name == "" {
		if nf, ok := f.(interface{ Name() string }); ok {
			name = nf.Name()
		} else {
			name = "parquet data file"
		}
	}
	r = &Reader{name: name, src: &recordingReaderAt{r: f}, batch: o.BatchSize, rowGroup: -1}
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("open %s: %w: %v", name, ErrCorruptFile, p)
		}
	}()
	if r.batch < 0 {
		return nil, fmt.Errorf("open %s: negative batch size %d", name, r.batch)
	}
	if r.batch == 0 {
		r.batch = defaultBatchSize
	}
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	projection := o.Projection
	if projection == nil {
		projection = make([]int, len(tableFields))
		for i := range projection {
			projection[i] = i
		}
	}
	for _, p := range projection {
		if p < 0 || p >= len(tableFields) {
			return nil, fmt.Errorf("open %s: projection index %d out of %d table fields", name, p, len(tableFields))
		}
	}
	r.width = len(projection)

	size := f.Size()
	if size < minParquetSize {
		return nil, fmt.Errorf("open %s: %w: %d bytes is too short for Parquet", name, ErrCorruptFile, size)
	}
	bufSize := o.ReadBufferSize
	if bufSize <= 0 {
		bufSize = defaultReadBufferSize
	}
	tail, err := readTail(r.src, size)
	if err != nil {
		return nil, r.wrap("open", err)
	}
	options := []parquet.FileOption{parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(bufSize)}
	r.file, err = parquet.OpenFile(tail, size, options...)
	if err != nil {
		return nil, r.wrap("open", err)
	}
	lz4, err := checkCodecs(r.file.Metadata())
	if err != nil {
		return nil, r.wrap("open", err)
	}
	if lz4 {
		view, viewSize, chunks, err := lz4FooterView(tail, size)
		if err != nil {
			return nil, r.wrap("open", err)
		}
		if r.file, err = parquet.OpenFile(view, viewSize, options...); err != nil {
			return nil, r.wrap("open", err)
		}
		r.lz4Chunks, r.size = chunks, size
	}
	meta := r.file.Metadata()
	root, numLeaves, err := parquetTree(meta.Schema)
	if err != nil {
		return nil, r.wrap("open", err)
	}
	if err := r.checkRowGroups(numLeaves); err != nil {
		return nil, r.wrap("open", err)
	}
	r.numRows = meta.NumRows

	if err := r.bindColumns(root, numLeaves, projection, fileFields, tableFields, loc); err != nil {
		return nil, r.wrap("open", err)
	}
	return r, nil
}

// checkCodecs accepts the codecs Java Paimon writes (not BROTLI or LZO) and
// reports whether LZ4_RAW or Hadoop-framed LZ4 is used (reader_lz4.go). A
// column must keep its codec in every row group: parquet-go applies the
// first row group's codec to all of them.
func checkCodecs(meta *format.FileMetaData) (lz4 bool, err error) {
	var first []format.CompressionCodec
	for i, rg := range meta.RowGroups {
		for j, c := range rg.Columns {
			codec := c.MetaData.Codec
			switch codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Zstd:
			case format.Lz4Raw, format.Lz4:
				lz4 = true
			default:
				return false, fmt.Errorf("%w: row group %d, column %s: compression codec %s", ErrUnsupportedFile, i,
					strings.Join(c.MetaData.PathInSchema, "."), codec)
			}
			if i == 0 {
				first = append(first, codec)
			} else if j < len(first) && first[j] != codec {
				return false, fmt.Errorf("%w: column %s changes its codec from %s to %s in row group %d", ErrUnsupportedFile,
					strings.Join(c.MetaData.PathInSchema, "."), first[j], codec, i)
			}
		}
	}
	return lz4, nil
}

// checkRowGroups verifies the row counts and column chunks of the footer.
func (r *Reader) checkRowGroups(numLeaves int) error {
	var total int64
	for i, rg := range r.file.RowGroups() {
		n := rg.NumRows()
		if n < 0 {
			return fmt.Errorf("%w: row group %d has %d rows", ErrCorruptFile, i, n)
		}
		if got := len(rg.ColumnChunks()); got != numLeaves {
			return fmt.Errorf("%w: row group %d has %d column chunks for %d columns", ErrCorruptFile, i, got, numLeaves)
		}
		total += n
	}
	if total != r.file.NumRows() {
		return fmt.Errorf("%w: row groups hold %d rows, the footer says %d", ErrCorruptFile, total, r.file.NumRows())
	}
	return nil
}

// bindColumns matches the projected table fields to file fields by id and
// those to Parquet columns by name.
func (r *Reader) bindColumns(root *pqNode, numLeaves int, projection []int, fileFields, tableFields []types.DataField, loc *time.Location) error {
	b := &binder{leaves: map[int]*leafCursor{}}
	byTable := map[int]*outColumn{}
	for pos, ti := range projection {
		if c := byTable[ti]; c != nil {
			c.at = append(c.at, pos)
			continue
		}
		tf := tableFields[ti]
		col := &outColumn{name: tf.Name, at: []int{pos}, notNull: !tf.Type.Nullable}
		byTable[ti] = col
		r.cols = append(r.cols, col)

		fi := types.FieldByID(fileFields, tf.ID)
		var pq *pqNode
		if fi >= 0 {
			ff := fileFields[fi]
			cast, err := newCast(ff.Type, tf.Type, loc)
			if err != nil {
				return fmt.Errorf("column %q (field id %d): %w", tf.Name, tf.ID, err)
			}
			col.cast = cast
			// A file field without a Parquet column reads as NULL, as Java does.
			pq = root.child(ff.Name)
			if pq != nil {
				node, err := b.bind(pq, ff.Type, false)
				if err != nil {
					return err
				}
				col.node = node
				col.flat = node.kind == nodeLeaf && node.leaf.maxRep == 0
			}
		}
		if col.node == nil && col.notNull {
			return fmt.Errorf("%w: NOT NULL column %q (field id %d) is not in the file", ErrSchemaMismatch, tf.Name, tf.ID)
		}
	}
	for i := range numLeaves {
		if c := b.leaves[i]; c != nil {
			r.leaves = append(r.leaves, c)
		}
	}
	return nil
}

// NumRows returns the number of rows in the file, from its footer.
func (r *Reader) NumRows() int64 { return r.numRows }

// Next returns the next rows, at most BatchSize of them, each a []any in the
// projection's order holding the Go values of lakecore/types for the table
// fields' types. The rows and their values belong to the caller. At the end
// of the file Next returns nil, io.EOF.
//
// Rows are decoded row group by row group, a page at a time, and only for the
// projected columns. A value that cannot be cast fails with ErrCastFailed, a
// NULL in a NOT NULL table column with ErrNullInNotNullColumn and damaged
// data with ErrCorruptFile; after any error the Reader returns that error
// again. ctx is checked before each batch and row group.
func (r *Reader) Next(ctx context.Context) (rows [][]any, err error) {
	if r.closed {
		return nil, fmt.Errorf("read %s: reader is closed", r.name)
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.returned >= r.numRows {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", r.name, err)
	}
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, fmt.Errorf("read %s: %w: %v", r.name, ErrCorruptFile, p)
		}
		if err != nil {
			r.err = err
		}
	}()
	n := int(min(int64(r.batch), r.numRows-r.returned))
	rows = make([][]any, n)
	cells := make([]any, n*r.width)
	for i := range rows {
		rows[i] = cells[i*r.width : (i+1)*r.width : (i+1)*r.width]
	}
	for filled := 0; filled < n; {
		for r.left == 0 {
			if err := r.nextRowGroup(ctx); err != nil {
				return nil, err
			}
		}
		k := int(min(int64(n-filled), r.left))
		seg := rows[filled : filled+k]
		for _, c := range r.cols {
			if err := r.fill(c, seg); err != nil {
				return nil, r.wrap("read", fmt.Errorf("column %q: %w", c.name, err))
			}
		}
		filled += k
		r.left -= int64(k)
	}
	r.returned += int64(n)
	return rows, nil
}

func (r *Reader) nextRowGroup(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("read %s: %w", r.name, err)
	}
	groups := r.file.RowGroups()
	r.rowGroup++
	if r.rowGroup >= len(groups) {
		return fmt.Errorf("read %s: %w: row groups end before the footer's row count", r.name, ErrCorruptFile)
	}
	rg := groups[r.rowGroup]
	chunks := rg.ColumnChunks()
	for _, c := range r.leaves {
		if md, ok := r.lz4Chunks[chunkKey{r.rowGroup, c.index}]; ok {
			fc, ok := chunks[c.index].(*parquet.FileColumnChunk)
			if !ok {
				return fmt.Errorf("read %s: row group %d: unexpected column chunk %T", r.name, r.rowGroup, chunks[c.index])
			}
			chunk, err := loadLZ4Chunk(r.src, r.size, &md)
			if err != nil {
				return r.wrap("read", fmt.Errorf("row group %d, Parquet column %q: %w", r.rowGroup, c.path, err))
			}
			c.start(fc.PagesFrom(chunk))
			continue
		}
		c.start(chunks[c.index].Pages())
	}
	r.left = rg.NumRows()
	return nil
}

// fill reads one column's values for a run of rows within a row group.
func (r *Reader) fill(c *outColumn, rows [][]any) error {
	if c.node == nil {
		return nil
	}
	at := c.at[0]
	if c.flat {
		if err := c.node.leaf.readFlat(rows, at); err != nil {
			return err
		}
	} else {
		for _, row := range rows {
			v, err := c.node.read()
			if err != nil {
				return err
			}
			row[at] = v
		}
	}
	if c.cast != nil {
		for _, row := range rows {
			if row[at] == nil {
				continue
			}
			v, err := c.cast(row[at])
			if err != nil {
				return err
			}
			row[at] = v
		}
	}
	if c.notNull {
		for _, row := range rows {
			if row[at] == nil {
				return ErrNullInNotNullColumn
			}
		}
	}
	for _, other := range c.at[1:] {
		for _, row := range rows {
			row[other] = row[at]
		}
	}
	return nil
}

// Close releases the reader's buffers. It does not close the file passed to
// NewReader. Close is idempotent; Next fails after it.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	for _, c := range r.leaves {
		c.close()
	}
	return nil
}

// wrap names the file in err and classifies it: an I/O error of the
// underlying file is returned as such (the file may be fine), one of this
// package's errors keeps its sentinel, anything else from the Parquet
// decoder is ErrCorruptFile.
func (r *Reader) wrap(op string, err error) error {
	if ioErr := r.src.err; ioErr != nil {
		if errors.Is(err, ioErr) {
			return fmt.Errorf("%s %s: %w", op, r.name, err)
		}
		return fmt.Errorf("%s %s: %w: %w", op, r.name, ioErr, err)
	}
	for _, known := range []error{ErrCorruptFile, ErrUnsupportedFile, ErrSchemaMismatch, ErrUnsupportedCast, ErrCastFailed,
		ErrNullInNotNullColumn, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, known) {
			return fmt.Errorf("%s %s: %w", op, r.name, err)
		}
	}
	return fmt.Errorf("%s %s: %w: %w", op, r.name, ErrCorruptFile, err)
}

// tailSize is how much of the end of a file readTail fetches in one read:
// enough for the footer of most data files.
const tailSize = 64 << 10

// tailReaderAt serves reads of the file's tail, which holds the footer, from
// memory, so that opening a file costs one read of its end (plus the 4-byte
// header), which matters on object stores.
type tailReaderAt struct {
	r    io.ReaderAt
	off  int64
	tail []byte
}

// readTail reads the end of the file and checks the footer's length and
// magic before parquet-go sees it: a corrupt length must not make it
// allocate gigabytes.
func readTail(r io.ReaderAt, size int64) (*tailReaderAt, error) {
	n := min(size, tailSize)
	t := &tailReaderAt{r: r, off: size - n, tail: make([]byte, n)}
	if _, err := r.ReadAt(t.tail, t.off); err != nil && !(errors.Is(err, io.EOF)) {
		return nil, fmt.Errorf("read footer: %w", err)
	}
	end := t.tail[n-8:]
	switch string(end[4:]) {
	case "PAR1":
	case "PARE":
		return nil, fmt.Errorf("%w: encrypted footer", ErrUnsupportedFile)
	default:
		return nil, fmt.Errorf("%w: no PAR1 magic at the end", ErrCorruptFile)
	}
	footerLen := int64(end[0]) | int64(end[1])<<8 | int64(end[2])<<16 | int64(end[3])<<24
	if footerLen+minParquetSize > size {
		return nil, fmt.Errorf("%w: footer of %d bytes in a file of %d", ErrCorruptFile, footerLen, size)
	}
	if need := footerLen + 8; need > n {
		t.off = size - need
		t.tail = make([]byte, need)
		if _, err := r.ReadAt(t.tail, t.off); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read footer: %w", err)
		}
	}
	return t, nil
}

func (t *tailReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= t.off && off+int64(len(p)) <= t.off+int64(len(t.tail)) {
		return copy(p, t.tail[off-t.off:]), nil
	}
	return t.r.ReadAt(p, off)
}

// recordingReaderAt remembers the first error of the underlying file other
// than io.EOF, which tells I/O failures apart from damaged data.
type recordingReaderAt struct {
	r   io.ReaderAt
	err error
}

func (r *recordingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.r.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) && r.err == nil {
		r.err = err
	}
	return n, err
}
