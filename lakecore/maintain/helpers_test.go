package maintain_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// fakeTable builds a table file by file with manifest, snapshot and
// datafile directly, so that tests control exactly which manifests each
// snapshot shares. Schema: id INT, p STRING; partitioned by p when
// partitioned is set. Data files are real Parquet files.
type fakeTable struct {
	t      testing.TB
	root   string // warehouse directory on disk
	fio    *storage.Local
	path   string // table path in the warehouse
	schema *schema.TableSchema
	part   bool

	live      []manifest.Entry // live files in merge order
	lastBase  []manifest.FileMeta
	lastDelta []manifest.FileMeta
	latest    *snapshot.Snapshot
	nextSeq   int64
	files     map[string]manifest.Entry // by file name: the ADD entry

	// indexManifest and statistics are set on the snapshots committed
	// from now on.
	indexManifest, statistics *string
}

func newFakeTable(t testing.TB, partitioned bool, options map[string]string) *fakeTable {
	t.Helper()
	root := t.TempDir()
	fio, err := storage.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeTable{t: t, root: root, fio: fio, path: "db.db/t", part: partitioned, files: map[string]manifest.Entry{}}
	var keys []string
	if partitioned {
		keys = []string{"p"}
	}
	s := schema.NewTableSchema([]types.DataField{
		{Name: "id", Type: types.IntType()},
		{Name: "p", Type: types.StringType()},
	}, keys, options, nil)
	if f.schema, err = schema.NewManager(fio, f.path).Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeTable) partTypes() []types.DataType {
	if f.part {
		return []types.DataType{types.StringType()}
	}
	return nil
}

func (f *fakeTable) partBytes(p string) []byte {
	if !f.part {
		return binrow.EmptyRow
	}
	b, err := binrow.Serialize(f.partTypes(), []any{p})
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *fakeTable) bucketDir(p string) string {
	if f.part {
		return path.Join(f.path, "p="+p, "bucket-0")
	}
	return path.Join(f.path, "bucket-0")
}

// dataFile writes a Parquet file with ids in partition p and returns its ADD
// entry (unaware bucket). name "" picks a fresh name.
func (f *fakeTable) dataFile(name, p string, ids ...int32) manifest.Entry {
	f.t.Helper()
	if name == "" {
		name = "data-" + uuid.NewString() + "-0.parquet"
	}
	var buf bytes.Buffer
	w, err := datafile.NewWriter(&buf, f.schema.Fields, datafile.WriterOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, id := range ids {
		if err := w.Write([]any{id, p}); err != nil {
			f.t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		f.t.Fatal(err)
	}
	ctx := context.Background()
	if err := f.fio.WriteFile(ctx, path.Join(f.bucketDir(p), name), buf.Bytes()); err != nil {
		f.t.Fatal(err)
	}
	created := int64(1700000000000)
	zero := int64(0)
	src := int32(0)
	meta := manifest.DataFileMeta{
		FileName: name, FileSize: int64(buf.Len()), RowCount: int64(len(ids)),
		MinKey: make([]byte, 12), MaxKey: make([]byte, 12), KeyStats: manifest.EmptyStats(), ValueStats: manifest.EmptyStats(),
		MinSequenceNumber: f.nextSeq, MaxSequenceNumber: f.nextSeq + int64(len(ids)) - 1, SchemaID: f.schema.ID,
		ExtraFiles: []string{}, CreationTimeMillis: &created, DeleteRowCount: &zero, FileSource: &src,
		ValueStatsCols: &[]string{},
	}
	f.nextSeq += int64(len(ids))
	e := manifest.Entry{Kind: manifest.FileKindAdd, Partition: f.partBytes(p), Bucket: 0, TotalBuckets: -1, File: meta}
	f.files[name] = e
	return e
}

// commit writes a snapshot whose delta adds adds and deletes the live files
// named in deletes. With mergeBase the base manifest list is one new
// manifest of the previous state (a full manifest compaction), otherwise it
// is the previous base plus the previous delta manifests, as Java does
// without merging.
func (f *fakeTable) commit(kind snapshot.CommitKind, timeMillis int64, mergeBase bool, adds []manifest.Entry, deletes ...string) *snapshot.Snapshot {
	f.t.Helper()
	ctx := context.Background()
	var delta []manifest.Entry
	for _, name := range deletes {
		e, ok := f.files[name]
		if !ok {
			f.t.Fatalf("delete of unknown file %s", name)
		}
		e.Kind = manifest.FileKindDelete
		delta = append(delta, e)
	}
	delta = append(delta, adds...)
	var base []manifest.FileMeta
	if mergeBase && len(f.live) > 0 {
		m, err := manifest.WriteManifest(ctx, f.fio, f.path, f.live, f.partTypes(), f.schema.ID, manifest.Codec{})
		if err != nil {
			f.t.Fatal(err)
		}
		base = []manifest.FileMeta{m}
	} else {
		base = append(slices.Clone(f.lastBase), f.lastDelta...)
	}
	baseName, baseSize, err := manifest.WriteManifestList(ctx, f.fio, f.path, base, manifest.Codec{})
	if err != nil {
		f.t.Fatal(err)
	}
	var deltaMetas []manifest.FileMeta
	if len(delta) > 0 {
		m, err := manifest.WriteManifest(ctx, f.fio, f.path, delta, f.partTypes(), f.schema.ID, manifest.Codec{})
		if err != nil {
			f.t.Fatal(err)
		}
		deltaMetas = []manifest.FileMeta{m}
	}
	deltaName, deltaSize, err := manifest.WriteManifestList(ctx, f.fio, f.path, deltaMetas, manifest.Codec{})
	if err != nil {
		f.t.Fatal(err)
	}
	all := append(slices.Clone(f.live), delta...)
	if f.live, err = manifest.MergeEntries(all); err != nil {
		f.t.Fatal(err)
	}
	var id int64 = 1
	if f.latest != nil {
		id = f.latest.ID + 1
	}
	var total int64
	for _, e := range f.live {
		total += e.File.RowCount
	}
	s := &snapshot.Snapshot{
		Version: 3, ID: id, SchemaID: f.schema.ID,
		BaseManifestList: baseName, BaseManifestListSize: &baseSize,
		DeltaManifestList: deltaName, DeltaManifestListSize: &deltaSize,
		CommitUser: "test", CommitIdentifier: id, CommitKind: kind, TimeMillis: timeMillis,
		TotalRecordCount: &total, IndexManifest: f.indexManifest, Statistics: f.statistics,
	}
	if err := snapshot.NewManager(f.fio, f.path).Commit(ctx, s); err != nil {
		f.t.Fatal(err)
	}
	f.lastBase, f.lastDelta, f.latest = base, deltaMetas, s
	return s
}

// tag writes tag/tag-<name> as a copy of snapshot id.
func (f *fakeTable) tag(name string, id int64) {
	f.t.Helper()
	ctx := context.Background()
	data, err := f.fio.ReadFile(ctx, snapshot.NewManager(f.fio, f.path).Path(id))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.fio.WriteFile(ctx, snapshot.NewTagManager(f.fio, f.path).Path(name), data); err != nil {
		f.t.Fatal(err)
	}
}

// consumer writes consumer/consumer-<id>.
func (f *fakeTable) consumer(id string, next int64) {
	f.t.Helper()
	if err := snapshot.NewConsumerManager(f.fio, f.path).Put(context.Background(), id, snapshot.Consumer{NextSnapshot: next}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeTable) tableDir() string { return filepath.Join(f.root, filepath.FromSlash(f.path)) }

// files returns the table's files, relative to the table directory.
func (f *fakeTable) filesOnDisk() []string { return fixturetest.ListFiles(f.t, f.tableDir()) }

// manifestFiles returns the manifest lists and manifests a snapshot refers
// to (both lists and the manifests in them).
func (f *fakeTable) manifestFiles(s *snapshot.Snapshot) []string {
	f.t.Helper()
	ctx := context.Background()
	out := []string{s.BaseManifestList, s.DeltaManifestList}
	for _, l := range []string{s.BaseManifestList, s.DeltaManifestList} {
		metas, err := manifest.ReadFileMetas(ctx, f.fio, f.path, l)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, m := range metas {
			out = append(out, m.FileName)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// setOld sets the modification time of every file under the table to t.
func setOld(tb testing.TB, dir string, t time.Time) {
	tb.Helper()
	for _, p := range fixturetest.ListFiles(tb, dir) {
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), t, t); err != nil {
			tb.Fatal(err)
		}
	}
}

func names(es ...manifest.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.File.FileName
	}
	sort.Strings(out)
	return out
}

func diff(want, got []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			b.WriteString("\n  missing " + w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			b.WriteString("\n  unexpected " + g)
		}
	}
	return b.String()
}

// writeIndex writes an index file of partition "a", bucket 0 and an index
// manifest listing it, and makes the following snapshots use them. The
// file is in index/, or in the bucket directory when the table has
// index-file-in-data-file-dir.
func (f *fakeTable) writeIndex(indexFile string) (manifestName string) {
	f.t.Helper()
	ctx := context.Background()
	if err := f.fio.WriteFile(ctx, f.indexFilePath(indexFile), []byte("index")); err != nil {
		f.t.Fatal(err)
	}
	data, err := manifest.EncodeIndexEntries([]manifest.IndexEntry{{
		Kind: manifest.FileKindAdd, Partition: f.partBytes("a"), Bucket: 0, IndexType: "HASH",
		FileName: indexFile, FileSize: 5, RowCount: 1,
	}}, manifest.Codec{})
	if err != nil {
		f.t.Fatal(err)
	}
	manifestName = "index-manifest-" + uuid.NewString() + "-0"
	if err := f.fio.WriteFile(ctx, path.Join(f.path, "manifest", manifestName), data); err != nil {
		f.t.Fatal(err)
	}
	f.indexManifest = &manifestName
	return manifestName
}

// indexFilePath is where writeIndex puts an index file.
func (f *fakeTable) indexFilePath(name string) string {
	if v, _ := f.schema.Opts().Get("index-file-in-data-file-dir"); v == "true" {
		return path.Join(f.bucketDir("a"), name)
	}
	return path.Join(f.path, "index", name)
}

// writeStatistics writes a statistics file and makes the following
// snapshots use it.
func (f *fakeTable) writeStatistics(name string) {
	f.t.Helper()
	if err := f.fio.WriteFile(context.Background(), path.Join(f.path, "statistics", name), []byte("{}")); err != nil {
		f.t.Fatal(err)
	}
	f.statistics = &name
}

// lakeTable is a table written with lakecore's own writer and committer.
type lakeTable struct {
	t     testing.TB
	root  string
	fio   *storage.Local
	tb    *lakecore.Table
	c     *commit.Committer
	ident int64
}

func newLakeTable(t testing.TB, spec lakecore.TableSpec) *lakeTable {
	t.Helper()
	root := t.TempDir()
	fio, err := storage.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := lakecore.NewCatalog(fio).CreateTable(context.Background(), "db", "t", spec)
	if err != nil {
		t.Fatal(err)
	}
	return &lakeTable{t: t, root: root, fio: fio, tb: tb, c: tb.NewCommitter("writer")}
}

func (l *lakeTable) dir() string { return filepath.Join(l.root, "db.db", "t") }

// appendRows writes rows as one APPEND snapshot.
func (l *lakeTable) appendRows(rows ...[]any) *snapshot.Snapshot {
	l.t.Helper()
	s, err := appendWith(context.Background(), l.tb, l.c, &l.ident, rows)
	if err != nil {
		l.t.Fatal(err)
	}
	return s
}

func appendWith(ctx context.Context, tb *lakecore.Table, c *commit.Committer, ident *int64, rows [][]any) (*snapshot.Snapshot, error) {
	w, err := tb.NewWriter(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if err := w.Write(ctx, r); err != nil {
			return nil, err
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		return nil, err
	}
	*ident++
	return c.Commit(ctx, *ident, msgs)
}

// readAll returns the rows of snapshot id (0 = latest) in read order.
func (l *lakeTable) readAll(id int64) [][]any {
	l.t.Helper()
	rows, err := l.tb.ReadAll(context.Background(), id)
	if err != nil {
		l.t.Fatal(err)
	}
	return rows
}

func (l *lakeTable) latest() *snapshot.Snapshot {
	l.t.Helper()
	s, err := l.tb.Snapshots().Latest(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	return s
}

// live returns the live entries of the latest snapshot.
func (l *lakeTable) live() []manifest.Entry {
	l.t.Helper()
	es, err := l.tb.Planner().LiveEntries(context.Background(), l.latest(), nil)
	if err != nil {
		l.t.Fatal(err)
	}
	return es
}

// rowKeys renders rows for multiset comparison.
func rowKeys(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r...)
	}
	return out
}

func sortedKeys(rows [][]any) []string {
	k := rowKeys(rows)
	sort.Strings(k)
	return k
}

func sorted(ss ...string) []string {
	out := slices.Clone(ss)
	sort.Strings(out)
	return out
}
