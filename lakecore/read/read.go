// Package read reads the rows of scan splits: it opens each data file of a
// split in order, converts its rows from the schema the file was written
// with to the table's current schema (by field id, with Paimon's casts),
// projects columns by name and drops the rows deleted by deletion vectors
// (paimon-format.md §12 steps 5-8).
package read

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Errors of the package, wrapped with the data file's location.
var (
	// ErrUnsupportedFile is wrapped for a data file lakecore cannot read: a
	// format other than Parquet (by its extension, as Java picks the
	// reader) or a file stored at an external path (_EXTERNAL_PATH).
	ErrUnsupportedFile = errors.New("unsupported data file")

	// ErrFileMismatch is wrapped when a data file disagrees with its
	// manifest entry: another size or row count. The file was cut short or
	// replaced; reading on would return a silently different result.
	ErrFileMismatch = errors.New("data file does not match its manifest entry")

	// ErrUnknownColumn is wrapped by NewTableRead for a projected column
	// that is not in the schema.
	ErrUnknownColumn = errors.New("unknown column")
)

// TableRead reads splits of one table as its current schema, projected to
// some columns. It caches the schemas of the data files it has opened and
// is safe for concurrent use; each RowIterator is not.
type TableRead struct {
	fio        storage.FileIO
	tablePath  string
	current    *schema.TableSchema
	schemas    *schema.Manager
	projection []int // indexes into current.Fields; nil = all
	fields     []types.DataField
	partFields []types.DataField
	partOpts   binrow.PartitionOptions
	dataDir    string
	batchSize  int

	// engine merges the records of a primary-key table; nil for append
	// tables. kvFields are the current fields, _SEQUENCE_NUMBER and
	// _VALUE_KIND: the rows the primary-key readers read from files.
	engine   *mergetree.Engine
	kvFields []types.DataField
	keyTypes []types.DataType
	// splitTarget and openFileCost are source.split.target-size and
	// source.split.open-file-cost, which decide where Java reads raw.
	splitTarget, openFileCost int64
	// latest is SetLatestChanges.
	latest bool

	mu    sync.Mutex
	cache map[int64][]types.DataField
}

// NewTableRead returns a reader of the table at tablePath (relative to fio's
// root) that returns rows of schema current with the columns named in
// projection, in that order (nil = every column). An unknown name wraps
// ErrUnknownColumn.
func NewTableRead(fio storage.FileIO, tablePath string, current *schema.TableSchema, projection []string) (*TableRead, error) {
	o := current.Opts()
	partOpts, err := o.PartitionOptions()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", tablePath, err)
	}
	r := &TableRead{
		fio:        fio,
		tablePath:  strings.TrimSuffix(tablePath, "/"),
		current:    current,
		schemas:    schema.NewManager(fio, tablePath),
		partFields: current.PartitionFields(),
		partOpts:   partOpts,
		dataDir:    strings.Trim(o.DataFilePathDirectory(), "/"),
		cache:      map[int64][]types.DataField{current.ID: current.Fields},
	}
	if len(current.PrimaryKeys) > 0 {
		if r.engine, err = mergetree.NewEngine(current, current.Fields); err != nil {
			return nil, fmt.Errorf("read %s: %w", tablePath, err)
		}
		r.kvFields = append(current.Fields[:len(current.Fields):len(current.Fields)], kv.SequenceNumberField, kv.ValueKindField)
		if r.splitTarget, err = o.SourceSplitTargetSize(); err != nil {
			return nil, fmt.Errorf("read %s: %w", tablePath, err)
		}
		if r.openFileCost, err = o.SourceSplitOpenFileCost(); err != nil {
			return nil, fmt.Errorf("read %s: %w", tablePath, err)
		}
		r.keyTypes = make([]types.DataType, len(r.engine.Order.KeyFields))
		for i, j := range r.engine.Order.KeyFields {
			r.keyTypes[i] = current.Fields[j].Type
		}
	}
	if projection == nil {
		r.fields = current.Fields
	} else {
		r.projection = make([]int, len(projection))
		r.fields = make([]types.DataField, len(projection))
		for i, name := range projection {
			j := types.FieldByName(current.Fields, name)
			if j < 0 {
				return nil, fmt.Errorf("read %s: %w %q (columns %v)", tablePath, ErrUnknownColumn, name, current.FieldNames())
			}
			r.projection[i], r.fields[i] = j, current.Fields[j]
		}
	}
	return r, nil
}

// SetBatchSize sets the largest number of rows one RowIterator.Next
// returns (default 1024). Call it before Open.
func (r *TableRead) SetBatchSize(n int) { r.batchSize = n }

// Fields returns the fields of the rows the reader returns, in order.
func (r *TableRead) Fields() []types.DataField { return r.fields }

// Schema returns the schema rows are read as.
func (r *TableRead) Schema() *schema.TableSchema { return r.current }

// fileFields returns the fields of schema id, the schema a data file was
// written with.
func (r *TableRead) fileFields(ctx context.Context, id int64) ([]types.DataField, error) {
	r.mu.Lock()
	f, ok := r.cache[id]
	r.mu.Unlock()
	if ok {
		return f, nil
	}
	s, err := r.schemas.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.cache[id] = s.Fields
	r.mu.Unlock()
	return s.Fields, nil
}

// FilePath returns where a data file of split lives, relative to the
// FileIO root: <table>/[data-file.path-directory/]<partition path>/bucket-<b>/<name>
// (apache/paimon: paimon-core/.../utils/FileStorePathFactory.java,
// io/DataFilePathFactory.java). A file with an external path wraps
// ErrUnsupportedFile.
func (r *TableRead) FilePath(split *scan.Split, f *manifest.DataFileMeta) (string, error) {
	if f.ExternalPath != nil && *f.ExternalPath != "" {
		return "", fmt.Errorf("read data file %s: %w: it is stored at the external path %s (_EXTERNAL_PATH), which lakecore does not read",
			f.FileName, ErrUnsupportedFile, *f.ExternalPath)
	}
	if format := formatOf(f.FileName); format != "parquet" {
		return "", fmt.Errorf("read data file %s: %w: format %q; lakecore reads Parquet data files only", f.FileName, ErrUnsupportedFile, format)
	}
	elems := []string{r.tablePath}
	if r.dataDir != "" {
		elems = append(elems, r.dataDir)
	}
	if len(r.partFields) > 0 {
		pp, err := binrow.PartitionPath(r.partFields, split.PartitionValues, r.partOpts)
		if err != nil {
			return "", fmt.Errorf("read data file %s: partition directory: %w", f.FileName, err)
		}
		elems = append(elems, pp)
	}
	elems = append(elems, fmt.Sprintf("bucket-%d", split.Bucket), f.FileName)
	return path.Join(elems...), nil
}

// compressionExts are the extensions file.suffix.include.compression may
// put before the format's (DataFilePathFactory.formatIdentifier).
var compressionExts = map[string]bool{"zst": true, "zstd": true, "gz": true, "lz4": true, "snappy": true, "lzo": true, "brotli": true, "bz2": true, "deflate": true}

// formatOf returns the data file format named by a file's extension, as
// Java chooses the reader.
func formatOf(name string) string {
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return ""
	}
	ext := strings.ToLower(parts[len(parts)-1])
	if compressionExts[ext] && len(parts) > 2 {
		ext = strings.ToLower(parts[len(parts)-2])
	}
	return ext
}

// Open returns the reader of split's rows as the current schema with the
// projection applied. For an append table it is a RowIterator: the files
// in order, each read row group by row group, deleted rows dropped. For a
// primary-key table a streaming split (scan.Split.Streaming) returns its
// records as they are with their row kinds (or only the latest change of
// each key, SetLatestChanges), and any other split the merged rows, as
// Java's MergeFileSplitRead does (keyvalue.go).
func (r *TableRead) Open(ctx context.Context, split scan.Split) (SplitReader, error) {
	if r.engine == nil {
		return r.openFiles(ctx, split, false)
	}
	if split.Streaming {
		if r.latest {
			return r.openLatest(ctx, split)
		}
		return r.openChanges(ctx, split)
	}
	return r.openMerged(ctx, split)
}

// openFiles returns a RowIterator over split's files in order; keyValue
// reads the records of a primary-key table's files (see RowIterator). The
// first file is opened in the background at once; while one file is read
// the next is opened. Close the iterator to stop that work.
func (r *TableRead) openFiles(ctx context.Context, split scan.Split, keyValue bool) (*RowIterator, error) {
	paths := make([]string, len(split.Files))
	for i := range split.Files {
		p, err := r.FilePath(&split, &split.Files[i])
		if err != nil {
			return nil, err
		}
		paths[i] = p
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	it := &RowIterator{tr: r, split: split, keyValue: keyValue, paths: paths, bg: bg, cancel: cancel}
	if len(paths) > 0 {
		it.startPrefetch(0)
	}
	return it, nil
}
