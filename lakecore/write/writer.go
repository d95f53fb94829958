// Package write turns rows into the Parquet data files of a Paimon append
// table and the commit messages that describe them (Paimon's
// AppendOnlyWriter and its RollingFileWriter, apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/append/AppendOnlyWriter.java).
//
// A TableWriter routes each row to its partition and bucket, streams it
// into the open data file of that (partition, bucket) straight to storage,
// rolls files at target-file-size and, on Prepare, closes every open file
// and returns one commit.Message per (partition, bucket) with the exact
// DataFileMeta of each file (paimon-format.md §6.2, §9). Committing the
// messages is the commit package's business.
package write

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// DefaultRowGroupSize is the Parquet row group size of a TableWriter when
// Options.RowGroupSize is 0. An open data file buffers about one row group,
// so this bounds the memory per open (partition, bucket): 4 MiB keeps 100
// partitions written at once below ~0.5 GiB. Java's writers use
// parquet.block.size (128 MiB) instead, which readers do not depend on.
const DefaultRowGroupSize = 4 << 20

// rollCheckRows is how often the size of an open file is compared with the
// target size: RollingFileWriterImpl.CHECK_ROLLING_RECORD_CNT.
const rollCheckRows = 1000

// Options configure a TableWriter. Zero fields take Paimon's defaults:
// TargetFileSize 256 MiB, Compression "zstd", ZstdLevel 1, FilePrefix
// "data-", RowGroupSize DefaultRowGroupSize, Now time.Now.
type Options struct {
	// TargetFileSize is target-file-size: a data file is closed once it
	// reaches it (looked at every 1000 rows, as Java does).
	TargetFileSize int64
	// Compression and ZstdLevel are file.compression and
	// file.compression.zstd-level.
	Compression string
	ZstdLevel   int
	// FilePrefix is data-file.prefix.
	FilePrefix string
	// RowGroupSize is the Parquet row group size; see DefaultRowGroupSize.
	RowGroupSize int64
	// Now is the clock of the files' creation time.
	Now func() time.Time
	// Buffers, when set, recycles the buffers of the data files' first
	// rows across writers: a caller that makes a writer per batch passes
	// the same one to each. nil gives each writer its own.
	Buffers *datafile.WriteBuffers
}

// OptionsFromSchema returns the options a table's schema sets:
// target-file-size, file.compression, file.compression.zstd-level and
// data-file.prefix. An option that does not parse takes its default; run
// schema.TableSchema.CheckWritable first to reject such tables.
func OptionsFromSchema(s *schema.TableSchema) Options {
	o := s.Opts()
	out := Options{Compression: o.FileCompression(), FilePrefix: o.DataFilePrefix(), Now: time.Now}
	out.TargetFileSize, _ = o.TargetFileSize()
	out.ZstdLevel, _ = o.ZstdLevel()
	return out
}

func (o Options) withDefaults() Options {
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = 256 << 20
	}
	if o.Compression == "" {
		o.Compression = "zstd"
	}
	if o.ZstdLevel == 0 {
		o.ZstdLevel = 1
	}
	if o.FilePrefix == "" {
		o.FilePrefix = "data-"
	}
	if o.Buffers == nil {
		o.Buffers = datafile.NewWriteBuffers()
	}
	if o.RowGroupSize <= 0 {
		o.RowGroupSize = DefaultRowGroupSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// SequenceRestorer returns the largest sequence number among the live files
// of a (partition, bucket) of a fixed-bucket table, or -1 when it has none,
// so that a new writer continues the numbering (AbstractFileStoreWrite,
// DataFileMeta.getMaxSequenceNumber; paimon-format.md §9.2).
type SequenceRestorer func(ctx context.Context, partition []byte, bucket int32) (maxSeq int64, err error)

// TableWriter writes the rows of one table. It is not safe for concurrent
// use; use one per in-flight batch.
type TableWriter struct {
	fio     storage.FileIO
	dataDir string // table path, plus data-file.path-directory
	schema  *schema.TableSchema
	o       Options
	restore SequenceRestorer

	partFields, bucketFields []types.DataField
	partIdx, bucketIdx       []int
	partTypes, bucketTypes   []types.DataType
	numBuckets               int // -1: unaware
	partOpts                 binrow.PartitionOptions
	wopts                    datafile.WriterOptions
	dense                    bool
	fieldTypes               []types.DataType
	extension                string
	checkEvery               int64

	fileUUID    string
	fileCounter int64

	// writers are the open (partition, bucket) writers by partition bytes
	// plus the bucket's 4 bytes; byValue indexes the same writers by the
	// value of a single partition key of a hashable type (unaware buckets),
	// which saves encoding the partition of every row; single is the writer
	// of an unpartitioned unaware table.
	writers map[string]*bucketWriter
	byValue map[any]*bucketWriter
	single  *bucketWriter
	order   []*bucketWriter
	// valueKey: the table can use byValue (one partition key of a kind
	// whose Go value is hashable and canonical, unaware buckets).
	valueKey bool
	scratch  []byte
	keyVals  []any
	// nextSeq remembers the counters of fixed-bucket writers dropped while
	// idle, whose files may not be committed yet.
	nextSeq map[bucketKey]int64
	// closed lists the files closed since the last Prepare, for Abort.
	closed []string
	failed error
}

type bucketKey struct {
	partition string
	bucket    int32
}

func (k bucketKey) mapKey() string {
	return k.partition + string([]byte{byte(k.bucket >> 24), byte(k.bucket >> 16), byte(k.bucket >> 8), byte(k.bucket)})
}

// bucketWriter is the writer of one (partition, bucket): AppendOnlyWriter.
type bucketWriter struct {
	key       bucketKey
	partition []byte
	value     any // the partition key value when indexed in byValue
	dir       string
	seq       int64 // next sequence number (LongCounter)
	file      *openFile
	done      []manifest.DataFileMeta
	active    bool // wrote a row since the last Prepare
}

type openFile struct {
	name, path string
	out        storage.Writer
	w          *datafile.Writer
	rows       int64
	minSeq     int64
}

// NewTableWriter returns a writer of rows of schema s into the table at
// tablePath (relative to fio's root). restore is asked, for fixed-bucket
// tables, where the sequence numbers of a (partition, bucket) continue; nil
// starts them at 0. The schema must be writable (CheckWritable) and the
// compression one datafile.NewCompressor knows.
func NewTableWriter(fio storage.FileIO, tablePath string, s *schema.TableSchema, o Options, restore SequenceRestorer) (*TableWriter, error) {
	if err := s.CheckWritable(); err != nil {
		return nil, fmt.Errorf("new table writer for %s: %w", tablePath, err)
	}
	opts := s.Opts()
	w := &TableWriter{
		fio:        fio,
		dataDir:    strings.TrimSuffix(tablePath, "/"),
		schema:     s,
		o:          o.withDefaults(),
		restore:    restore,
		checkEvery: rollCheckRows,
		fileUUID:   uuid.NewString(),
		writers:    map[string]*bucketWriter{},
		byValue:    map[any]*bucketWriter{},
		nextSeq:    map[bucketKey]int64{},
	}
	if d := strings.Trim(opts.DataFilePathDirectory(), "/"); d != "" {
		w.dataDir = path.Join(w.dataDir, d)
	}
	var err error
	if w.partFields, w.partIdx, err = project(s, s.PartitionKeys); err != nil {
		return nil, fmt.Errorf("new table writer for %s: partition keys: %w", tablePath, err)
	}
	w.partTypes = typesOf(w.partFields)
	n, err := opts.Bucket()
	if err != nil {
		return nil, fmt.Errorf("new table writer for %s: %w", tablePath, err)
	}
	switch {
	case n == -1:
		w.numBuckets = -1
	case n > 0:
		w.numBuckets = n
		keys := make([]string, 0)
		for _, f := range s.BucketKeyFields() {
			keys = append(keys, f.Name)
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("new table writer for %s: bucket = %d needs a bucket-key", tablePath, n)
		}
		if w.bucketFields, w.bucketIdx, err = project(s, keys); err != nil {
			return nil, fmt.Errorf("new table writer for %s: bucket key: %w", tablePath, err)
		}
		w.bucketTypes = typesOf(w.bucketFields)
	default:
		return nil, fmt.Errorf("new table writer for %s: %w: bucket = %d", tablePath, schema.ErrUnsupported, n)
	}
	if w.partOpts, err = opts.PartitionOptions(); err != nil {
		return nil, fmt.Errorf("new table writer for %s: %w", tablePath, err)
	}
	modes, err := opts.StatsModes(s.FieldNames())
	if err != nil {
		return nil, fmt.Errorf("new table writer for %s: %w", tablePath, err)
	}
	if w.dense, err = opts.StatsDenseStore(); err != nil {
		return nil, fmt.Errorf("new table writer for %s: %w", tablePath, err)
	}
	// One compressor for all open files, and for every writer sharing
	// o.Buffers: each zstd encoder holds about 1.5 MiB, which a hundred
	// open partitions must not multiply.
	comp, err := w.o.Buffers.Compressor(w.o.Compression, w.o.ZstdLevel)
	if err != nil {
		return nil, fmt.Errorf("new table writer for %s: %w", tablePath, err)
	}
	w.wopts = datafile.WriterOptions{Compressor: comp, Buffers: w.o.Buffers, StatsModes: modes, RowGroupSize: w.o.RowGroupSize}
	w.fieldTypes = typesOf(s.Fields)
	w.valueKey = w.numBuckets < 0 && len(w.partFields) == 1 && hashableKind(w.partTypes[0].Kind)
	w.keyVals = make([]any, max(len(w.partFields), len(w.bucketFields)))
	w.extension = ".parquet"
	if inc, err := opts.FileSuffixIncludeCompression(); err != nil {
		return nil, fmt.Errorf("new table writer for %s: %w", tablePath, err)
	} else if ext := compressionExtension(w.o.Compression); inc && ext != "" {
		w.extension = "." + ext + ".parquet" // DataFilePathFactory.makeExtension
	}
	return w, nil
}

// hashableKind reports whether the Go values of a kind can index writers
// directly: comparable, one Go type per kind, equal exactly when their
// BinaryRows are (not floats: NaN; not timestamps: a compact TIMESTAMP
// drops sub-millisecond digits).
func hashableKind(k types.Kind) bool {
	switch k {
	case types.KindBoolean, types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindChar, types.KindVarChar, types.KindDate, types.KindTime:
		return true
	}
	return false
}

// canonicalValue reports whether v has the Go type lakecore/types gives
// kind k (binrow also accepts an int for integer kinds, which byValue must
// not see as another partition).
func canonicalValue(k types.Kind, v any) bool {
	switch v.(type) {
	case bool:
		return k == types.KindBoolean
	case int8:
		return k == types.KindTinyInt
	case int16:
		return k == types.KindSmallInt
	case int32:
		return k == types.KindInt
	case int64:
		return k == types.KindBigInt
	case string:
		return k == types.KindChar || k == types.KindVarChar
	case types.Date:
		return k == types.KindDate
	case types.Time:
		return k == types.KindTime
	}
	return false
}

// compressionExtension is DataFilePathFactory.compressFileExtension: the
// HadoopCompressionType extension, or the codec name itself.
func compressionExtension(codec string) string {
	switch strings.ToLower(codec) {
	case "", "none":
		return ""
	case "zstd":
		return "zst"
	case "gzip":
		return "gz"
	case "bzip2":
		return "bz2"
	}
	return codec
}

func project(s *schema.TableSchema, names []string) ([]types.DataField, []int, error) {
	fields := make([]types.DataField, len(names))
	idx := make([]int, len(names))
	for i, n := range names {
		j := types.FieldByName(s.Fields, n)
		if j < 0 {
			return nil, nil, fmt.Errorf("%q is not a field of schema %d", n, s.ID)
		}
		fields[i], idx[i] = s.Fields[j], j
	}
	return fields, idx, nil
}

func typesOf(fields []types.DataField) []types.DataType {
	out := make([]types.DataType, len(fields))
	for i, f := range fields {
		out[i] = f.Type
	}
	return out
}

// Schema returns the schema rows are written with.
func (w *TableWriter) Schema() *schema.TableSchema { return w.schema }

// Write appends row (values in schema field order, lakecore/types Go
// values) to the data file of its partition and bucket. A row that does not
// fit the table fails alone with an error wrapping ErrInvalidRow that names
// the field; nothing of it is written. Storage failures wrap
// ErrWriterFailed: Abort, then write the batch again.
func (w *TableWriter) Write(ctx context.Context, row []any) error {
	if w.failed != nil {
		return w.failed
	}
	if len(row) != len(w.fieldTypes) {
		return fmt.Errorf("write to %s: %w: %d values for %d fields", w.dataDir, ErrInvalidRow, len(row), len(w.fieldTypes))
	}
	bw, err := w.route(ctx, row)
	if err != nil {
		return err
	}
	if bw.file == nil {
		if err := w.openFile(ctx, bw); err != nil {
			return w.fail(err)
		}
	}
	f := bw.file
	if err := f.w.Write(row); err != nil {
		if errors.Is(err, datafile.ErrInvalidValue) {
			if f.rows == 0 { // do not leave an empty file behind
				_ = f.out.Abort()
				bw.file = nil
			}
			return fmt.Errorf("write to %s: %w: %w", w.dataDir, ErrInvalidRow, err)
		}
		return w.fail(fmt.Errorf("write data file %s: %w", f.path, err))
	}
	f.rows++
	bw.seq++
	bw.active = true
	if f.rows%w.checkEvery == 0 && f.w.EstimatedSize() >= w.o.TargetFileSize {
		if err := w.closeFile(bw); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// route returns the writer of row's partition and bucket, creating it when
// needed. Only a row whose key fields do not fit fails (ErrInvalidRow).
func (w *TableWriter) route(ctx context.Context, row []any) (*bucketWriter, error) {
	if w.single != nil {
		return w.single, nil
	}
	if w.valueKey {
		// canonicalValue first: an unhashable value must not reach the map.
		if v := row[w.partIdx[0]]; canonicalValue(w.partTypes[0].Kind, v) {
			if bw, ok := w.byValue[v]; ok {
				return bw, nil
			}
		}
	}
	part, err := w.encodeKey(w.partFields, w.partIdx, row, true)
	if err != nil {
		return nil, fmt.Errorf("write to %s: %w: partition %w", w.dataDir, ErrInvalidRow, err)
	}
	bucket := int32(0)
	if w.numBuckets > 0 {
		key, err := w.encodeKey(w.bucketFields, w.bucketIdx, row, false)
		if err != nil {
			return nil, fmt.Errorf("write to %s: %w: bucket key %w", w.dataDir, ErrInvalidRow, err)
		}
		bucket = int32(binrow.Bucket(key, w.numBuckets))
	}
	w.scratch = append(append(w.scratch[:0], part...), byte(bucket>>24), byte(bucket>>16), byte(bucket>>8), byte(bucket))
	bw, ok := w.writers[string(w.scratch)]
	if !ok {
		if bw, err = w.newBucketWriter(ctx, part, bucket); err != nil {
			return nil, err
		}
	}
	if w.valueKey && bw.value == nil {
		if v := row[w.partIdx[0]]; canonicalValue(w.partTypes[0].Kind, v) {
			bw.value = v
			w.byValue[v] = bw
		}
	}
	return bw, nil
}

// encodeKey serializes (partition) or encodes (bucket key) the key fields
// of row, naming the field on failure.
func (w *TableWriter) encodeKey(fields []types.DataField, idx []int, row []any, serialize bool) ([]byte, error) {
	ts := w.partTypes
	if !serialize {
		ts = w.bucketTypes
	}
	return encodeFields(fields, idx, ts, row, w.keyVals[:len(fields)], serialize, nil)
}

// keyBuffers are the reused buffers of encodeFields: a result in them is
// valid until the next call with the same keyBuffers.
type keyBuffers struct{ out, row []byte }

// encodeFields serializes (partition) or encodes (bucket key) the fields
// idx of row as ts, using vals (len(fields)) as scratch, into bufs (nil:
// new bytes). Only when that fails is each field encoded alone, to name
// the one that does not fit.
func encodeFields(fields []types.DataField, idx []int, ts []types.DataType, row []any, vals []any, serialize bool, bufs *keyBuffers) ([]byte, error) {
	for i, f := range fields {
		vals[i] = row[idx[i]]
		if vals[i] == nil && !f.Type.Nullable {
			return nil, fmt.Errorf("field %q: got NULL, want %s", f.Name, f.Type)
		}
	}
	var b []byte
	var err error
	switch {
	case bufs != nil && serialize:
		bufs.out, bufs.row, err = binrow.SerializeTo(bufs.out, bufs.row, ts, vals)
		b = bufs.out
	case bufs != nil:
		bufs.out, err = binrow.EncodeTo(bufs.out, ts, vals)
		b = bufs.out
	case serialize:
		b, err = binrow.Serialize(ts, vals)
	default:
		b, err = binrow.Encode(ts, vals)
	}
	if err == nil {
		return b, nil
	}
	for i, f := range fields {
		if _, ferr := binrow.Encode(ts[i:i+1], vals[i:i+1]); ferr != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, ferr)
		}
	}
	return nil, err
}

func (w *TableWriter) newBucketWriter(ctx context.Context, part []byte, bucket int32) (*bucketWriter, error) {
	key := bucketKey{partition: string(part), bucket: bucket}
	dir := w.dataDir
	if len(w.partFields) > 0 {
		vals, err := binrow.Deserialize(w.partTypes, part)
		if err != nil {
			return nil, fmt.Errorf("write to %s: partition: %w", w.dataDir, err)
		}
		pp, err := binrow.PartitionPath(w.partFields, vals, w.partOpts)
		if err != nil {
			return nil, fmt.Errorf("write to %s: %w: partition directory: %w", w.dataDir, ErrInvalidRow, err)
		}
		dir = path.Join(dir, pp)
	}
	dir = path.Join(dir, "bucket-"+strconv.Itoa(int(bucket)))
	bw := &bucketWriter{key: key, partition: []byte(key.partition), dir: dir}
	if w.numBuckets > 0 {
		next, remembered := w.nextSeq[key]
		if w.restore != nil {
			max, err := w.restore(ctx, bw.partition, bucket)
			if err != nil {
				return nil, fmt.Errorf("write to %s: restore sequence numbers of bucket %d: %w", w.dataDir, bucket, err)
			}
			bw.seq = max + 1
		}
		if remembered && next > bw.seq {
			bw.seq = next
		}
		delete(w.nextSeq, key)
	}
	w.writers[key.mapKey()] = bw
	w.order = append(w.order, bw)
	if len(w.partFields) == 0 && w.numBuckets < 0 {
		w.single = bw
	}
	return bw, nil
}

func (w *TableWriter) openFile(ctx context.Context, bw *bucketWriter) error {
	name := w.o.FilePrefix + w.fileUUID + "-" + strconv.FormatInt(w.fileCounter, 10) + w.extension
	w.fileCounter++
	p := path.Join(bw.dir, name)
	out, err := w.fio.Create(ctx, p)
	if err != nil {
		return fmt.Errorf("create data file %s: %w", p, err)
	}
	dw, err := datafile.NewWriter(out, w.schema.Fields, w.wopts)
	if err != nil {
		_ = out.Abort()
		return fmt.Errorf("create data file %s: %w", p, err)
	}
	bw.file = &openFile{name: name, path: p, out: out, w: dw, minSeq: bw.seq}
	return nil
}

// closeFile closes the open file of bw and records its DataFileMeta.
func (w *TableWriter) closeFile(bw *bucketWriter) error {
	f := bw.file
	bw.file = nil
	st, err := f.w.Close()
	if err != nil {
		_ = f.out.Abort()
		return fmt.Errorf("close data file %s: %w", f.path, err)
	}
	if err := f.out.Close(); err != nil {
		_ = f.out.Abort()
		return fmt.Errorf("close data file %s: %w", f.path, err)
	}
	w.closed = append(w.closed, f.path)
	meta, err := w.fileMeta(f, st)
	if err != nil {
		return err
	}
	bw.done = append(bw.done, meta)
	return nil
}

// fileMeta is DataFileMeta.forAppend with the stats of
// SimpleStatsConverter.toBinary (RowDataFileWriter.result).
func (w *TableWriter) fileMeta(f *openFile, st *datafile.FileStats) (manifest.DataFileMeta, error) {
	if st.RowCount != f.rows || len(st.Columns) != len(w.fieldTypes) {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: %d rows and %d column stats, want %d and %d",
			f.path, st.RowCount, len(st.Columns), f.rows, len(w.fieldTypes))
	}
	valueStats, cols, err := w.valueStats(st)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: value stats: %w", f.path, err)
	}
	now := w.o.Now()
	_, offset := now.Zone()
	created := now.UnixMilli() + int64(offset)*1000 // local wall clock as if UTC (§9.4)
	zero := int64(0)
	source := int32(0) // FileSource.APPEND
	return manifest.DataFileMeta{
		FileName:           f.name,
		FileSize:           f.out.Written(),
		RowCount:           f.rows,
		MinKey:             append([]byte(nil), binrow.EmptyRow...),
		MaxKey:             append([]byte(nil), binrow.EmptyRow...),
		KeyStats:           manifest.EmptyStats(),
		ValueStats:         valueStats,
		MinSequenceNumber:  f.minSeq,
		MaxSequenceNumber:  f.minSeq + f.rows - 1,
		SchemaID:           w.schema.ID,
		Level:              0,
		ExtraFiles:         []string{},
		CreationTimeMillis: &created,
		DeleteRowCount:     &zero,
		FileSource:         &source,
		ValueStatsCols:     cols,
	}, nil
}

// valueStats encodes the column stats as SimpleStatsConverter.toBinary does
// (apache/paimon: paimon-core/src/main/java/org/apache/paimon/stats/SimpleStatsConverter.java):
// with metadata.stats-dense-store (default true) a column without any stats
// (stats mode none, or a nested column, whose Parquet footer has none) is
// left out and _VALUE_STATS_COLS lists the columns kept, or is null when
// every column is kept; otherwise every column is stored, a column without
// stats with null min, max and null count.
func (w *TableWriter) valueStats(st *datafile.FileStats) (manifest.SimpleStats, *[]string, error) {
	return denseStats(w.schema.Fields, st.Columns, w.dense)
}

// Prepare closes every open data file and returns one message per
// (partition, bucket) with the files written since the last Prepare, in
// the order the (partition, bucket)s were first written (AppendOnlyWriter.
// prepareCommit: every commit closes the current files). The writer can be
// used for the next batch right away. Writers idle for a whole batch are
// dropped (AbstractFileStoreWrite drops writers without changes); an
// unaware-bucket writer then starts its sequence numbers at 0 again, as in
// Java.
func (w *TableWriter) Prepare(ctx context.Context) ([]commit.Message, error) {
	if w.failed != nil {
		return nil, w.failed
	}
	for _, bw := range w.order {
		if bw.file != nil {
			if err := w.closeFile(bw); err != nil {
				return nil, w.fail(err)
			}
		}
	}
	var msgs []commit.Message
	total := int32(w.numBuckets)
	kept := w.order[:0]
	for _, bw := range w.order {
		if len(bw.done) > 0 {
			msgs = append(msgs, commit.Message{Partition: bw.partition, Bucket: bw.key.bucket, TotalBuckets: total, NewFiles: bw.done})
			bw.done = nil
		}
		if bw.active {
			bw.active = false
			kept = append(kept, bw)
			continue
		}
		delete(w.writers, bw.key.mapKey())
		if bw.value != nil {
			delete(w.byValue, bw.value)
		}
		if w.single == bw {
			w.single = nil
		}
		if w.numBuckets > 0 {
			w.nextSeq[bw.key] = bw.seq
		}
	}
	clear(w.order[len(kept):])
	w.order = kept
	w.closed = nil
	return msgs, nil
}

// Abort deletes the data files written since the last Prepare, open and
// closed, and makes the writer usable again (also after ErrWriterFailed).
// The sequence numbers they used are not reused. It returns the first
// deletion error; the remaining files are still tried.
func (w *TableWriter) Abort(ctx context.Context) error {
	var first error
	for _, bw := range w.order {
		if bw.file != nil {
			if err := bw.file.out.Abort(); err != nil && first == nil {
				first = err
			}
			bw.file = nil
		}
		bw.done = nil
	}
	for _, p := range w.closed {
		if err := w.fio.Delete(ctx, p); err != nil && first == nil {
			first = fmt.Errorf("abort: delete data file %s: %w", p, err)
		}
	}
	w.closed = nil
	w.failed = nil
	return first
}

func (w *TableWriter) fail(err error) error {
	w.failed = fmt.Errorf("%w: %w", ErrWriterFailed, err)
	return w.failed
}
