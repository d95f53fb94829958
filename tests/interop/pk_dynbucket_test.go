//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestDynamicBucketInterop hands a dynamic-bucket table (bucket = -1,
// dynamic-bucket.target-row-num = 20, so that each partition gets several
// buckets) back and forth between lakecore and Java Paimon: lakecore
// writes it (Java 1.4.2 and 2.0.0 read every snapshot exactly as lakecore
// does), Java continues it with its own HashBucketAssigner restored from
// lakecore's HASH index files (pk-write "continue" with "hashAssigner"),
// then lakecore continues from Java's index files; "java first" starts
// with Java writing the table. After every phase Java 1.4.2, Java 2.0.0
// and lakecore read exactly the model of all changes (a key in two buckets
// would be read twice), no key ever moves to another bucket, and no
// bucket holds more keys than the target. One case keeps the HASH files in
// the bucket directories (index-file-in-data-file-dir).
func TestDynamicBucketInterop(t *testing.T) {
	requireOracles(t)
	for _, c := range []struct {
		name        string
		javaWriter  string
		partitioned bool
		javaFirst   bool
		options     map[string]string
		lookup      bool // changelog-producer lookup
	}{
		{"dynbucket_go_first", java1, true, false, nil, false},
		{"dynbucket_go_first_unpartitioned", java2, false, false, nil, false},
		{"dynbucket_java_first", java2, true, true, nil, false},
		{"dynbucket_java1_first", java1, false, true, nil, false},
		{"dynbucket_index_in_data_dir", java2, true, false, map[string]string{"index-file-in-data-file-dir": "true"}, false},
		{"dynbucket_lookup_go_first", java2, true, false, nil, true},
		{"dynbucket_lookup_java1_first", java1, false, true, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctxT(t)
			wh := t.TempDir()
			cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
			if err != nil {
				t.Fatal(err)
			}
			ref := tableRef{wh, "interop", c.name}
			options := map[string]string{"bucket": "-1", "dynamic-bucket.target-row-num": "20", "num-sorted-run.compaction-trigger": "3"}
			for k, v := range c.options {
				options[k] = v
			}
			if c.lookup {
				options["changelog-producer"] = "lookup"
			}
			var partitionKeys []string
			if c.partitioned {
				partitionKeys = []string{"pt"}
			}
			pks := []string{"pt", "id"}
			if !c.javaFirst {
				if _, err := cat.CreateTable(ctx, "interop", c.name, lakecore.TableSpec{
					Fields: []types.DataField{
						{Name: "id", Type: types.IntType()}, {Name: "pt", Type: types.StringType()}, {Name: "v", Type: types.StringType()},
					},
					PartitionKeys: partitionKeys, PrimaryKeys: pks, Options: options,
				}); err != nil {
					t.Fatal(err)
				}
			}
			model := map[string][]any{}
			rng := rand.New(rand.NewPCG(9, uint64(len(c.name))))
			keys := 30
			changes := func(n int, tag string) [][2]any { // kind, row
				keys += 12 // new keys in every batch, so that every phase assigns buckets
				var out [][2]any
				for range n {
					row := []any{int32(rng.IntN(keys)), []string{"a", "b"}[rng.IntN(2)], fmt.Sprintf("%s-%d", tag, rng.IntN(1000))}
					kind := kv.Insert
					switch rng.IntN(8) {
					case 0:
						kind = kv.Delete
					case 1, 2:
						kind = kv.UpdateAfter
					}
					out = append(out, [2]any{kind, row})
					key := fmt.Sprint(row[1], "/", row[0])
					if kind == kv.Delete {
						delete(model, key)
					} else {
						model[key] = row
					}
				}
				return out
			}
			var goID int64
			goPhase := func(phase string, commits int) {
				t.Helper()
				tb, err := cat.OpenTable(ctx, "interop", c.name)
				if err != nil {
					t.Fatal(err)
				}
				committer := tb.NewCommitter("interop-go")
				w, err := tb.NewKeyValueWriter(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for i := range commits {
					if i == commits/2 { // a restart in the middle of the phase
						if w, err = tb.NewKeyValueWriter(ctx); err != nil {
							t.Fatal(err)
						}
					}
					for _, ch := range changes(30, phase) {
						if err := w.Write(ctx, ch[0].(kv.RowKind), ch[1].([]any)); err != nil {
							t.Fatal(err)
						}
					}
					msgs, err := w.Prepare(ctx)
					if err != nil {
						t.Fatal(err)
					}
					goID++
					snap, err := committer.Commit(ctx, goID, msgs)
					if err != nil {
						t.Fatalf("phase %s: lakecore's commit: %v", phase, err)
					}
					// Java reads every snapshot lakecore made exactly as lakecore does.
					for id := snap.ID; id >= 1; id-- {
						s, err := tb.Snapshots().Get(ctx, id)
						if err != nil {
							t.Fatal(err)
						}
						if s.CommitUser != "interop-go" || s.CommitIdentifier != goID {
							break
						}
						rows, err := tb.ReadAll(ctx, id)
						if err != nil {
							t.Fatal(err)
						}
						want, err := canonicalRows(tb.Schema().Fields, rows)
						if err != nil {
							t.Fatal(err)
						}
						sortCodePoints(want)
						for _, o := range []string{java1, java2} {
							got, err := oracleRead(o, ref, readOpts{snapshot: id})
							if err != nil {
								t.Fatalf("%s reads %s snapshot %d: %v", o, ref, id, err)
							}
							if !slices.Equal(got, want) {
								t.Errorf("table %s, snapshot %d (%s), reader %s: rows differ from lakecore's\n got  %d:\n  %s\n want %d:\n  %s",
									ref, id, s.CommitKind, o, len(got), strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
							}
						}
					}
				}
			}
			javaPhase := func(phase string, commits int, create bool) {
				t.Helper()
				spec := map[string]any{"continue": !create, "hashAssigner": true, "primaryKeys": pks, "commitUser": "interop-java"}
				if create {
					spec["schema"] = []map[string]string{{"name": "id", "type": "INT NOT NULL"}, {"name": "pt", "type": "STRING NOT NULL"}, {"name": "v", "type": "STRING"}}
					spec["partitionKeys"] = partitionKeys
					spec["options"] = options
				}
				var cs []any
				for range commits {
					var chs []any
					for _, ch := range changes(30, phase) {
						r := ch[1].([]any)
						chs = append(chs, map[string]any{"kind": ch[0].(kv.RowKind).String(), "row": []any{r[0], r[1], r[2]}})
					}
					cs = append(cs, map[string]any{"kind": "changes", "changes": chs})
				}
				spec["commits"] = cs
				data, _ := json.Marshal(spec)
				f := filepath.Join(t.TempDir(), "spec.json")
				if err := os.WriteFile(f, data, 0o644); err != nil {
					t.Fatal(err)
				}
				if _, err := env.oracles[c.javaWriter].Call(append(append([]string{"pk-write"}, ref.flags()...), "--spec", f)...); err != nil {
					t.Fatalf("phase %s: %s writes the table: %v", phase, c.javaWriter, err)
				}
			}
			everBucket := map[string]int32{}
			check := func(phase string) {
				t.Helper()
				tb, want := checkModel(ctx, t, cat, ref, model, fmt.Sprintf("%s (java writer %s)", phase, c.javaWriter))
				perBucket := map[string]int{}
				for key, b := range keyBuckets(ctx, t, tb) {
					if old, ok := everBucket[key]; ok && old != b {
						t.Errorf("after %s: key %s moved from bucket %d to %d", phase, key, old, b)
					}
					everBucket[key] = b
					pt := "-"
					if c.partitioned {
						pt = strings.SplitN(key, "/", 2)[0]
					}
					perBucket[fmt.Sprint(pt, "/", b)]++
				}
				for b, n := range perBucket {
					if n > 20 {
						t.Errorf("after %s: bucket %s holds %d keys, target-row-num is 20", phase, b, n)
					}
				}
				t.Logf("after %s: %d rows, keys per partition/bucket %v", phase, len(model), perBucket)
				if c.lookup {
					checkChangelogStream(ctx, t, tb, ref, pks, want, phase)
				}
			}
			if c.javaFirst {
				javaPhase("java0", 4, true)
				check(c.javaWriter + " creates")
			}
			goPhase("go1", 5)
			check("lakecore's commits")
			javaPhase("java", 4, false)
			check(c.javaWriter + " continues lakecore's")
			goPhase("go2", 5)
			check("lakecore continues " + c.javaWriter + "'s")
			if c.options["index-file-in-data-file-dir"] == "true" {
				if list, _ := os.ReadDir(filepath.Join(wh, "interop.db", c.name, "index")); len(list) > 0 {
					t.Errorf("index-file-in-data-file-dir: index/ holds %d files", len(list))
				}
			}
		})
	}
}

// keyBuckets returns the bucket of every key the latest snapshot of a
// table partitioned by pt (or not) holds, reading one split at a time, and
// fails when a key is live in two buckets.
func keyBuckets(ctx context.Context, t *testing.T, tb *lakecore.Table) map[string]int32 {
	t.Helper()
	snap, err := tb.Snapshots().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tb.Planner().Full(ctx, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	names := tb.Schema().FieldNames()
	id, pt := slices.Index(names, "id"), slices.Index(names, "pt")
	for _, s := range plan.Splits {
		if s.TotalBuckets != -1 {
			t.Fatalf("split of bucket %d: _TOTAL_BUCKETS %d, want -1", s.Bucket, s.TotalBuckets)
		}
		one := &scan.Plan{Snapshot: snap, Splits: []scan.Split{s}}
		if err := tb.ReadPlan(ctx, one, func(rows [][]any) error {
			for _, r := range rows {
				key := fmt.Sprint(r[pt], "/", r[id])
				if b, ok := out[key]; ok && b != s.Bucket {
					return fmt.Errorf("key %s is live in buckets %d and %d", key, b, s.Bucket)
				}
				out[key] = s.Bucket
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
