package manifest_test

import (
	"bytes"
	"context"
	"errors"
	"path"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

const readerTable = "db.db/t"

var readerPartTypes = []types.DataType{types.IntType()}

// readerEntry is an ADD (or DELETE) of file in partition p.
func readerEntry(t *testing.T, kind manifest.FileKind, p int32, file string) manifest.Entry {
	t.Helper()
	row, err := binrow.Serialize(readerPartTypes, []any{p})
	if err != nil {
		t.Fatal(err)
	}
	empty := []byte{0, 0, 0, 0, 0, 0, 0, 0}
	return manifest.Entry{Kind: kind, Partition: row, TotalBuckets: -1, File: manifest.DataFileMeta{
		FileName: file, FileSize: 100, RowCount: 1, MinKey: empty, MaxKey: empty,
		KeyStats: manifest.EmptyStats(), ValueStats: manifest.EmptyStats(), ExtraFiles: []string{},
	}}
}

// readerSnapshot writes base (one manifest per partition: files a1 in 1,
// b1 in 2) and a delta deleting a1 and adding a2, and returns the snapshot.
func readerSnapshot(t *testing.T, fio storage.FileIO) (*snapshot.Snapshot, []manifest.FileMeta) {
	t.Helper()
	ctx := context.Background()
	enc := manifest.NewEncoder(manifest.Codec{})
	var metas []manifest.FileMeta
	for _, es := range [][]manifest.Entry{
		{readerEntry(t, manifest.FileKindAdd, 1, "a1")},
		{readerEntry(t, manifest.FileKindAdd, 2, "b1")},
		{readerEntry(t, manifest.FileKindDelete, 1, "a1"), readerEntry(t, manifest.FileKindAdd, 1, "a2")},
	} {
		m, err := enc.WriteManifest(ctx, fio, readerTable, es, readerPartTypes, 0)
		if err != nil {
			t.Fatal(err)
		}
		metas = append(metas, m)
	}
	base, baseSize, err := enc.WriteManifestList(ctx, fio, readerTable, metas[:2])
	if err != nil {
		t.Fatal(err)
	}
	delta, deltaSize, err := enc.WriteManifestList(ctx, fio, readerTable, metas[2:])
	if err != nil {
		t.Fatal(err)
	}
	return &snapshot.Snapshot{ID: 2, BaseManifestList: base, BaseManifestListSize: &baseSize,
		DeltaManifestList: delta, DeltaManifestListSize: &deltaSize}, metas
}

func names(es []manifest.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Kind.String()+" "+e.File.FileName)
	}
	return out
}

func TestReaderLiveAndMerged(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, _ := readerSnapshot(t, fio)
	r := manifest.NewReader(fio, readerTable, manifest.ReaderOptions{})
	live, err := r.LiveEntries(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(live); !slices.Equal(got, []string{"ADD b1", "ADD a2"}) {
		t.Errorf("live %v", got)
	}
	two := readerEntry(t, manifest.FileKindAdd, 2, "").Partition
	only2 := manifest.PartitionFunc(func(p []byte) bool { return bytes.Equal(p, two) })
	if live, err = r.LiveEntries(ctx, s, only2); err != nil || !slices.Equal(names(live), []string{"ADD b1"}) {
		t.Errorf("live in partition 2: %v %v", names(live), err)
	}
	delta, err := r.ReadList(ctx, manifest.DeltaList(s))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := r.Entries(ctx, delta, nil)
	if err != nil || !slices.Equal(names(entries), []string{"DELETE a1", "ADD a2"}) {
		t.Errorf("delta entries %v %v", names(entries), err)
	}
	if _, ok := manifest.ChangelogList(s); ok {
		t.Error("a snapshot without changelog has a changelog list")
	}
}

// TestReaderChecks: every file is checked against the record naming it,
// whoever reads; a FileSize of 0 is no exception.
func TestReaderChecks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		spoil func(s *snapshot.Snapshot, metas []manifest.FileMeta) (*snapshot.Snapshot, manifest.FileMeta)
	}{
		{"list size", func(s *snapshot.Snapshot, m []manifest.FileMeta) (*snapshot.Snapshot, manifest.FileMeta) {
			n := *s.BaseManifestListSize + 1
			s.BaseManifestListSize = &n
			return s, m[0]
		}},
		{"no list", func(s *snapshot.Snapshot, m []manifest.FileMeta) (*snapshot.Snapshot, manifest.FileMeta) {
			s.BaseManifestList = ""
			return s, m[0]
		}},
		{"manifest size", func(s *snapshot.Snapshot, m []manifest.FileMeta) (*snapshot.Snapshot, manifest.FileMeta) {
			m[0].FileSize--
			return s, m[0]
		}},
		{"manifest size 0", func(s *snapshot.Snapshot, m []manifest.FileMeta) (*snapshot.Snapshot, manifest.FileMeta) {
			m[0].FileSize = 0
			return s, m[0]
		}},
		{"entry counts", func(s *snapshot.Snapshot, m []manifest.FileMeta) (*snapshot.Snapshot, manifest.FileMeta) {
			m[2].NumDeletedFiles = 0
			return s, m[2]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fio, err := storage.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s, metas := readerSnapshot(t, fio)
			s, m := tc.spoil(s, metas)
			r := manifest.NewReader(fio, readerTable, manifest.ReaderOptions{})
			_, errList := r.ReadList(ctx, manifest.BaseList(s))
			_, errManifest := r.ReadManifest(ctx, &m)
			if err := errors.Join(errList, errManifest); !errors.Is(err, manifest.ErrCorruptTable) {
				t.Errorf("got %v, want ErrCorruptTable", err)
			}
		})
	}
}

func TestReaderCache(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, metas := readerSnapshot(t, fio)
	cached := manifest.NewReader(fio, readerTable, manifest.ReaderOptions{CacheEntries: 10})
	plain := manifest.NewReader(fio, readerTable, manifest.ReaderOptions{})
	for _, r := range []*manifest.Reader{cached, plain} {
		if _, err := r.ReadManifest(ctx, &metas[0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := fio.Delete(ctx, path.Join(readerTable, "manifest", metas[0].FileName)); err != nil {
		t.Fatal(err)
	}
	if e, err := cached.ReadManifest(ctx, &metas[0]); err != nil || len(e) != 1 {
		t.Errorf("cached read: %v %v", e, err)
	}
	if _, err := plain.ReadManifest(ctx, &metas[0]); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("uncached read of a deleted manifest: %v", err)
	}
	cached.Forget(metas[0].FileName)
	if _, err := cached.ReadManifest(ctx, &metas[0]); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("read after Forget: %v", err)
	}
	cached.Remember("manifest-x", []manifest.Entry{readerEntry(t, manifest.FileKindAdd, 1, "x")})
	if e, err := cached.ReadManifest(ctx, &manifest.FileMeta{FileName: "manifest-x"}); err != nil || len(e) != 1 {
		t.Errorf("remembered manifest: %v %v", e, err)
	}
}
