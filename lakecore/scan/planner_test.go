package scan_test

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan/scantest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

const fixedBucketFixture = "cpp-java11-append-fixed-bucket-complex-types"
const fixedBucketTable = "default.db/append_complex_data"

// TestPlannerFixtureFixedBucket plans the 1.1 fixed-bucket fixture: live
// files, splits per partition and bucket, deltas and partition filters.
func TestPlannerFixtureFixedBucket(t *testing.T) {
	fio := fixtureFIO(t, fixedBucketFixture)
	p := scan.NewPlanner(fio, fixedBucketTable)
	sm := snapshot.NewManager(fio, fixedBucketTable)
	snap4, err := sm.Get(bg, 4)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Full(bg, snap4, nil)
	if err != nil {
		t.Fatal(err)
	}
	type splitSummary struct {
		part          any
		bucket, total int32
		files         []string
		rows          int64
	}
	summarize := func(plan *scan.Plan) []splitSummary {
		var out []splitSummary
		for _, s := range plan.Splits {
			ss := splitSummary{part: s.PartitionValues[0], bucket: s.Bucket, total: s.TotalBuckets, rows: s.RowCount()}
			for _, f := range s.Files {
				ss.files = append(ss.files, f.FileName[:14])
			}
			out = append(out, ss)
		}
		slices.SortFunc(out, func(a, b splitSummary) int {
			return strings.Compare(a.files[0], b.files[0])
		})
		return out
	}
	got := summarize(plan)
	want := []splitSummary{
		{int32(20), 0, 2, []string{"data-ac0894ca-"}, 1},
		{int32(20), 1, 2, []string{"data-e0a6a424-"}, 1},
		{int32(10), 0, 2, []string{"data-f8754699-"}, 6},
	}
	if len(got) != len(want) {
		t.Fatalf("splits %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].part != want[i].part || got[i].bucket != want[i].bucket || got[i].total != want[i].total ||
			!slices.Equal(got[i].files, want[i].files) || got[i].rows != want[i].rows {
			t.Errorf("split %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if plan.RowCount() != *snap4.TotalRecordCount {
		t.Errorf("plan rows %d, totalRecordCount %d", plan.RowCount(), *snap4.TotalRecordCount)
	}

	// Deltas: the ADD files of each snapshot's delta list.
	for id, rows := range map[int64]int64{1: 3, 2: 4, 3: 1, 4: 6} {
		s, err := sm.Get(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		d, err := p.Delta(bg, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.RowCount() != rows {
			t.Errorf("delta of snapshot %d: %d rows, want %d", id, d.RowCount(), rows)
		}
	}

	// Partition filters.
	for _, c := range []struct {
		name    string
		allowed []any
		parts   []int32 // partitions of the splits
		rows    int64
	}{
		{"f1=10", []any{int32(10)}, []int32{10}, 6},
		{"f1=20 as Go int", []any{20}, []int32{20, 20}, 2},
		{"f1 IN (10, 20)", []any{int32(10), int64(20)}, []int32{10, 20, 20}, 8},
		{"f1=30", []any{int32(30)}, nil, 0},
		{"f1 IS NULL", []any{nil}, nil, 0},
		{"empty IN list", []any{}, nil, 0},
	} {
		f := partitionIn(t, fio, fixedBucketTable, map[string][]any{"f1": c.allowed})
		plan, err := p.Full(bg, snap4, f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var parts []int32
		for _, s := range plan.Splits {
			parts = append(parts, s.PartitionValues[0].(int32))
		}
		slices.Sort(parts)
		if plan.RowCount() != c.rows || !slices.Equal(parts, c.parts) {
			t.Errorf("%s: %d rows in partitions %v, want %d in %v", c.name, plan.RowCount(), parts, c.rows, c.parts)
		}
	}
	keys := []types.DataField{{Name: "f1", Type: types.IntType().NotNull()}}
	for name, allowed := range map[string]map[string][]any{
		"unknown key":  {"f2": {int32(1)}},
		"wrong type":   {"f1": {"10"}},
		"out of range": {"f1": {int64(1) << 40}},
	} {
		if _, err := partition.In(keys, allowed); !errors.Is(err, scan.ErrInvalidFilter) {
			t.Errorf("%s: %v, want ErrInvalidFilter", name, err)
		}
	}
	for name, keys := range map[string][]types.DataField{
		"keys disagree":   {{Name: "f9", Type: types.IntType()}},
		"keys wrong type": {{Name: "f1", Type: types.BigIntType()}},
	} {
		f, err := partition.In(keys, map[string][]any{keys[0].Name: {int64(1)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Full(bg, snap4, f); !errors.Is(err, scan.ErrInvalidFilter) {
			t.Errorf("%s: %v, want ErrInvalidFilter", name, err)
		}
	}
	f, err := partition.In(keys, map[string][]any{"f1": {int32(10)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Full(bg, snap4, f); err != nil {
		t.Errorf("filter with the table's keys: %v", err)
	}
}

// TestPlannerMerge checks the ordered ADD/DELETE merge, the order of splits
// and of files within a split, and the delta of a compaction.
func TestPlannerMerge(t *testing.T) {
	fio := tempFIO(t)
	tb := newPartitioned(t, fio, nil)
	p := scan.NewPlanner(fio, tb.Path)

	a1 := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 0, 3))
	tb.Commit(snapshot.CommitAppend, a1)
	b1 := tb.WriteFile([]any{"b"}, 0, rowsOf("b", 0, 2))
	tb.Commit(snapshot.CommitAppend, b1)
	// Two files of a, listed against their sequence order.
	a2 := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 3, 1))
	a3 := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 4, 1))
	s3 := tb.Commit(snapshot.CommitAppend, a3, a2)

	full, err := p.Full(bg, s3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fileNames(full), []string{a1.File.FileName, a2.File.FileName, a3.File.FileName, b1.File.FileName}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v (split a before b, by sequence number)", got, want)
	}

	// A compaction of a: DELETE a1..a3, ADD c.
	c := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 0, 5))
	s4 := tb.Commit(snapshot.CommitCompact, scantest.Delete(a1), scantest.Delete(a2), scantest.Delete(a3), c)
	full, err = p.Full(bg, s4, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Merge order: b1 survives from the base, c is added last.
	if got, want := fileNames(full), []string{b1.File.FileName, c.File.FileName}; !slices.Equal(got, want) {
		t.Errorf("after compaction: files %v, want %v", got, want)
	}
	live, err := p.LiveEntries(bg, s4, nil)
	if err != nil || len(live) != 2 || live[0].Kind != manifest.FileKindAdd || live[1].File.FileName != c.File.FileName {
		t.Errorf("LiveEntries: %v %v", live, err)
	}
	delta, err := p.Delta(bg, s4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fileNames(delta); !slices.Equal(got, []string{c.File.FileName}) {
		t.Errorf("delta of the compaction: %v", got)
	}

	// A DELETE without its ADD (the file's manifest is not listed) is
	// dropped, as Java's scan drops it.
	ghost := tb.WriteFile([]any{"b"}, 0, rowsOf("b", 9, 1))
	s5 := tb.Commit(snapshot.CommitOverwrite, scantest.Delete(ghost))
	full, err = p.Full(bg, s5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fileNames(full); len(got) != 2 {
		t.Errorf("an unmatched DELETE changed the plan: %v", got)
	}

	// Adding a live file again is corrupt metadata.
	s6 := tb.Commit(snapshot.CommitAppend, b1)
	if _, err := p.Full(bg, s6, nil); !errors.Is(err, manifest.ErrDuplicateFile) {
		t.Errorf("duplicate ADD: %v, want ErrDuplicateFile", err)
	}
}

// TestPlannerDeterministic plans many manifests, read concurrently, twice:
// the files come out in commit order both times.
func TestPlannerDeterministic(t *testing.T) {
	fio := tempFIO(t)
	tb := newPartitioned(t, fio, nil)
	var want []string
	var last *snapshot.Snapshot
	for i := range 40 {
		e := tb.WriteFile([]any{"p"}, 0, rowsOf("p", i, 1))
		want = append(want, e.File.FileName)
		last = tb.Commit(snapshot.CommitAppend, e)
	}
	for range 2 {
		plan, err := scan.NewPlanner(fio, tb.Path).Full(bg, last, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := fileNames(plan); !slices.Equal(got, want) {
			t.Fatalf("files %v, want %v", got, want)
		}
	}
}

// TestPlannerPartitionPruning checks that manifests whose partition stats
// exclude the filter are not read at all.
func TestPlannerPartitionPruning(t *testing.T) {
	fio := tempFIO(t)
	tb := newPartitioned(t, fio, nil)
	metas := map[string]manifest.FileMeta{}
	var entries = map[string]manifest.Entry{}
	for _, part := range []string{"a", "b", "c"} {
		e := tb.WriteFile([]any{part}, 0, rowsOf(part, 0, 2))
		entries[part] = e
		m := tb.WriteManifest([]manifest.Entry{e})
		metas[part] = m
	}
	// Commit the three manifests in one snapshot by hand-building it.
	s := commitManifests(t, tb, metas["a"], metas["b"], metas["c"])
	// Remove the manifests of a and c: a pruned manifest is never opened.
	for _, part := range []string{"a", "c"} {
		if err := fio.Delete(bg, path.Join(tb.Path, "manifest", metas[part].FileName)); err != nil {
			t.Fatal(err)
		}
	}
	p := scan.NewPlanner(fio, tb.Path)
	plan, err := p.Full(bg, s, partitionIn(t, fio, tb.Path, map[string][]any{"p": {"b"}}))
	if err != nil {
		t.Fatalf("filtered plan read a pruned manifest: %v", err)
	}
	if got := fileNames(plan); !slices.Equal(got, []string{entries["b"].File.FileName}) || plan.Splits[0].PartitionValues[0] != "b" {
		t.Errorf("filtered plan: %v", got)
	}
	_, err = p.Full(bg, s, nil)
	// Manifests are read concurrently: either missing one may be the one reported.
	if !errors.Is(err, storage.ErrNotExist) ||
		!(strings.Contains(err.Error(), metas["a"].FileName) || strings.Contains(err.Error(), metas["c"].FileName)) {
		t.Errorf("unfiltered plan over a missing manifest: %v", err)
	}
}

// commitManifests commits metas as the delta of a new snapshot whose base
// is empty.
func commitManifests(t *testing.T, tb *scantest.Table, metas ...manifest.FileMeta) *snapshot.Snapshot {
	t.Helper()
	base, baseSize, err := manifest.WriteManifestList(bg, tb.FIO, tb.Path, nil, manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	delta, deltaSize, err := manifest.WriteManifestList(bg, tb.FIO, tb.Path, metas, manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := tb.Snapshots().LatestID(bg)
	if err != nil {
		t.Fatal(err)
	}
	s := &snapshot.Snapshot{Version: 3, ID: id + 1, SchemaID: tb.Schema.ID, BaseManifestList: base, BaseManifestListSize: &baseSize,
		DeltaManifestList: delta, DeltaManifestListSize: &deltaSize, CommitUser: "test", CommitIdentifier: id + 1,
		CommitKind: snapshot.CommitAppend, TimeMillis: tb.Now}
	if err := tb.Snapshots().Commit(bg, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPlannerDeletionVectors attaches the deletion vectors of the
// snapshot's index manifest to the splits of their files.
func TestPlannerDeletionVectors(t *testing.T) {
	fio := tempFIO(t)
	tb := newPartitioned(t, fio, map[string]string{"deletion-vectors.enabled": "true"})
	e1 := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 0, 10))
	tb.Commit(snapshot.CommitAppend, e1)
	tb.DeleteRows(e1, 2, 3, 7)
	e2 := tb.WriteFile([]any{"b"}, 0, rowsOf("b", 0, 4))
	s2 := tb.Commit(snapshot.CommitAppend, e2)
	if s2.IndexManifest == nil {
		t.Fatal("no index manifest")
	}
	plan, err := scan.NewPlanner(fio, tb.Path).Full(bg, s2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.RowCount() != 10-3+4 {
		t.Errorf("plan reads %d rows, want 11", plan.RowCount())
	}
	for _, s := range plan.Splits {
		dv := s.DeletionVectors[e1.File.FileName]
		switch s.PartitionValues[0] {
		case "a":
			if dv == nil || !dv.IsDeleted(2) || dv.IsDeleted(4) || dv.Cardinality() != 3 {
				t.Errorf("split a: deletion vector %v", dv)
			}
		case "b":
			if s.DeletionVectors != nil {
				t.Errorf("split b has deletion vectors %v", s.DeletionVectors)
			}
		}
	}
}

// TestPlannerCorruptMetadata: files cut short or missing give errors that
// name them, never a shorter plan.
func TestPlannerCorruptMetadata(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, fio *storage.Local, tb *scantest.Table, s *snapshot.Snapshot) string // returns the file named
		is     error
	}{
		{"manifest cut short", func(t *testing.T, fio *storage.Local, tb *scantest.Table, s *snapshot.Snapshot) string {
			name := firstManifest(t, fio, tb, s.DeltaManifestList)
			truncate(t, fio, path.Join(tb.Path, "manifest", name), 0.6)
			return name
		}, scan.ErrCorruptTable},
		{"manifest list cut short", func(t *testing.T, fio *storage.Local, tb *scantest.Table, s *snapshot.Snapshot) string {
			truncate(t, fio, path.Join(tb.Path, "manifest", s.BaseManifestList), 0.8)
			return s.BaseManifestList
		}, scan.ErrCorruptTable},
		{"manifest missing", func(t *testing.T, fio *storage.Local, tb *scantest.Table, s *snapshot.Snapshot) string {
			name := firstManifest(t, fio, tb, s.DeltaManifestList)
			if err := fio.Delete(bg, path.Join(tb.Path, "manifest", name)); err != nil {
				t.Fatal(err)
			}
			return name
		}, storage.ErrNotExist},
		{"manifest garbage of the right size", func(t *testing.T, fio *storage.Local, tb *scantest.Table, s *snapshot.Snapshot) string {
			name := firstManifest(t, fio, tb, s.DeltaManifestList)
			p := path.Join(tb.Path, "manifest", name)
			data, err := fio.ReadFile(bg, p)
			if err != nil {
				t.Fatal(err)
			}
			for i := len(data) / 2; i < len(data); i++ {
				data[i] ^= 0x5a
			}
			if err := fio.WriteFile(bg, p, data); err != nil {
				t.Fatal(err)
			}
			return name
		}, manifest.ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			fio := tempFIO(t)
			tb := newPartitioned(t, fio, nil)
			tb.Append([]any{"a"}, rowsOf("a", 0, 3)...)
			s := tb.Append([]any{"b"}, rowsOf("b", 0, 3)...)
			named := c.damage(t, fio, tb, s)
			_, err := scan.NewPlanner(fio, tb.Path).Full(bg, s, nil)
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), named) {
				t.Errorf("got %v, want %v naming %s", err, c.is, named)
			}
		})
	}
}

func firstManifest(t *testing.T, fio storage.FileIO, tb *scantest.Table, list string) string {
	t.Helper()
	metas, err := manifest.ReadFileMetas(bg, fio, tb.Path, list)
	if err != nil || len(metas) == 0 {
		t.Fatalf("manifest list %s: %v", list, err)
	}
	return metas[0].FileName
}

func truncate(t *testing.T, fio storage.FileIO, p string, keep float64) {
	t.Helper()
	data, err := fio.ReadFile(bg, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := fio.WriteFile(bg, p, data[:int(float64(len(data))*keep)]); err != nil {
		t.Fatal(err)
	}
}
