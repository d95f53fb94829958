package write

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// ErrUnsupportedTable is wrapped by NewKeyValueWriter for a primary-key
// table whose options need a write mode lakecore does not implement yet;
// the message names the option and what to set instead.
var ErrUnsupportedTable = errors.New("primary-key table not writable by lakecore")

// The defaults of primary-key tables that differ from append tables.
const (
	kvTargetFileSize  = 128 << 20 // CoreOptions.targetFileSize(true)
	kvWriteBufferSize = 256 << 20 // write-buffer-size
	// systemStatsMode is the stats collector of _KEY_*, _SEQUENCE_NUMBER
	// and _VALUE_KIND (StatsCollectorFactories: system fields).
	systemStatsLength = 128
)

// KeyValueWriter writes changes to a primary-key table as level-0 KeyValue
// data files (apache/paimon: paimon-core/.../mergetree/MergeTreeWriter.java
// with SortBufferWriteBuffer, io/KeyValueDataFileWriter.java): per
// (partition, bucket) a write buffer that numbers each change on arrival,
// continuing after the bucket's largest committed sequence number; on
// Prepare, or when the buffers of all buckets together reach
// write-buffer-size (then the fullest other bucket's first, as Java's
// MemoryPoolFactory preempts; see estimateRow for what is counted), a
// buffer is sorted by Java's key comparator (then sequence.field, then sequence
// number), the changes of one key are merged with the table's merge engine
// and the result is written as level-0 files, one record per key in
// strictly ascending key order, with exact DataFileMeta (_MIN_KEY,
// _MAX_KEY, key and value stats, sequence range, _DELETE_ROW_COUNT).
//
// Fixed-bucket and dynamic-bucket tables (bucket = -1 with every partition
// key in the primary key; see dynamicBuckets) with the deduplicate,
// partial-update, aggregation or first-row engine and changelog-producer
// none, input or lookup are written; other options are refused
// (ErrUnsupportedTable). It is not safe for concurrent use.
//
// A deletion-vectors table (deletion-vectors.enabled; not with first-row,
// as in Java) is compacted like a lookup table too, merge-on-write
// (LookupMergeTreeCompactRewriter with a BucketedDvMaintainer): the
// compaction of level 0 marks, in the deletion vector of its file, the row
// of every key it finds in the levels above, drops deletes, and drops the
// vectors of the files it rewrites; the bucket's vectors, restored from the
// latest snapshot's index manifest, are written as one DELETION_VECTORS
// index file that the message's compaction part carries
// (commit.Message.CompactIndexFiles, CompactIndexBase). Batch readers then
// read the files above level 0 without merging. One writer per bucket, as
// in Java: a commit whose vectors were built on an outdated file of the
// bucket fails with commit.ErrConflict (after an append part,
// commit.ErrCompactionConflict).
//
// A first-row table is compacted like a lookup table: Prepare compacts
// each written bucket's level 0 up (its level-0 files are invisible to
// batch reads until then), keeping each key's first row; with
// changelog-producer lookup the compaction's changelog holds the record
// of each new key.
//
// With changelog-producer lookup, Prepare compacts each written bucket's
// level 0 up (ForceUpLevel0Compaction) and the compaction writes the
// changelog (LookupMergeTreeCompactRewriter): the commit is an APPEND
// snapshot with the level-0 files and a COMPACT snapshot that moves them
// up and carries the changelog, as Java's writers do with lookup-wait =
// true (the default). lakecore always waits: lookup-wait = false and
// lookup-compact = gentle give the same files as a Java compaction that
// finished before its checkpoint. A writer without compaction (write-only,
// DisableCompaction) leaves level 0 to a compaction job (Table.Compact),
// which then writes the changelog.
//
// A dynamic-bucket table takes one writer at a time, as in Java ("Dynamic
// Bucket only support single write job"): two writers that both see a new
// key could put it in two buckets. The commit messages of a writer that
// added keys to a partition carry the partition's HASH index files it
// assigned from (commit.Message.IndexBase), and the commit fails with
// commit.ErrIndexConflict when another writer changed them meanwhile;
// rewrite the batch with a new writer then.
type KeyValueWriter struct {
	fio       storage.FileIO
	tablePath string
	dataDir   string
	schema    *schema.TableSchema
	o         Options
	restore   FileRestorer
	engine    *mergetree.Engine
	// reader reads the runs compaction merges, made on first use.
	reader *read.TableRead
	// compaction is nil for write-only writers.
	compaction *mergetree.Universal
	// floor, when set, is asked for a bucket's last sequence number besides
	// its files (SetSequenceFloor).
	floor SequenceRestorer
	// dyn assigns the buckets of a dynamic-bucket table; nil for fixed buckets.
	dyn          *dynamicBuckets
	indexCounter int64

	numBuckets            int
	partFields, bktFields []types.DataField
	partIdx, bktIdx       []int
	partTypes, bktTypes   []types.DataType
	keyIdx                []int
	keyTypes              []types.DataType
	keyFields             []types.DataField
	// checkKey: the trimmed primary key is not the bucket key, so route
	// checks that it encodes; scratch holds the values of one encoding.
	checkKey   bool
	scratch    []any
	fileFields []types.DataField
	wopts      datafile.WriterOptions
	dense      bool
	partOpts   binrow.PartitionOptions
	// bufferSize is write-buffer-size: the budget of the buffered changes
	// of all buckets together; buffered is what they hold now.
	bufferSize, buffered int64
	dropUpdateBefore     bool
	dropDeletes          bool
	fileUUID, extension  string
	// changelogPrefix is the name prefix of changelog files
	// (changelog-file.prefix).
	changelogPrefix string
	// inputChangelog is changelog-producer input: every change is also
	// written, unmerged, to changelog files.
	inputChangelog bool
	// needLookup is CoreOptions.needLookup (changelog-producer lookup or
	// merge-engine first-row): level 0 is compacted up at every Prepare
	// (ForceUpLevel0Compaction) by LookupMergeTreeCompactRewriter, which
	// looks up each level-0 key in the levels above.
	needLookup bool
	// lookupChangelog is changelog-producer lookup: those compactions
	// write the changelog.
	lookupChangelog bool
	// dv is deletion-vectors.enabled: lookup compactions mark the rows of
	// older records in the levels above deleted (merge-on-write) and the
	// bucket's vectors are committed with the compaction; dvRestore gives
	// a restored bucket's DELETION_VECTORS entry.
	dv        bool
	dvRestore IndexRestorer
	// forceUpLevel0 picks compactions with ForceUpLevel0Compaction:
	// needLookup or compaction.force-up-level-0.
	forceUpLevel0 bool
	// rowEqual is changelog-producer.row-deduplicate's comparison, nil
	// when off.
	rowEqual func(a, b []any) bool
	// lookups holds the files above level 0 of all buckets for lookup
	// compactions, in memory and in local lookup files: the writer's own
	// (ownLookups, closed by Close) or one given by SetLookupCache; codec
	// is how its records of this writer's schema are encoded.
	lookups    *LookupCache
	ownLookups bool
	codec      *lookupCodec
	// valueTypes are the types of the table's fields, the value of a
	// KeyValue.
	valueTypes  []types.DataType
	fileCounter int64
	buckets     map[string]*kvBucket
	order       []*kvBucket
	closed      []string
	nextSeq     map[string]int64
	failed      error
	// spill is how full write buffers spill to local disk; spillDir the
	// directory of their runs (lookupfile.Dir, under localDir), made on the
	// first spill and removed by Prepare, Abort and Close; spillBuf holds
	// one encoded record.
	spill    spillConfig
	spillDir *lookupfile.Dir
	localDir string
	spillBuf []byte
	spills   spillCounters
	// sort sorts write buffers, made on first use (sorter).
	sort *mergetree.RecordSorter
	// partBufs, keyBufs and checkBufs hold the partition, bucket key and
	// primary key route encodes; mapKeyBuf the key bucketOf looks up.
	partBufs, keyBufs, checkBufs keyBuffers
	mapKeyBuf                    []byte
	// rowBuf holds the value row Write encodes; floatFields are the
	// fields that may hold a NaN encoding changes (writeBuffer.raw).
	rowBuf      []byte
	floatFields []int
	// spare is what emptied write buffers leave for the next ones.
	spare bufferSpare
	// unpartitioned caches the buckets of a fixed-bucket table without
	// partition keys by bucket number (route), emptyPartition is their
	// partition; nil for other tables. A bucket deleted from buckets is
	// cleared here too (forgetBucket).
	unpartitioned  []*kvBucket
	emptyPartition []byte
	// slab makes the records a flush decodes, boxes their values and the
	// sequence numbers of written records.
	slab  mergetree.RecordSlab
	boxes boxes.Slab
}

// FileRestorer returns the live files of a (partition, bucket) of a
// primary-key table in the latest snapshot, from which a writer restores
// the bucket's levels and its next sequence number
// (AbstractFileStoreWrite.createWriter).
type FileRestorer func(ctx context.Context, partition []byte, bucket int32) ([]manifest.DataFileMeta, error)

// kvBucket is the write buffer and the levels of one (partition, bucket).
type kvBucket struct {
	mapKey    string
	partition []byte
	bucket    int32
	dir       string
	seq       int64 // next sequence number
	buf       writeBuffer
	bufBytes  int64
	done      []manifest.DataFileMeta
	// files are the bucket's live files as this writer knows them: the
	// restored ones, then the ones it wrote and compacted.
	files []manifest.DataFileMeta
	// compactBefore and compactAfter are the compaction since the last
	// Prepare.
	compactBefore, compactAfter []manifest.DataFileMeta
	// changelog are the input changelog files since the last Prepare.
	changelog []manifest.DataFileMeta
	// compactChangelog are the changelog files of the lookup compaction
	// since the last Prepare (CompactIncrement.changelogFiles).
	compactChangelog []manifest.DataFileMeta
	// dvs are the bucket's deletion vectors (deletion-vectors.enabled
	// tables only).
	dvs *bucketDVs
	// runs are the buffer's sorted runs spilled to local disk, spilled the
	// bytes they take.
	runs    []spillRun
	spilled int64
}

// NewKeyValueWriter returns a writer of changes to the primary-key table
// of schema s at tablePath (relative to fio's root). restore returns the
// live files of a (partition, bucket), whose levels compaction continues
// and after whose largest sequence number new changes are numbered; nil
// means an empty table. A dynamic-bucket writer restores each partition's
// key → bucket assignment from the latest snapshot's HASH index files
// (LatestIndexRestorer; SetIndexRestorer replaces it), whatever restore
// is. Unless write-only is set, Prepare compacts a
// bucket whose sorted runs call for it (universal compaction).
func NewKeyValueWriter(fio storage.FileIO, tablePath string, s *schema.TableSchema, o Options, restore FileRestorer) (*KeyValueWriter, error) {
	fail := func(err error) (*KeyValueWriter, error) {
		return nil, fmt.Errorf("new primary-key writer for %s: %w", tablePath, err)
	}
	if len(s.PrimaryKeys) == 0 {
		return fail(fmt.Errorf("%w: the table has no primary key", ErrUnsupportedTable))
	}
	if err := s.CheckWritable(); err != nil {
		return fail(err)
	}
	opts := s.Opts()
	engine, err := mergetree.NewEngine(s, s.Fields)
	if err != nil {
		return fail(err)
	}
	if err := checkKeyValueWritable(s, engine); err != nil {
		return fail(err)
	}
	if _, ok := s.Options[schema.OptTargetFileSize]; !ok {
		o.TargetFileSize = kvTargetFileSize
	}
	w := &KeyValueWriter{
		fio: fio, tablePath: tablePath, dataDir: strings.TrimSuffix(tablePath, "/"), schema: s, o: o.withDefaults(), restore: restore, engine: engine,
		fileUUID: uuid.NewString(), buckets: map[string]*kvBucket{}, nextSeq: map[string]int64{}, bufferSize: kvWriteBufferSize,
	}
	if d := strings.Trim(opts.DataFilePathDirectory(), "/"); d != "" {
		w.dataDir = path.Join(w.dataDir, d)
	}
	if w.numBuckets, err = opts.Bucket(); err != nil {
		return fail(err)
	}
	if w.partFields, w.partIdx, err = project(s, s.PartitionKeys); err != nil {
		return fail(fmt.Errorf("partition keys: %w", err))
	}
	w.partTypes = typesOf(w.partFields)
	trimmed, err := kv.TrimmedPrimaryKeys(s.PrimaryKeys, s.PartitionKeys)
	if err != nil {
		return fail(err)
	}
	bucketKey, err := kv.BucketKeys(s.PrimaryKeys, s.PartitionKeys, opts.BucketKey())
	if err != nil {
		return fail(err)
	}
	for _, k := range bucketKey {
		if !slices.Contains(s.PrimaryKeys, k) {
			return fail(fmt.Errorf("%w: primary keys %v should contain all bucket keys %v", schema.ErrInvalidOption, s.PrimaryKeys, bucketKey))
		}
	}
	if w.bktFields, w.bktIdx, err = project(s, bucketKey); err != nil {
		return fail(fmt.Errorf("bucket key: %w", err))
	}
	w.bktTypes = typesOf(w.bktFields)
	w.keyIdx = engine.Order.KeyFields
	w.keyTypes = make([]types.DataType, len(w.keyIdx))
	w.keyFields = make([]types.DataField, len(w.keyIdx))
	for i, j := range w.keyIdx {
		w.keyTypes[i], w.keyFields[i] = s.Fields[j].Type, s.Fields[j]
	}
	w.checkKey = !slices.Equal(w.keyIdx, w.bktIdx)
	w.scratch = make([]any, max(len(w.partFields), len(w.bktFields), len(w.keyIdx)))
	keyFields, err := kv.KeyFields(s.Fields, trimmed)
	if err != nil {
		return fail(err)
	}
	w.fileFields = append(append(keyFields, kv.SequenceNumberField, kv.ValueKindField), s.Fields...)
	if w.partOpts, err = opts.PartitionOptions(); err != nil {
		return fail(err)
	}
	valueModes, err := opts.StatsModes(s.FieldNames())
	if err != nil {
		return fail(err)
	}
	sys := schema.StatsMode{Kind: schema.StatsTruncate, Length: systemStatsLength}
	modes := make([]schema.StatsMode, 0, len(w.fileFields))
	for range len(keyFields) + 2 {
		modes = append(modes, sys)
	}
	modes = append(modes, valueModes...)
	if w.dense, err = opts.StatsDenseStore(); err != nil {
		return fail(err)
	}
	comp, err := w.o.Buffers.Compressor(w.o.Compression, w.o.ZstdLevel)
	if err != nil {
		return fail(err)
	}
	w.wopts = datafile.WriterOptions{Compressor: comp, Buffers: w.o.Buffers, StatsModes: modes, RowGroupSize: w.o.RowGroupSize}
	if v, ok := s.Options["write-buffer-size"]; ok {
		if w.bufferSize, err = schema.ParseMemorySize(v); err != nil {
			return fail(fmt.Errorf("%w: write-buffer-size = %q: %w", schema.ErrInvalidOption, v, err))
		}
	}
	w.spare.max = int(min(w.bufferSize/4, math.MaxInt32))
	if w.spill, err = spillConfigFromSchema(opts); err != nil {
		return fail(err)
	}
	// RowKindFilter: ignore-delete drops -U and -D, ignore-update-before
	// -U. Like Flink's upsert sink, deduplicate tables without an input
	// changelog drop -U as well: the +U that follows replaces the row.
	w.dropDeletes = engine.IgnoreDelete
	w.dropUpdateBefore = engine.IgnoreDelete || engine.IgnoreUpdateBefore ||
		(engine.Name == mergetree.EngineDeduplicate && engine.ChangelogProducer != "input")
	w.extension = ".parquet"
	if inc, err := opts.FileSuffixIncludeCompression(); err != nil {
		return fail(err)
	} else if ext := compressionExtension(w.o.Compression); inc && ext != "" {
		w.extension = "." + ext + ".parquet"
	}
	w.changelogPrefix = "changelog-" // changelog-file.prefix
	if v, ok := s.Options["changelog-file.prefix"]; ok {
		w.changelogPrefix = v
	}
	w.inputChangelog = engine.ChangelogProducer == "input"
	w.lookupChangelog = engine.ChangelogProducer == "lookup"
	w.dv = engine.DeletionVectors
	// LookupStrategy.needLookup: a deletion-vectors table finds the rows
	// to delete by lookup.
	w.needLookup = w.lookupChangelog || engine.Name == mergetree.EngineFirstRow || w.dv
	if w.dv && restore != nil {
		w.dvRestore = LatestIndexRestorer(fio, tablePath)
	}
	if w.forceUpLevel0, err = opts.CompactionForceUpLevel0(); err != nil {
		return fail(err)
	}
	w.forceUpLevel0 = w.forceUpLevel0 || w.needLookup
	lo, err := LookupCacheOptionsFromSchema(s)
	if err != nil {
		return fail(err)
	}
	lo.Now = w.o.Now
	w.lookups, w.ownLookups = NewLookupCache(lo), true
	w.valueTypes = typesOf(s.Fields)
	w.floatFields = floatFields(s.Fields)
	w.codec = &lookupCodec{schemaID: s.ID, keyIdx: w.keyIdx, keyTypes: w.keyTypes, valueTypes: w.valueTypes}
	if dedup, err := opts.ChangelogRowDeduplicate(); err != nil {
		return fail(err)
	} else if dedup {
		w.rowEqual = mergetree.RowEqualiser(s.Fields, opts.ChangelogRowDeduplicateIgnoreFields())
	}
	if w.numBuckets == -1 {
		target, err := opts.DynamicBucketTargetRowNum()
		if err != nil {
			return fail(err)
		}
		maxBuckets, err := opts.DynamicBucketMaxBuckets()
		if err != nil {
			return fail(err)
		}
		inDataDir, err := opts.IndexFileInDataFileDir()
		if err != nil {
			return fail(err)
		}
		// Whatever restore is: a writer that does not see the index would
		// put known keys in new buckets.
		w.dyn = newDynamicBuckets(fio, tablePath, target, maxBuckets, inDataDir, w.bucketDir)
		w.dyn.restore = LatestIndexRestorer(fio, tablePath)
	}
	if w.numBuckets > 0 && len(w.partFields) == 0 {
		w.unpartitioned = make([]*kvBucket, w.numBuckets)
		if w.emptyPartition, err = binrow.Serialize(nil, nil); err != nil {
			return fail(err)
		}
	}
	writeOnly, err := opts.WriteOnly()
	if err != nil {
		return fail(err)
	}
	if !writeOnly {
		u, err := mergetree.UniversalFromOptions(s.Options)
		if err != nil {
			return fail(err)
		}
		w.compaction = &u
	}
	return w, nil
}

// checkKeyValueWritable refuses the options whose write path lakecore does
// not implement yet, naming what to set instead.
func checkKeyValueWritable(s *schema.TableSchema, e *mergetree.Engine) error {
	n, err := s.Opts().Bucket()
	if err != nil {
		return err
	}
	switch {
	case n == -1:
		var missing []string
		for _, p := range s.PartitionKeys {
			if !slices.Contains(s.PrimaryKeys, p) {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			// KeyValueFileStore.bucketMode: KEY_DYNAMIC, whose global key
			// index (GlobalIndexAssigner) lakecore does not implement.
			return fmt.Errorf("%w: bucket = -1 with primary key %v lacking partition keys %v is a cross-partition upsert table (global index): "+
				"add %v to the primary key, or set 'bucket' to a fixed number of buckets and route each key's retraction to its old partition",
				ErrUnsupportedTable, s.PrimaryKeys, missing, missing)
		}
	case n < 1:
		return fmt.Errorf("%w: bucket = %d: set 'bucket' to a fixed number of buckets", ErrUnsupportedTable, n)
	}
	if e.DeletionVectors {
		if e.Name == mergetree.EngineFirstRow {
			// MergeTreeCompactManagerFactory.createRewriter refuses it too.
			return fmt.Errorf("%w: deletion-vectors.enabled = true with merge-engine first-row: first-row never deletes old rows and needs no deletion vectors; set deletion-vectors.enabled to false",
				ErrUnsupportedTable)
		}
		for _, k := range []string{"deletion-vectors.bitmap64", "index-file-in-data-file-dir"} {
			if v, ok := s.Options[k]; ok && !strings.EqualFold(v, "false") {
				return fmt.Errorf("%w: option %s = %q is not supported for writing deletion vectors: remove it", ErrUnsupportedTable, k, v)
			}
		}
		if v, ok := s.Options["data-file.external-paths"]; ok && v != "" {
			return fmt.Errorf("%w: option data-file.external-paths = %q is not supported for writing deletion vectors: remove it", ErrUnsupportedTable, v)
		}
	}
	if e.ChangelogProducer == "full-compaction" {
		return fmt.Errorf("%w: changelog-producer = full-compaction needs full-compaction changelogs: set it to none, input or lookup", ErrUnsupportedTable)
	}
	for _, k := range []string{"rowkind.field", "data-file.thin-mode", "file.format.per.level", "force-lookup"} {
		if v, ok := s.Options[k]; ok && !strings.EqualFold(v, "false") {
			return fmt.Errorf("%w: option %s = %q is not supported for writing: remove it", ErrUnsupportedTable, k, v)
		}
	}
	return nil
}

// SetIndexRestorer makes a dynamic-bucket writer restore each partition's
// key → bucket assignment from r (nil: none, as for an empty table). Call
// it before the first Write; it does nothing for fixed-bucket tables.
func (w *KeyValueWriter) SetIndexRestorer(r IndexRestorer) {
	if w.dyn != nil {
		w.dyn.restore = r
	}
}

// SetBucketLister makes a dynamic-bucket writer check, when it restores a
// partition, that every bucket holding data has a HASH index file (see
// BucketLister). Call it before the first Write; it does nothing for
// fixed-bucket tables.
func (w *KeyValueWriter) SetBucketLister(l BucketLister) {
	if w.dyn != nil {
		w.dyn.lister = l
	}
}

// ForgetIdlePartitions drops the key → bucket assignment of every
// partition of a dynamic-bucket table that no change was written to since
// the last call, as Java's assigner clears partitions whose last change is
// committed; a later change of such a partition restores it again from the
// latest snapshot. It bounds the writer's memory when old partitions stop
// receiving changes (time-partitioned tables). Call it only when the
// messages of every Prepare so far are committed: a partition restored
// before its last batch is committed would miss that batch's keys (its
// next commit then fails with commit.ErrIndexConflict). It returns how many
// partitions it dropped, 0 for fixed-bucket tables.
func (w *KeyValueWriter) ForgetIdlePartitions() int {
	if w.dyn == nil {
		return 0
	}
	return w.dyn.forgetIdle()
}

// Schema returns the schema rows are written with.
func (w *KeyValueWriter) Schema() *schema.TableSchema { return w.schema }

// TargetFileSize is the size at which the writer rolls a new data file
// (target-file-size; 128 MiB for a primary-key table by default).
func (w *KeyValueWriter) TargetFileSize() int64 { return w.o.TargetFileSize }

// DisableCompaction makes Prepare only flush, as write-only does: for a
// writer whose batches commit together with other writers' (a group
// commit), whose compactions of the same files would collide; compaction
// is then a separate job (Table.Compact). Call it before the first Write.
func (w *KeyValueWriter) DisableCompaction() { w.compaction = nil }

// SetLocalDir makes the writer keep its local lookup files (package
// lookupfile) in a directory of its own under dir, which is created if
// missing; the default is os.TempDir(). Java puts them in its IOManager's
// temp dirs (Flink's io.tmp.dirs), for which Paimon has no table option.
// Call it before the first Write; it does not apply to a cache given by
// SetLookupCache (LookupCacheOptions.Dir).
func (w *KeyValueWriter) SetLocalDir(dir string) {
	w.localDir = dir
	if w.ownLookups {
		w.lookups.dirBase = dir
	}
}

// SetLookupCache makes the writer's lookup compactions use c, which may
// serve other writers of the same warehouse before, beside and after this
// one, instead of a cache of the writer's own: the table's lookup.cache-*
// options are then c's bounds, not the writer's. The writer never closes
// c; c's owner closes it after the writers that use it are done. Call it
// before the first Write or CompactBucket.
func (w *KeyValueWriter) SetLookupCache(c *LookupCache) {
	if w.ownLookups {
		_ = w.lookups.Close() // unused yet: nothing on disk
	}
	w.lookups, w.ownLookups = c, false
}

// SetSequenceFloor makes each bucket number its changes after floor's
// answer too (the largest number already handed out, -1 for none), for
// several writers of one process whose files are not committed yet. Call
// it before the first Write.
func (w *KeyValueWriter) SetSequenceFloor(floor SequenceRestorer) { w.floor = floor }

// Write adds one change (row kind and row, values in schema field order)
// to the write buffer of its partition and bucket and gives it the next
// sequence number of that bucket. A change dropped by the row-kind rules
// (ignore-delete, ignore-update-before, -U of deduplicate tables) is
// accepted and not written. A row whose key columns do not fit, or with a
// value of the wrong Go type for its field, fails alone with ErrInvalidRow
// naming the field, and so does a -U or -D of a
// first-row table without ignore-delete (wrapping
// mergetree.ErrRetractNotAccepted). A -U or -D of a deduplicate table
// needs only its key columns: NULL in a NOT NULL column is written as the
// type's zero value (types.ZeroValue), which no reader of a retract looks
// at; partial-update and aggregation read a retract's values, so there
// NOT NULL columns need values. The buffer keeps the row encoded (as a
// BinaryRow; see writeBuffer), but may keep row itself until its buffer is
// flushed: the caller must not modify it after the call. Values that
// encode but do not fit their Parquet column (invalid UTF-8, a string over
// its VARCHAR length) fail the flush. Storage failures wrap
// ErrWriterFailed.
func (w *KeyValueWriter) Write(ctx context.Context, kind kv.RowKind, row []any) error {
	if w.failed != nil {
		return w.failed
	}
	if !kind.Valid() {
		return fmt.Errorf("write to %s: %w: %w", w.dataDir, ErrInvalidRow, kv.ErrInvalidRowKind)
	}
	if len(row) != len(w.schema.Fields) {
		return fmt.Errorf("write to %s: %w: %d values for %d fields", w.dataDir, ErrInvalidRow, len(row), len(w.schema.Fields))
	}
	if (kind == kv.UpdateBefore && w.dropUpdateBefore) || (kind == kv.Delete && w.dropDeletes) {
		return nil
	}
	if kind.IsRetract() && w.engine.Name == mergetree.EngineFirstRow {
		// Java fails the whole write when FirstRowMergeFunction meets it;
		// refusing the one change keeps the writer usable.
		return fmt.Errorf("write to %s: %w: %w: merge-engine first-row got a %s change; set 'ignore-delete' to ignore DELETE and UPDATE_BEFORE changes",
			w.dataDir, ErrInvalidRow, mergetree.ErrRetractNotAccepted, kind)
	}
	for _, j := range w.keyIdx {
		if row[j] == nil {
			return fmt.Errorf("write to %s: %w: primary-key field %q is NULL", w.dataDir, ErrInvalidRow, w.schema.Fields[j].Name)
		}
	}
	var filled []any
	for j, f := range w.schema.Fields {
		if row[j] != nil || f.Type.Nullable {
			continue
		}
		// A key-only retract of a deduplicate (or first-row) table: its
		// other values are never read, but the Parquet column is REQUIRED,
		// so they are written as the type's zero value. Partial-update and
		// aggregation read a retract's values: there it must be complete.
		if !kind.IsRetract() || (w.engine.Name != mergetree.EngineDeduplicate && w.engine.Name != mergetree.EngineFirstRow) {
			return fmt.Errorf("write to %s: %w: field %q: got NULL, want %s", w.dataDir, ErrInvalidRow, f.Name, f.Type)
		}
		if filled == nil {
			filled = slices.Clone(row)
		}
		filled[j] = types.ZeroValue(f.Type)
	}
	if filled != nil {
		row = filled
	}
	b, err := w.route(ctx, row)
	if err != nil {
		return err
	}
	if w.rowBuf, err = binrow.EncodeTo(w.rowBuf, w.valueTypes, row); err != nil {
		for j, f := range w.schema.Fields {
			if _, ferr := binrow.Encode(w.valueTypes[j:j+1], row[j:j+1]); ferr != nil {
				return fmt.Errorf("write to %s: %w: field %q: %w", w.dataDir, ErrInvalidRow, f.Name, ferr)
			}
		}
		return fmt.Errorf("write to %s: %w: %w", w.dataDir, ErrInvalidRow, err)
	}
	var raw []any
	for _, j := range w.floatFields {
		if oddNaN(row[j]) {
			raw = row
			break
		}
	}
	prefix, whole := mergetree.KeyPrefix(row[w.keyIdx[0]])
	b.buf.add(w.rowBuf, raw, prefix, whole, b.seq, kind, &w.spare)
	b.seq++
	n := estimateRow(row)
	b.bufBytes += n
	w.buffered += n
	if w.buffered >= w.bufferSize {
		if err := w.relieve(ctx, w.preempt(b)); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// preempt picks the buffer to flush when the buffers of all buckets
// together reach write-buffer-size, as Java's MemoryPoolFactory does for
// the writers sharing its pool (apache/paimon:
// paimon-core/.../memory/MemoryPoolFactory.java preemptMemory): the bucket
// holding the most besides the one being written, or, when the others hold
// nothing, that one itself (its SortBufferWriteBuffer.put fails and
// MergeTreeWriter.write flushes it).
func (w *KeyValueWriter) preempt(writing *kvBucket) *kvBucket {
	var victim *kvBucket
	for _, o := range w.order {
		if o != writing && o.bufBytes > 0 && (victim == nil || o.bufBytes > victim.bufBytes) {
			victim = o
		}
	}
	if victim == nil {
		return writing
	}
	return victim
}

// estimateRow is what a buffered change counts against write-buffer-size,
// as Java counts the bytes of its binary rows: the Go heap the change held
// when buffers kept rows as given (a KeyValue, a pointer to it, the row's
// slice and every boxed value, strings and byte slices with their bytes).
// The encoded change a writeBuffer holds takes less (but for nested
// values, counted at 32 bytes as before whatever they hold), so the count
// still bounds the buffers and their spare arrays (bufferSpare) from
// above, and flushes and spills happen where they did; the garbage
// collector's headroom (GOGC) comes on top.
func estimateRow(row []any) int64 {
	n := int64(48 + 8 + roundAlloc(16*len(row)))
	for _, v := range row {
		switch x := v.(type) {
		case nil, bool:
			// no allocation
		case string:
			n += 16 + roundAlloc(len(x))
		case []byte:
			n += 24 + roundAlloc(len(x))
		case types.Decimal:
			n += 32 + 40 // the Decimal and its big.Int
			if x.Unscaled != nil {
				n += roundAlloc(8 * len(x.Unscaled.Bits()))
			}
		case int8, int16, int32, int64, float32, float64:
			n += 8
		default:
			n += 32 // timestamps and the like; nested values are rare in keyed tables
		}
	}
	return n
}

// roundAlloc rounds a small allocation up to a multiple of 16 bytes, as
// Go's size classes roughly do.
func roundAlloc(n int) int64 { return int64((n + 15) &^ 15) }

// route returns the buffer of row's partition and bucket. The partition
// and key bytes it encodes live in the writer's reused buffers.
func (w *KeyValueWriter) route(ctx context.Context, row []any) (*kvBucket, error) {
	if w.unpartitioned != nil {
		key, err := encodeFields(w.bktFields, w.bktIdx, w.bktTypes, row, w.scratch[:len(w.bktFields)], false, &w.keyBufs)
		if err != nil {
			return nil, fmt.Errorf("write to %s: %w: bucket key %w", w.dataDir, ErrInvalidRow, err)
		}
		if w.checkKey {
			if _, err := encodeFields(w.keyFields, w.keyIdx, w.keyTypes, row, w.scratch[:len(w.keyIdx)], false, &w.checkBufs); err != nil {
				return nil, fmt.Errorf("write to %s: %w: primary key %w", w.dataDir, ErrInvalidRow, err)
			}
		}
		bucket := binrow.Bucket(key, w.numBuckets)
		if b := w.unpartitioned[bucket]; b != nil {
			return b, nil
		}
		b, err := w.bucketOf(ctx, w.emptyPartition, int32(bucket))
		if err == nil {
			w.unpartitioned[bucket] = b
		}
		return b, err
	}
	part, err := encodeFields(w.partFields, w.partIdx, w.partTypes, row, w.scratch[:len(w.partFields)], true, &w.partBufs)
	if err != nil {
		return nil, fmt.Errorf("write to %s: %w: partition %w", w.dataDir, ErrInvalidRow, err)
	}
	key, err := encodeFields(w.bktFields, w.bktIdx, w.bktTypes, row, w.scratch[:len(w.bktFields)], false, &w.keyBufs)
	if err != nil {
		return nil, fmt.Errorf("write to %s: %w: bucket key %w", w.dataDir, ErrInvalidRow, err)
	}
	if w.checkKey { // the key must encode, or the file's _MIN_KEY could not
		if _, err := encodeFields(w.keyFields, w.keyIdx, w.keyTypes, row, w.scratch[:len(w.keyIdx)], false, &w.checkBufs); err != nil {
			return nil, fmt.Errorf("write to %s: %w: primary key %w", w.dataDir, ErrInvalidRow, err)
		}
	}
	if w.dyn != nil {
		bucket, err := w.dyn.assign(ctx, part, binrow.Hash(key))
		if err != nil {
			return nil, fmt.Errorf("write to %s: %w", w.dataDir, err)
		}
		return w.bucketOf(ctx, part, bucket)
	}
	return w.bucketOf(ctx, part, int32(binrow.Bucket(key, w.numBuckets)))
}

// forgetBucket drops b from the writer's buckets.
func (w *KeyValueWriter) forgetBucket(b *kvBucket) {
	delete(w.buckets, b.mapKey)
	if w.unpartitioned != nil && w.unpartitioned[b.bucket] == b {
		w.unpartitioned[b.bucket] = nil
	}
}

// bucketDir is the directory of the files of (partition, bucket).
func (w *KeyValueWriter) bucketDir(part []byte, bucket int32) (string, error) {
	dir := w.dataDir
	if len(w.partFields) > 0 {
		vals, err := binrow.Deserialize(w.partTypes, part)
		if err != nil {
			return "", fmt.Errorf("write to %s: partition: %w", w.dataDir, err)
		}
		pp, err := binrow.PartitionPath(w.partFields, vals, w.partOpts)
		if err != nil {
			return "", fmt.Errorf("write to %s: %w: partition directory: %w", w.dataDir, ErrInvalidRow, err)
		}
		dir = path.Join(dir, pp)
	}
	return path.Join(dir, "bucket-"+strconv.Itoa(int(bucket))), nil
}

// bucketOf returns the buffer of (partition, bucket), restoring its files
// on first use.
func (w *KeyValueWriter) bucketOf(ctx context.Context, part []byte, bucket int32) (*kvBucket, error) {
	// The map key of bucketKey.mapKey, looked up without making a string.
	w.mapKeyBuf = append(append(w.mapKeyBuf[:0], part...), byte(bucket>>24), byte(bucket>>16), byte(bucket>>8), byte(bucket))
	if b, ok := w.buckets[string(w.mapKeyBuf)]; ok {
		return b, nil
	}
	part = slices.Clone(part) // route's buffer
	mk := bucketKey{partition: string(part), bucket: bucket}.mapKey()
	dir, err := w.bucketDir(part, bucket)
	if err != nil {
		return nil, err
	}
	b := &kvBucket{mapKey: mk, partition: part, bucket: bucket, dir: dir}
	if w.restore != nil {
		files, err := w.restore(ctx, part, bucket)
		if err != nil {
			return nil, fmt.Errorf("write to %s: restore bucket %d: %w", w.dataDir, bucket, err)
		}
		b.files = files
		for i := range files {
			b.seq = max(b.seq, files[i].MaxSequenceNumber+1)
		}
	}
	if w.dv {
		if err := w.restoreDVs(ctx, b); err != nil {
			return nil, fmt.Errorf("write to %s: %w", w.dataDir, err)
		}
	}
	if next, ok := w.nextSeq[mk]; ok && next > b.seq {
		b.seq = next
	}
	if w.floor != nil {
		last, err := w.floor(ctx, part, bucket)
		if err != nil {
			return nil, fmt.Errorf("write to %s: sequence numbers of bucket %d: %w", w.dataDir, bucket, err)
		}
		b.seq = max(b.seq, last+1)
	}
	w.buckets[mk] = b
	w.order = append(w.order, b)
	return b, nil
}

// flush sorts and merges the buffer of b, with its spilled runs, and
// writes it as level-0 files (MergeTreeWriter.flushWriteBuffer).
func (w *KeyValueWriter) flush(ctx context.Context, b *kvBucket) error {
	if b.buf.len() == 0 && len(b.runs) == 0 {
		return nil
	}
	src, err := w.sorted(&b.buf, true)
	if err != nil {
		return err
	}
	if len(b.runs) > 0 {
		m, err := w.mergedRecords(b, src)
		if err != nil {
			return err
		}
		src = m
	}
	err = w.writeSorted(ctx, b, src)
	if cerr := w.closeRuns(src); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	w.dropRuns(b)
	w.releaseBuffer(b)
	return nil
}

// sorter returns the writer's sorter of write buffers.
func (w *KeyValueWriter) sorter() *mergetree.RecordSorter {
	if w.sort == nil {
		w.sort = mergetree.NewRecordSorter(&w.engine.Order)
	}
	return w.sort
}

// writeSorted writes the records of src, sorted in the buffer's order, as
// level-0 files: the records of each key folded by the merge engine
// (SortBufferWriteBuffer.MergeIterator with ReducerMergeFunctionWrapper),
// and with changelog-producer input every record, unmerged and with its
// own row kind, to changelog files too (its rawConsumer): the changelog
// Java's and lakecore's streaming readers emit.
func (w *KeyValueWriter) writeSorted(ctx context.Context, b *kvBucket, src mergetree.RecordReader) error {
	order := &w.engine.Order
	fn, err := w.engine.NewMergeFunction()
	if err != nil {
		return err
	}
	reducer := mergetree.NewReducer(fn)
	files := w.rolling(b, w.o.FilePrefix, 0, 0, &b.done)
	var changelog *rollingFiles
	if w.inputChangelog {
		changelog = w.rolling(b, w.changelogPrefix, 0, 0, &b.changelog)
	}
	fail := func(err error) error {
		files.abort()
		if changelog != nil {
			changelog.abort()
		}
		return err
	}
	next := func() (*mergetree.KeyValue, error) {
		r, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err == nil && changelog != nil {
			err = changelog.add(ctx, r)
		}
		return r, err
	}
	r, err := next()
	for err == nil && r != nil {
		first := r
		reducer.Reset()
		for err == nil && r != nil && order.CompareKeys(r.Value, first.Value) == 0 {
			if err = reducer.Add(r); err != nil {
				err = fmt.Errorf("write to %s: merge key %v: %w", b.dir, order.Key(first.Value), err)
				break
			}
			r, err = next()
		}
		if err != nil {
			break
		}
		var merged *mergetree.KeyValue
		if merged, err = reducer.Result(); err != nil {
			err = fmt.Errorf("write to %s: merge key %v: %w", b.dir, order.Key(first.Value), err)
		} else if merged != nil {
			err = files.add(ctx, merged)
		}
	}
	if err != nil {
		return fail(err)
	}
	if changelog != nil {
		if err := changelog.close(); err != nil {
			return fail(err)
		}
	}
	return files.close()
}

// releaseBuffer empties the buffer of b.
func (w *KeyValueWriter) releaseBuffer(b *kvBucket) {
	b.buf.reset(&w.spare)
	w.buffered -= b.bufBytes
	b.bufBytes = 0
}

// rollingFiles writes records into KeyValue files of one bucket, prefix,
// level and file source, rolling at target-file-size (checked every
// rollCheckRows records, as Java's RollingFileWriter does); the metadata
// of each closed file is appended to out.
type rollingFiles struct {
	w             *KeyValueWriter
	b             *kvBucket
	prefix        string
	level, source int32
	out           *[]manifest.DataFileMeta
	f             *kvFile
}

func (w *KeyValueWriter) rolling(b *kvBucket, prefix string, level, source int32, out *[]manifest.DataFileMeta) *rollingFiles {
	return &rollingFiles{w: w, b: b, prefix: prefix, level: level, source: source, out: out}
}

// add writes one record, opening a file first and closing it once it
// reaches the target size.
func (r *rollingFiles) add(ctx context.Context, rec *mergetree.KeyValue) error {
	if r.f == nil {
		f, err := r.w.openFile(ctx, r.b, r.prefix, r.level, r.source)
		if err != nil {
			return err
		}
		r.f = f
	}
	if err := r.f.write(r.w, rec); err != nil {
		return err
	}
	if r.f.rows%rollCheckRows == 0 && r.f.w.EstimatedSize() >= r.w.o.TargetFileSize {
		return r.close()
	}
	return nil
}

// close closes the open file, if any, and records its metadata.
func (r *rollingFiles) close() error {
	if r.f == nil {
		return nil
	}
	f := r.f
	r.f = nil
	meta, err := r.w.closeFile(f)
	if err != nil {
		return err
	}
	*r.out = append(*r.out, meta)
	return nil
}

// abort drops the open file, if any (closed ones are in w.closed, for
// Abort).
func (r *rollingFiles) abort() {
	if r.f != nil {
		_ = r.f.out.Abort()
		r.f = nil
	}
}

// kvFile is one KeyValue file being written: a level-0 file of a flush or
// a compaction output.
type kvFile struct {
	level          int32
	source         int32 // FileSource: 0 APPEND, 1 COMPACT
	name, path     string
	out            storage.Writer
	w              *datafile.Writer
	rows, deletes  int64
	minSeq, maxSeq int64
	first, last    []any // key values
	row            []any
}

func (w *KeyValueWriter) openFile(ctx context.Context, b *kvBucket, prefix string, level, source int32) (*kvFile, error) {
	name := prefix + w.fileUUID + "-" + strconv.FormatInt(w.fileCounter, 10) + w.extension
	w.fileCounter++
	p := path.Join(b.dir, name)
	out, err := w.fio.Create(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("create data file %s: %w", p, err)
	}
	dw, err := datafile.NewWriter(out, w.fileFields, w.wopts)
	if err != nil {
		_ = out.Abort()
		return nil, fmt.Errorf("create data file %s: %w", p, err)
	}
	return &kvFile{level: level, source: source, name: name, path: p, out: out, w: dw, row: make([]any, len(w.fileFields))}, nil
}

// write appends a merged record: _KEY_ copies, sequence number, kind, values.
func (f *kvFile) write(w *KeyValueWriter, r *mergetree.KeyValue) error {
	k := len(w.keyIdx)
	for i, j := range w.keyIdx {
		f.row[i] = r.Value[j]
	}
	f.row[k], f.row[k+1] = w.boxes.Int64(r.Seq), int8(r.Kind)
	copy(f.row[k+2:], r.Value)
	if err := f.w.Write(f.row); err != nil {
		if errors.Is(err, datafile.ErrInvalidValue) {
			return fmt.Errorf("write data file %s: %w: %w", f.path, ErrInvalidRow, err)
		}
		return fmt.Errorf("write data file %s: %w", f.path, err)
	}
	if f.rows == 0 {
		f.first, f.minSeq, f.maxSeq = w.engine.Order.Key(r.Value), r.Seq, r.Seq
		f.last = make([]any, len(f.first))
	}
	// last is overwritten in place: a key slice per row was an allocation
	// per row for the one the file ends with.
	for i, j := range w.engine.Order.KeyFields {
		f.last[i] = r.Value[j]
	}
	f.minSeq, f.maxSeq = min(f.minSeq, r.Seq), max(f.maxSeq, r.Seq)
	if r.Kind.IsRetract() {
		f.deletes++
	}
	f.rows++
	return nil
}

// closeFile closes f and returns its DataFileMeta (KeyValueDataFileWriter.result).
func (w *KeyValueWriter) closeFile(f *kvFile) (manifest.DataFileMeta, error) {
	st, err := f.w.Close()
	if err != nil {
		_ = f.out.Abort()
		return manifest.DataFileMeta{}, fmt.Errorf("close data file %s: %w", f.path, err)
	}
	if err := f.out.Close(); err != nil {
		_ = f.out.Abort()
		return manifest.DataFileMeta{}, fmt.Errorf("close data file %s: %w", f.path, err)
	}
	w.closed = append(w.closed, f.path)
	return w.fileMeta(f, st)
}

func (w *KeyValueWriter) fileMeta(f *kvFile, st *datafile.FileStats) (manifest.DataFileMeta, error) {
	k := len(w.keyIdx)
	if st.RowCount != f.rows || len(st.Columns) != len(w.fileFields) {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: %d rows and %d column stats, want %d and %d",
			f.path, st.RowCount, len(st.Columns), f.rows, len(w.fileFields))
	}
	minKey, err := binrow.Serialize(w.keyTypes, f.first)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: min key: %w", f.path, err)
	}
	maxKey, err := binrow.Serialize(w.keyTypes, f.last)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: max key: %w", f.path, err)
	}
	// Key stats in "all" mode: every key column, never dense.
	mins, maxs, nulls := make([]any, k), make([]any, k), make([]*int64, k)
	for i := range k {
		c := st.Columns[i]
		mins[i], maxs[i], nulls[i] = c.Min, c.Max, c.NullCount
	}
	keyStats, err := manifest.NewStats(w.keyTypes, mins, maxs, nulls)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: key stats: %w", f.path, err)
	}
	valueStats, cols, err := denseStats(w.schema.Fields, st.Columns[k+2:], w.dense)
	if err != nil {
		return manifest.DataFileMeta{}, fmt.Errorf("data file %s: value stats: %w", f.path, err)
	}
	now := w.o.Now()
	_, offset := now.Zone()
	created := now.UnixMilli() + int64(offset)*1000
	deletes := f.deletes
	source := f.source
	return manifest.DataFileMeta{
		FileName: f.name, FileSize: f.out.Written(), RowCount: f.rows,
		MinKey: minKey, MaxKey: maxKey, KeyStats: keyStats, ValueStats: valueStats,
		MinSequenceNumber: f.minSeq, MaxSequenceNumber: f.maxSeq, SchemaID: w.schema.ID, Level: f.level,
		ExtraFiles: []string{}, CreationTimeMillis: &created, DeleteRowCount: &deletes, FileSource: &source,
		ValueStatsCols: cols,
	}, nil
}

// denseStats encodes the stats of columns fields as
// SimpleStatsConverter.toBinary does (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/stats/SimpleStatsConverter.java):
// with metadata.stats-dense-store (dense, default true) a column without
// any stats (stats mode none, or a nested column, whose Parquet footer has
// none) is left out and _VALUE_STATS_COLS lists the columns kept, or is
// nil when every column is kept; otherwise every column is stored, a
// column without stats with null min, max and null count.
func denseStats(fields []types.DataField, cs []datafile.ColumnStats, dense bool) (manifest.SimpleStats, *[]string, error) {
	n := len(cs)
	ts := typesOf(fields)
	mins, maxs, nulls := make([]any, 0, n), make([]any, 0, n), make([]*int64, 0, n)
	var cols []string
	var kept []types.DataType
	for i, c := range cs {
		if dense && c.Min == nil && c.Max == nil && c.NullCount == nil {
			if cols == nil {
				cols = make([]string, 0, n)
				for j := 0; j < i; j++ {
					cols = append(cols, fields[j].Name)
				}
				kept = append([]types.DataType(nil), ts[:i]...)
			}
			continue
		}
		if cols != nil {
			cols = append(cols, fields[i].Name)
			kept = append(kept, ts[i])
		}
		mins, maxs, nulls = append(mins, c.Min), append(maxs, c.Max), append(nulls, c.NullCount)
	}
	if cols != nil {
		ts = kept
	}
	s, err := manifest.NewStats(ts, mins, maxs, nulls)
	if err != nil {
		return manifest.SimpleStats{}, nil, err
	}
	if cols == nil {
		return s, nil, nil
	}
	return s, &cols, nil
}

// Prepare flushes every write buffer and returns one commit message per
// (partition, bucket) with the level-0 files written since the last
// Prepare (MergeTreeWriter.prepareCommit), in the order the buckets were
// first written. Buckets idle for a whole batch are dropped, keeping their
// next sequence number.
func (w *KeyValueWriter) Prepare(ctx context.Context) ([]commit.Message, error) {
	if w.failed != nil {
		return nil, w.failed
	}
	var msgs []commit.Message
	kept := w.order[:0]
	for _, b := range w.order {
		active := b.buf.len() > 0 || len(b.runs) > 0 || len(b.done) > 0
		if err := w.flush(ctx, b); err != nil {
			return nil, w.fail(err)
		}
		b.files = append(b.files, b.done...)
		if w.compaction != nil && (len(b.done) > 0 || (w.needLookup && hasLevel0Files(b.files))) {
			if err := w.compact(ctx, b); err != nil {
				return nil, w.fail(err)
			}
		}
		if len(b.done) > 0 || len(b.compactBefore) > 0 || len(b.changelog) > 0 {
			m := commit.Message{Partition: b.partition, Bucket: b.bucket, TotalBuckets: int32(w.numBuckets), NewFiles: b.done,
				CompactBefore: b.compactBefore, CompactAfter: b.compactAfter, Changelog: b.changelog, CompactChangelog: b.compactChangelog}
			if err := w.writeDVs(ctx, b, &m); err != nil {
				return nil, w.fail(err)
			}
			msgs = append(msgs, m)
			b.done, b.compactBefore, b.compactAfter, b.changelog, b.compactChangelog = nil, nil, nil, nil, nil
		}
		if active {
			kept = append(kept, b)
			continue
		}
		w.forgetBucket(b)
		w.nextSeq[b.mapKey] = b.seq
		w.dropLookup(b, true)
	}
	clear(w.order[len(kept):])
	w.order = kept
	if w.dyn != nil {
		name := func() string {
			n := indexFileName(w.fileUUID, w.indexCounter)
			w.indexCounter++
			return n
		}
		files, bases, err := w.dyn.prepare(ctx, name, &w.closed)
		if err != nil {
			return nil, w.fail(err)
		}
		msgs = attachIndex(msgs, w.fileUUID, files, bases)
	}
	w.closed = nil
	if err := w.closeSpillDir(); err != nil {
		return nil, w.fail(err)
	}
	return msgs, nil
}

// Abort drops the buffered changes and deletes the files written since the
// last Prepare; the writer is usable again. Sequence numbers are not reused.
func (w *KeyValueWriter) Abort(ctx context.Context) error {
	var first error
	w.buffered = 0
	for _, b := range w.order {
		b.buf.reset(&w.spare)
		b.bufBytes, b.done = 0, nil
		w.dropRuns(b)
		b.compactBefore, b.compactAfter, b.changelog, b.compactChangelog = nil, nil, nil, nil
		w.dropLookup(b, false) // it may hold files written since the last Prepare, now deleted
		w.forgetBucket(b)      // restore its files again: they may have changed
	}
	w.order = nil
	if w.dyn != nil {
		// Restore the assignment again: the hashes of the dropped batch
		// may be in it, and its index files were never committed.
		clear(w.dyn.parts)
	}
	for _, p := range w.closed {
		if err := w.fio.Delete(ctx, p); err != nil && first == nil {
			first = fmt.Errorf("abort: delete data file %s: %w", p, err)
		}
	}
	w.closed, w.failed = nil, nil
	if err := w.closeSpillDir(); err != nil && first == nil {
		first = fmt.Errorf("abort: %w", err)
	}
	return first
}

// Close deletes the writer's local lookup files and their directory, unless
// its lookup cache was given by SetLookupCache, which stays open. The
// writer must not be used afterwards; call Prepare or Abort first, Close
// neither commits nor deletes data files. A writer that is never closed
// leaves its local files until the process ends; the next writer under the
// same local directory removes them then (lookupfile.Dir).
func (w *KeyValueWriter) Close() error {
	err := w.closeSpillDir()
	w.spill.codec.Close()
	if w.ownLookups {
		if lerr := w.lookups.Close(); err == nil {
			err = lerr
		}
	}
	if err != nil {
		return fmt.Errorf("close writer of %s: %w", w.dataDir, err)
	}
	return nil
}

func (w *KeyValueWriter) fail(err error) error {
	w.failed = fmt.Errorf("%w: %w", ErrWriterFailed, err)
	return w.failed
}

// hasLevel0Files reports whether any of files is on level 0.
func hasLevel0Files(files []manifest.DataFileMeta) bool {
	return slices.ContainsFunc(files, func(f manifest.DataFileMeta) bool { return f.Level == 0 })
}
