package lakecore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestPartitionStats writes two commits into three partitions (one with a
// name that needs escaping, one NULL) of a two-bucket table and checks
// the stats against the files on disk.
func TestPartitionStats(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	fio, err := storage.NewLocal(wh)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "p", lakecore.TableSpec{
		Fields:        []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "dt", Type: types.StringType()}},
		PartitionKeys: []string{"dt"},
		Options:       map[string]string{"bucket": "2", "bucket-key": "id"},
	})
	if err != nil {
		t.Fatal(err)
	}
	parts := []any{"2026-01-01", "a/b", nil}
	wantRows := map[string]int64{}
	c := tb.NewCommitter("stats-test")
	for commit := range 2 {
		w, err := tb.NewWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			dt := parts[i%3]
			if commit == 1 && dt == nil {
				continue
			}
			if err := w.Write(ctx, []any{int32(commit*100 + i), dt}); err != nil {
				t.Fatal(err)
			}
			wantRows[dirOf(dt)]++
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Commit(ctx, int64(commit+1), msgs); err != nil {
			t.Fatal(err)
		}
	}

	stats, err := tb.PartitionStats(ctx, mustLatest(t, tb))
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"dt=2026-01-01", "dt=__DEFAULT_PARTITION__", "dt=a/b"}
	if len(stats) != len(wantNames) {
		t.Fatalf("%d partitions, want %d: %+v", len(stats), len(wantNames), stats)
	}
	for i, s := range stats {
		if s.Partition.Name != wantNames[i] {
			t.Errorf("partition %d is %q, want %q (sorted by name)", i, s.Partition.Name, wantNames[i])
		}
		buckets, files, bytes := onDisk(t, filepath.Join(wh, "db.db", "p", s.Partition.Dir))
		if s.Buckets != buckets || s.Files != files || s.Bytes != bytes || s.Rows != wantRows[s.Partition.Dir] {
			t.Errorf("%s: %d buckets, %d files, %d bytes, %d rows; on disk %d buckets, %d files, %d bytes; written %d rows",
				s.Partition.Name, s.Buckets, s.Files, s.Bytes, s.Rows, buckets, files, bytes, wantRows[s.Partition.Dir])
		}
	}
}

func dirOf(dt any) string {
	switch dt {
	case nil:
		return "dt=__DEFAULT_PARTITION__"
	case "a/b":
		return "dt=a%2Fb"
	}
	return "dt=" + dt.(string)
}

// onDisk counts the bucket directories below a partition directory and the
// data files and bytes in them.
func onDisk(t *testing.T, dir string) (buckets int, files, bytes int64) {
	t.Helper()
	bs, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		buckets++
		fs, err := os.ReadDir(filepath.Join(dir, b.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			info, err := f.Info()
			if err != nil {
				t.Fatal(err)
			}
			files++
			bytes += info.Size()
		}
	}
	return buckets, files, bytes
}
