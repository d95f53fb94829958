package lakecore_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// TestCompactSharedLookupCache runs the paimon output's pattern, batches
// written at level 0 by fresh writers and compacted by Table.Compact every
// few batches, on lookup-changelog, deletion-vectors and first-row tables
// whose upper levels do not fit lookup.cache-max-memory-size, once with a
// write.LookupCache kept across the Compact runs and once without. With
// it, each data file is read by lookups at most once over all runs
// (beyond the reads of the compactions whose input it is); without it,
// some are read again by later runs. Both give the same snapshots: data
// and changelog files of equal bytes at the same bucket and level,
// deletion vectors deleting the same positions, the same changelog.
func TestCompactSharedLookupCache(t *testing.T) {
	ctx := context.Background()
	for _, table := range []struct {
		name    string
		options map[string]string
	}{
		{"lookup_changelog", map[string]string{"changelog-producer": "lookup"}},
		{"deletion_vectors", map[string]string{"deletion-vectors.enabled": "true"}},
		{"first_row", map[string]string{"merge-engine": "first-row", "changelog-producer": "lookup"}},
	} {
		t.Run(table.name, func(t *testing.T) {
			var want []string
			for _, shared := range []bool{false, true} {
				local, err := storage.NewLocal(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				fio := faultfs.New(local, 1) // no faults: it counts the opens of each file
				opts := map[string]string{"bucket": "2", "target-file-size": "16kb", "lookup.cache-max-memory-size": "1kb"}
				for k, v := range table.options {
					opts[k] = v
				}
				tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", lakecore.TableSpec{
					Fields: []types.DataField{
						{Name: "k", Type: types.BigIntType().NotNull()}, {Name: "a", Type: types.StringType()}, {Name: "b", Type: types.BigIntType()},
					},
					PrimaryKeys: []string{"k"}, Options: opts,
				})
				if err != nil {
					t.Fatal(err)
				}
				var cache *write.LookupCache
				if shared {
					lo, err := write.LookupCacheOptionsFromSchema(tbl.Schema())
					if err != nil {
						t.Fatal(err)
					}
					lo.Dir = t.TempDir()
					cache = write.NewLookupCache(lo)
				}
				committer := tbl.NewCommitter("writer")
				rng := rand.New(rand.NewPCG(5, 6))
				inputs := map[string]int{}
				const runs = 4 // after the first batch, then every third
				for id := int64(1); id <= 3*runs+1; id++ {
					w, err := tbl.NewKeyValueWriter(ctx)
					if err != nil {
						t.Fatal(err)
					}
					w.DisableCompaction()
					changes := 100
					if id == 1 {
						changes = 3000 // the upper levels the later runs look up in
					}
					for i := range changes {
						n := int64(rng.IntN(3000))
						if id == 1 {
							n = int64(i)
						}
						kind := kv.Insert
						if id > 1 && table.name != "first_row" && rng.IntN(8) == 0 {
							kind = kv.Delete
						}
						if err := w.Write(ctx, kind, []any{n, fmt.Sprintf("value %d of commit %d", n*7919%10007, id), id}); err != nil {
							t.Fatal(err)
						}
					}
					msgs, err := w.Prepare(ctx)
					if err != nil {
						t.Fatal(err)
					}
					_ = w.Close()
					if _, err := committer.Commit(ctx, id, msgs); err != nil {
						t.Fatal(err)
					}
					if id%3 != 1 {
						continue
					}
					before := liveLevels(t, tbl)
					if _, err := tbl.Compact(ctx, maintain.CompactOptions{CommitUser: "maintenance", LookupCache: cache}); err != nil {
						t.Fatal(err)
					}
					after := liveLevels(t, tbl)
					for name, level := range before {
						if l, ok := after[name]; !ok || l != level {
							inputs[name]++ // read by the compaction as its input
						}
					}
				}
				// Reads beyond the compactions' own: the lookups'.
				extra, reread := fio.ExtraOpens("data-", inputs)
				t.Logf("shared cache %t: %d data files read by lookups, %d of them more than once", shared, extra, reread)
				if extra == 0 {
					t.Fatalf("no lookup read a data file: the test does not exercise the cache")
				}
				if shared {
					if reread > 0 {
						t.Errorf("shared cache: %d data files read more than once by lookups", reread)
					}
					if st := cache.Stats(); st.DiskBytes == 0 || st.Reads != int64(extra) {
						t.Errorf("shared cache: %+v, want local files and %d reads", st, extra)
					}
					if err := cache.Close(); err != nil {
						t.Fatal(err)
					}
				} else if reread == 0 {
					t.Errorf("without a shared cache no data file was read twice: the test does not show what the cache saves")
				}
				got := describeSnapshots(t, tbl, local)
				all := strings.Join(got, "\n")
				if table.name == "deletion_vectors" && !strings.Contains(all, " deleted ") || table.name != "deletion_vectors" && !strings.Contains(all, "changelog bucket") {
					t.Fatalf("no deletion vector or changelog file to compare:\n%s", all)
				}
				if want == nil {
					want = got
					continue
				}
				if !slices.Equal(got, want) {
					t.Errorf("with a shared cache the table differs:\n%s\nwithout:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}

// liveLevels returns the level of each live file of the latest snapshot.
func liveLevels(t *testing.T, tbl *lakecore.Table) map[string]int32 {
	t.Helper()
	entries, err := tbl.Planner().LiveEntries(context.Background(), mustLatest(t, tbl), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, e := range entries {
		out[e.File.FileName] = e.File.Level
	}
	return out
}

// describeSnapshots describes every snapshot of tbl independently of the
// random parts of file names: for each, its kind, the hash of each live
// data file's bytes with its bucket, level and deleted positions, the
// hashes of its changelog files, and the changelog a stream reads.
func describeSnapshots(t *testing.T, tbl *lakecore.Table, fio storage.FileIO) []string {
	t.Helper()
	ctx := context.Background()
	hash := func(bucket int32, name string) string {
		b, err := fio.ReadFile(ctx, path.Join(tbl.Path(), fmt.Sprintf("bucket-%d", bucket), name))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))[:12]
	}
	var out []string
	for id := int64(1); id <= mustLatest(t, tbl).ID; id++ {
		snap, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := tbl.Planner().LiveEntries(ctx, snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		dvs := map[string]*manifest.DeletionVector{}
		if snap.IndexManifest != nil {
			if dvs, err = manifest.ReadDeletionVectors(ctx, tbl.FileIO(), tbl.Path(), *snap.IndexManifest); err != nil {
				t.Fatal(err)
			}
		}
		var files []string
		for _, e := range entries {
			d := fmt.Sprintf("bucket %d level %d %s", e.Bucket, e.File.Level, hash(e.Bucket, e.File.FileName))
			if dv := dvs[e.File.FileName]; dv != nil {
				d += fmt.Sprint(" deleted ", slices.Collect(dv.All()))
			}
			files = append(files, d)
		}
		plan, err := tbl.Planner().Changelog(ctx, snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range plan.Splits {
			for _, f := range sp.Files {
				files = append(files, fmt.Sprintf("changelog bucket %d level %d %s", sp.Bucket, f.Level, hash(sp.Bucket, f.FileName)))
			}
		}
		slices.Sort(files)
		out = append(out, fmt.Sprintf("snapshot %d %s: %s", id, snap.CommitKind, strings.Join(files, ", ")))
	}
	streamFromFirst(t, tbl, func(plan *scan.StreamPlan, kinds []kv.RowKind, rows [][]any) error {
		for i, r := range rows {
			out = append(out, fmt.Sprintf("stream snapshot %d: %s %v", plan.Snapshot.ID, kinds[i], r))
		}
		return nil
	})
	return out
}
