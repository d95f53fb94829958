// Package scantest builds small Paimon append tables for tests of the scan
// and read packages and the lakecore facade: real Parquet data files, Avro
// manifests, manifest lists and snapshot files, laid out as Java lays them
// out, without going through a writer or committer. It never reads a
// table back, so that tests of the readers stay independent of it.
package scantest

import (
	"context"
	"fmt"
	"path"
	"testing"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Table builds one table. Its methods fail the test on any error. Not safe
// for concurrent use.
type Table struct {
	T      testing.TB
	FIO    storage.FileIO
	Path   string
	Schema *schema.TableSchema
	// Now is the commit time of the next snapshot (epoch ms); it is
	// incremented by 1000 after each commit.
	Now int64

	snapshots *snapshot.Manager
	// metas are the manifests of the latest snapshot (base + delta).
	metas    []manifest.FileMeta
	total    int64
	nextSeq  map[string]int64 // per partition bytes + bucket
	commitID int64
	dvs      map[string]dvOf // deletion vectors by data file name
}

// New creates the table at tablePath with the given columns (ids assigned
// as Java assigns them), partition keys and options.
func New(t testing.TB, fio storage.FileIO, tablePath string, fields []types.DataField, partitionKeys []string, options map[string]string) *Table {
	t.Helper()
	s, err := schema.NewManager(fio, tablePath).Create(context.Background(),
		schema.NewTableSchema(fields, partitionKeys, options, nil))
	if err != nil {
		t.Fatalf("scantest: create table %s: %v", tablePath, err)
	}
	return &Table{T: t, FIO: fio, Path: tablePath, Schema: s, Now: 1_700_000_000_000,
		snapshots: snapshot.NewManager(fio, tablePath), nextSeq: map[string]int64{}}
}

// Snapshots returns the table's snapshot manager.
func (tb *Table) Snapshots() *snapshot.Manager { return tb.snapshots }

func (tb *Table) partTypes() []types.DataType {
	pf := tb.Schema.PartitionFields()
	out := make([]types.DataType, len(pf))
	for i, f := range pf {
		out[i] = f.Type
	}
	return out
}

// PartitionRow serializes partition values as the manifest stores them.
func (tb *Table) PartitionRow(values []any) []byte {
	tb.T.Helper()
	b, err := binrow.Serialize(tb.partTypes(), values)
	if err != nil {
		tb.T.Fatalf("scantest: partition %v: %v", values, err)
	}
	return b
}

// WriteFile writes rows (in schema order, partition columns included) as
// a Parquet data file of the partition and bucket and returns its ADD
// entry, with sequence numbers continuing those of the bucket.
func (tb *Table) WriteFile(partition []any, bucket int32, rows [][]any) manifest.Entry {
	tb.T.Helper()
	ctx := context.Background()
	part := tb.PartitionRow(partition)
	dir := tb.Path
	if pf := tb.Schema.PartitionFields(); len(pf) > 0 {
		pp, err := binrow.PartitionPath(pf, partition, binrow.DefaultPartitionOptions())
		if err != nil {
			tb.T.Fatal(err)
		}
		dir = path.Join(dir, pp)
	}
	name := "data-" + uuid.NewString() + "-0.parquet"
	p := path.Join(dir, fmt.Sprintf("bucket-%d", bucket), name)
	w, err := tb.FIO.Create(ctx, p)
	if err != nil {
		tb.T.Fatal(err)
	}
	dw, err := datafile.NewWriter(w, tb.Schema.Fields, datafile.WriterOptions{})
	if err != nil {
		tb.T.Fatal(err)
	}
	for _, r := range rows {
		if err := dw.Write(r); err != nil {
			tb.T.Fatalf("scantest: write row %v: %v", r, err)
		}
	}
	st, err := dw.Close()
	if err != nil {
		tb.T.Fatal(err)
	}
	size := w.Written()
	if err := w.Close(); err != nil {
		tb.T.Fatal(err)
	}
	key := fmt.Sprintf("%x/%d", part, bucket)
	seq := tb.nextSeq[key]
	tb.nextSeq[key] = seq + st.RowCount
	created := tb.Now
	source := int32(0)
	delRows := int64(0)
	total := int32(-1)
	if b, _ := tb.Schema.Opts().Bucket(); b > 0 {
		total = int32(b)
	}
	return manifest.Entry{
		Kind: manifest.FileKindAdd, Partition: part, Bucket: bucket, TotalBuckets: total,
		File: manifest.DataFileMeta{
			FileName: name, FileSize: size, RowCount: st.RowCount,
			MinKey: binrow.EmptyRow, MaxKey: binrow.EmptyRow,
			KeyStats: manifest.EmptyStats(), ValueStats: manifest.EmptyStats(),
			MinSequenceNumber: seq, MaxSequenceNumber: seq + st.RowCount - 1,
			SchemaID: tb.Schema.ID, ExtraFiles: []string{}, CreationTimeMillis: &created,
			DeleteRowCount: &delRows, FileSource: &source, ValueStatsCols: &[]string{},
		},
	}
}

// Delete returns the DELETE entry cancelling add.
func Delete(add manifest.Entry) manifest.Entry {
	d := add
	d.Kind = manifest.FileKindDelete
	return d
}

// Append writes rows as one data file of partition (bucket 0) and commits
// it as an APPEND snapshot.
func (tb *Table) Append(partition []any, rows ...[]any) *snapshot.Snapshot {
	tb.T.Helper()
	return tb.Commit(snapshot.CommitAppend, tb.WriteFile(partition, 0, rows))
}

// Commit writes entries as one delta manifest and commits a snapshot of
// kind: the base list holds every manifest of the previous snapshot.
func (tb *Table) Commit(kind snapshot.CommitKind, entries ...manifest.Entry) *snapshot.Snapshot {
	tb.T.Helper()
	ctx := context.Background()
	var delta []manifest.FileMeta
	var deltaRows int64
	if len(entries) > 0 {
		delta = append(delta, tb.WriteManifest(entries))
	}
	for _, e := range entries {
		if e.Kind == manifest.FileKindAdd {
			deltaRows += e.File.RowCount
		} else {
			deltaRows -= e.File.RowCount
		}
	}
	baseName, baseSize, err := manifest.WriteManifestList(ctx, tb.FIO, tb.Path, tb.metas, manifest.Codec{})
	if err != nil {
		tb.T.Fatal(err)
	}
	deltaName, deltaSize, err := manifest.WriteManifestList(ctx, tb.FIO, tb.Path, delta, manifest.Codec{})
	if err != nil {
		tb.T.Fatal(err)
	}
	latest, _, err := tb.snapshots.LatestID(ctx)
	if err != nil {
		tb.T.Fatal(err)
	}
	tb.total += deltaRows
	tb.commitID++
	total, dr := tb.total, deltaRows
	s := &snapshot.Snapshot{
		Version: 3, ID: latest + 1, SchemaID: tb.Schema.ID,
		BaseManifestList: baseName, BaseManifestListSize: &baseSize,
		DeltaManifestList: deltaName, DeltaManifestListSize: &deltaSize,
		CommitUser: "scantest", CommitIdentifier: tb.commitID, CommitKind: kind,
		TimeMillis: tb.Now, TotalRecordCount: &total, DeltaRecordCount: &dr,
	}
	if len(tb.dvs) > 0 {
		name, err := tb.writeIndexManifest(ctx)
		if err != nil {
			tb.T.Fatal(err)
		}
		s.IndexManifest = &name
	}
	if err := tb.snapshots.Commit(ctx, s); err != nil {
		tb.T.Fatal(err)
	}
	tb.metas = append(tb.metas, delta...)
	tb.Now += 1000
	return s
}

// WriteManifest writes entries as one manifest file and returns its
// manifest-list record, with exact partition stats.
func (tb *Table) WriteManifest(entries []manifest.Entry) manifest.FileMeta {
	tb.T.Helper()
	meta, err := manifest.WriteManifest(context.Background(), tb.FIO, tb.Path, entries, tb.partTypes(), tb.Schema.ID, manifest.Codec{})
	if err != nil {
		tb.T.Fatal(err)
	}
	return meta
}
