package maintain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/parallel"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// ioParallelism bounds the goroutines that read or delete files at once
// (Java's file-operation.thread-num defaults to the number of cores; the
// work is I/O bound on object stores).
const ioParallelism = 8

// table is what the operations need to know about one table: its latest
// schema and how data files are laid out.
type table struct {
	fio        storage.FileIO
	path       string
	schema     *schema.TableSchema
	opts       schema.Options
	partFields []types.DataField
	parts      *binrow.PartitionNamer
	dataDir    string // data-file.path-directory, "" when unset
	// indexInDataDir is index-file-in-data-file-dir: index files live in
	// their bucket directory instead of index/.
	indexInDataDir bool
	snapshots      *snapshot.Manager
	manifests      *manifest.Reader
	log            *slog.Logger
}

func loadTable(ctx context.Context, fio storage.FileIO, tablePath string, log *slog.Logger) (*table, error) {
	tablePath = strings.Trim(tablePath, "/")
	s, err := schema.NewManager(fio, tablePath).Latest(ctx)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", tablePath, err)
	}
	o := s.Opts()
	partOpts, err := o.PartitionOptions()
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", tablePath, err)
	}
	t := &table{
		fio:        fio,
		path:       tablePath,
		schema:     s,
		opts:       o,
		partFields: s.PartitionFields(),
		dataDir:    strings.Trim(o.DataFilePathDirectory(), "/"),
		snapshots:  snapshot.NewManager(fio, tablePath),
		manifests:  manifest.NewReader(fio, tablePath, manifest.ReaderOptions{}),
		log:        log,
	}
	if v, ok := o.Get("index-file-in-data-file-dir"); ok {
		t.indexInDataDir = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	if len(t.partFields) != len(s.PartitionKeys) {
		return nil, fmt.Errorf("load table %s: partition keys %v are not all fields of schema %d", tablePath, s.PartitionKeys, s.ID)
	}
	if t.log == nil {
		t.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	t.parts = binrow.NewPartitionNamer(t.partFields, partOpts)
	return t, nil
}

// optionOr returns v, an operation's option, or when v is unset (zero) the
// table's option that get reads.
func optionOr[T comparable](v T, get func() (T, error)) (T, error) {
	var unset T
	if v != unset {
		return v, nil
	}
	return get()
}

// orNow returns now, or time.Now when now is nil (the operations' Now
// option).
func orNow(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// decodePartition returns the values of a serialized partition row.
func (t *table) decodePartition(part []byte) ([]any, error) {
	p, err := t.parts.Of(part)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.path, err)
	}
	return p.Values, nil
}

// partitionDir returns the escaped partition directory of a serialized
// partition row ("" for an unpartitioned table), as Java's
// FileStorePathFactory.getPartitionString computes it.
func (t *table) partitionDir(part []byte) (string, error) {
	p, err := t.parts.Of(part)
	if err != nil {
		return "", fmt.Errorf("table %s: %w", t.path, err)
	}
	return p.Dir, nil
}

// partitionName is the partition as reports show it: "k1=v1/k2=v2" with
// the directory values unescaped, "" for an unpartitioned table; for a
// partition that does not decode, its bytes in hex.
func (t *table) partitionName(part []byte) string {
	p, err := t.parts.Of(part)
	if err != nil {
		return fmt.Sprintf("%x", part)
	}
	return p.Name
}

// dataRoot is the directory below which partition directories live.
func (t *table) dataRoot() string {
	if t.dataDir == "" {
		return t.path
	}
	return path.Join(t.path, t.dataDir)
}

// bucketDir is <table>/[data-file.path-directory/]<partition>/bucket-<b>.
func (t *table) bucketDir(part []byte, bucket int32) (string, error) {
	d, err := t.partitionDir(part)
	if err != nil {
		return "", err
	}
	return path.Join(t.dataRoot(), d, "bucket-"+strconv.Itoa(int(bucket))), nil
}

// dataFilePaths returns where a data file and its extra files live relative
// to the FileIO root (DataFilePathFactory.toPath and toAlignedPath). ok is
// false for a file stored at an external path outside the FileIO, which
// lakecore cannot reach.
func (t *table) dataFilePaths(part []byte, bucket int32, f *manifest.DataFileMeta) (file string, extras []string, ok bool, err error) {
	dir := ""
	if f.ExternalPath != nil && *f.ExternalPath != "" {
		p, inside := t.external(*f.ExternalPath)
		if !inside {
			return "", nil, false, nil
		}
		file, dir = p, path.Dir(p)
	} else {
		dir, err = t.bucketDir(part, bucket)
		if err != nil {
			return "", nil, false, err
		}
		file = path.Join(dir, f.FileName)
	}
	for _, x := range f.ExtraFiles {
		extras = append(extras, path.Join(dir, x))
	}
	return file, extras, true, nil
}

// external maps a URI under the FileIO's root to a FileIO path.
func (t *table) external(uri string) (string, bool) {
	root := strings.TrimSuffix(t.fio.String(), "/")
	prefixes := []string{root + "/"}
	if local, ok := strings.CutPrefix(root, "file://"); ok {
		// Java's Path prints local files as file:/dir.
		prefixes = append(prefixes, "file:"+local+"/", local+"/")
	}
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(uri, p); ok && storage.ValidatePath(rest) == nil {
			return rest, true
		}
	}
	return "", false
}

// indexFilePath is where an index file lives (IndexFileHandler.filePath):
// its external path, or with index-file-in-data-file-dir the bucket
// directory of its entry (IndexInDataFileDirPathFactory), or else
// index/<name> under the table (FileStorePathFactory.globalIndexFileFactory).
// ok is false for a file lakecore cannot reach.
func (t *table) indexFilePath(e *manifest.IndexEntry) (string, bool) {
	if e.ExternalPath != nil && *e.ExternalPath != "" {
		return t.external(*e.ExternalPath)
	}
	if t.indexInDataDir {
		dir, err := t.bucketDir(e.Partition, e.Bucket)
		if err != nil {
			return "", false
		}
		return path.Join(dir, e.FileName), true
	}
	return path.Join(t.path, "index", e.FileName), true
}

func (t *table) manifestPath(name string) string   { return manifest.FilePath(t.path, name) }
func (t *table) statisticsPath(name string) string { return path.Join(t.path, "statistics", name) }

// readManifestList reads a manifest list, checked against the size its
// snapshot records (manifest.Reader.ReadList).
func (t *table) readManifestList(ctx context.Context, name string, size *int64) ([]manifest.FileMeta, error) {
	return t.manifests.ReadList(ctx, manifest.List{Name: name, Size: size})
}

// readManifest reads a manifest, checked against its manifest list record
// (manifest.Reader.ReadManifest).
func (t *table) readManifest(ctx context.Context, m *manifest.FileMeta) ([]manifest.Entry, error) {
	return t.manifests.ReadManifest(ctx, m)
}

// dataManifests returns the manifests of a snapshot's base and delta lists,
// base first (ManifestList.readDataManifests).
func (t *table) dataManifests(ctx context.Context, s *snapshot.Snapshot) ([]manifest.FileMeta, error) {
	metas, err := t.manifests.ReadLists(ctx, manifest.DataLists(s)...)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: %w", s.ID, err)
	}
	return metas, nil
}

// liveEntries returns the merged entries of a snapshot: its live files
// (plus any DELETE whose ADD is not in its manifests), read concurrently
// and merged in manifest order (FileEntry.mergeEntries).
func (t *table) liveEntries(ctx context.Context, s *snapshot.Snapshot) ([]manifest.Entry, error) {
	return t.manifests.MergedEntries(ctx, s, nil)
}

// fileRef is a file to delete. size < 0 means unknown: it is looked up
// (and a missing file is then not counted).
type fileRef struct {
	path string
	size int64
	data bool
}

// deleter deletes files, or in a dry run only records them, into a Report.
type deleter struct {
	fio    storage.FileIO
	dryRun bool
	report *Report
	// progress, when set, is told about each file deleted under the
	// phase of the current delete call.
	progress Progress
	op       Operation
	phase    string

	mu   sync.Mutex
	seen map[string]bool
}

func newDeleter(fio storage.FileIO, r *Report, dryRun bool, progress Progress) *deleter {
	return &deleter{fio: fio, dryRun: dryRun, report: r, seen: map[string]bool{}, progress: serialize(progress), op: r.Operation}
}

// serialize makes p safe to call from several goroutines: calls are made
// one at a time, as Progress promises.
func serialize(p Progress) Progress {
	if p == nil {
		return nil
	}
	var mu sync.Mutex
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		p(e)
	}
}

// delete removes files concurrently; each file is deleted at most once per
// deleter. Failures are recorded in the report and do not stop the others
// (Java's deleteQuietly); only a cancelled context is returned. phase names
// the work for progress events.
func (d *deleter) delete(ctx context.Context, phase string, files []fileRef) error {
	return d.run(ctx, phase, files, ioParallelism, false)
}

// deleteInOrder deletes files one at a time in order and stops at the
// first that cannot be deleted (recorded in the report and returned): a
// snapshot whose deletion failed must stay listed, and so must every
// younger one.
func (d *deleter) deleteInOrder(ctx context.Context, phase string, files []fileRef) error {
	return d.run(ctx, phase, files, 1, true)
}

func (d *deleter) run(ctx context.Context, phase string, files []fileRef, workers int, stopAtFailure bool) error {
	d.phase = phase
	d.mu.Lock()
	todo := files[:0:0]
	for _, f := range files {
		if !d.seen[f.path] {
			d.seen[f.path] = true
			todo = append(todo, f)
		}
	}
	d.mu.Unlock()
	var done atomic.Int64
	return parallel.ForEach(ctx, workers, len(todo), func(ctx context.Context, i int) error {
		f := todo[i]
		if f.size < 0 {
			info, err := d.fio.Stat(ctx, f.path)
			switch {
			case errors.Is(err, storage.ErrNotExist):
				return nil
			case err != nil:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				f.size = 0
			default:
				f.size = info.Size
			}
		}
		if !d.dryRun {
			if err := d.fio.Delete(ctx, f.path); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				d.report.failed(f.path, err)
				if stopAtFailure {
					return err
				}
				return nil
			}
		}
		d.report.removed(f.path, f.size, f.data)
		if d.progress != nil {
			d.progress(Event{Operation: d.op, Phase: d.phase, Done: int(done.Add(1)), Total: len(todo)})
		}
		return nil
	})
}

// removeEmptyDirs tries to remove the given bucket directories and then
// their partition directories up to the data root, deepest first; a
// directory that is not empty stays (FileDeletionBase.cleanEmptyDirectories).
// On object stores directories do not exist and this is a no-op.
func (t *table) removeEmptyDirs(ctx context.Context, bucketDirs map[string]bool) {
	root := t.dataRoot()
	level := map[string]bool{}
	for d := range bucketDirs {
		if t.fio.Delete(ctx, d) == nil {
			level[path.Dir(d)] = true
		}
	}
	for range t.partFields {
		next := map[string]bool{}
		for d := range level {
			if d == root || !strings.HasPrefix(d, root+"/") {
				continue
			}
			if infos, err := t.fio.List(ctx, d, false); err == nil && len(infos) == 0 && t.fio.Delete(ctx, d) == nil {
				next[path.Dir(d)] = true
			}
		}
		level = next
	}
}
