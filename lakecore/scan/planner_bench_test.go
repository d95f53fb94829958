package scan_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// benchTable writes a table of files live files in manifests manifests
// (spread over 10 day partitions, value stats of 5 columns as a Java writer
// stores them) and returns its latest snapshot.
func benchTable(b *testing.B, fio storage.FileIO, tablePath string, manifests, perManifest int) *snapshot.Snapshot {
	b.Helper()
	ctx := context.Background()
	fields := []types.DataField{
		{Name: "day", Type: types.StringType()},
		{Name: "id", Type: types.BigIntType()},
		{Name: "a", Type: types.IntType()},
		{Name: "b", Type: types.StringType()},
		{Name: "c", Type: types.DoubleType()},
	}
	s, err := schema.NewManager(fio, tablePath).Create(ctx, schema.NewTableSchema(fields, []string{"day"}, nil, nil))
	if err != nil {
		b.Fatal(err)
	}
	valueTypes := make([]types.DataType, len(fields))
	for i, f := range fields {
		valueTypes[i] = f.Type
	}
	partTypes := []types.DataType{types.StringType()}
	created := int64(1_700_000_000_000)
	source := int32(0)
	zero := int64(0)
	var metas []manifest.FileMeta
	for m := range manifests {
		day := fmt.Sprintf("2024-01-%02d", m%10+1)
		part, err := binrow.Serialize(partTypes, []any{day})
		if err != nil {
			b.Fatal(err)
		}
		mins, err := binrow.Serialize(valueTypes, []any{day, int64(m * 1000), int32(0), "aaaa", 0.5})
		if err != nil {
			b.Fatal(err)
		}
		maxs, err := binrow.Serialize(valueTypes, []any{day, int64(m*1000 + 999), int32(1000), "zzzz", 99.5})
		if err != nil {
			b.Fatal(err)
		}
		nulls := []*int64{&zero, &zero, &zero, &zero, &zero}
		entries := make([]manifest.Entry, perManifest)
		for i := range entries {
			entries[i] = manifest.Entry{Kind: manifest.FileKindAdd, Partition: part, TotalBuckets: -1, File: manifest.DataFileMeta{
				FileName: "data-" + uuid.NewString() + "-0.parquet", FileSize: 128 << 20, RowCount: 1_000_000,
				MinKey: binrow.EmptyRow, MaxKey: binrow.EmptyRow, KeyStats: manifest.EmptyStats(),
				ValueStats:        manifest.SimpleStats{MinValues: mins, MaxValues: maxs, NullCounts: nulls},
				MinSequenceNumber: int64(i) * 1_000_000, MaxSequenceNumber: int64(i+1)*1_000_000 - 1,
				SchemaID: s.ID, ExtraFiles: []string{}, CreationTimeMillis: &created, DeleteRowCount: &zero, FileSource: &source,
			}}
		}
		meta, err := manifest.WriteManifest(ctx, fio, tablePath, entries, partTypes, s.ID, manifest.Codec{})
		if err != nil {
			b.Fatal(err)
		}
		metas = append(metas, meta)
	}
	base, baseSize, err := manifest.WriteManifestList(ctx, fio, tablePath, metas[:len(metas)-1], manifest.Codec{})
	if err != nil {
		b.Fatal(err)
	}
	delta, deltaSize, err := manifest.WriteManifestList(ctx, fio, tablePath, metas[len(metas)-1:], manifest.Codec{})
	if err != nil {
		b.Fatal(err)
	}
	total := int64(manifests*perManifest) * 1_000_000
	snap := &snapshot.Snapshot{Version: 3, ID: 1, SchemaID: s.ID, BaseManifestList: base, BaseManifestListSize: &baseSize,
		DeltaManifestList: delta, DeltaManifestListSize: &deltaSize, CommitUser: "bench", CommitIdentifier: 1,
		CommitKind: snapshot.CommitAppend, TimeMillis: created, TotalRecordCount: &total}
	sm := snapshot.NewManager(fio, tablePath)
	if err := sm.Commit(ctx, snap); err != nil {
		b.Fatal(err)
	}
	latest, err := sm.Latest(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return latest
}

// BenchmarkPlanFull100kFiles is the planning benchmark of issue #2: a full
// plan of 100,000 live files in 1,000 manifests (target: under 1 s).
func BenchmarkPlanFull100kFiles(b *testing.B) {
	fio, err := storage.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	snap := benchTable(b, fio, "db.db/big", 1000, 100)
	b.ReportAllocs()
	// The machine is shared; CPU time per plan is the steadier figure.
	cpu0 := cputime.Process()
	for b.Loop() {
		plan, err := scan.NewPlanner(fio, "db.db/big").Full(context.Background(), snap, nil)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(fileNames(plan)); n != 100_000 {
			b.Fatalf("%d files", n)
		}
	}
	b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// BenchmarkPlanFiltered100kFiles plans one of the 10 partitions of the same
// table: 900 manifests are skipped by their partition stats, unread.
func BenchmarkPlanFiltered100kFiles(b *testing.B) {
	fio, err := storage.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	snap := benchTable(b, fio, "db.db/big", 1000, 100)
	f := partitionIn(b, fio, "db.db/big", map[string][]any{"day": {"2024-01-03"}})
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		plan, err := scan.NewPlanner(fio, "db.db/big").Full(context.Background(), snap, f)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(fileNames(plan)); n != 10_000 {
			b.Fatalf("%d files", n)
		}
	}
	b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}
