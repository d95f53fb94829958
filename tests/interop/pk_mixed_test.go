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
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestPKMixedWriters hands one primary-key table back and forth between
// lakecore and Java: lakecore writes and compacts, Java (pk-write on the
// existing table, with its own universal compaction) continues the same
// buckets, then lakecore continues Java's, each writer restoring the
// others' levels and sequence numbers. After every phase Java 1.4.2, Java
// 2.0.0 and lakecore read the same rows, equal to a map model of all the
// changes in order (deduplicate: the last change of a key wins; first-row
// with ignore-delete: the first).
//
// With changelog-producer lookup every writer compacts level 0 up at each
// commit and writes its changelog; after every phase the changelog from
// snapshot 1, as lakecore and both Javas stream it, is the same and
// replays to the model.
func TestPKMixedWriters(t *testing.T) {
	requireOracles(t)
	for _, tc := range []struct {
		name    string
		options map[string]string
	}{
		{"", nil},
		{"lookup ", map[string]string{"changelog-producer": "lookup"}},
		{"first-row lookup ", map[string]string{"changelog-producer": "lookup", "merge-engine": "first-row", "ignore-delete": "true"}},
		{"deletion-vectors ", map[string]string{"deletion-vectors.enabled": "true"}},
		{"deletion-vectors lookup ", map[string]string{"deletion-vectors.enabled": "true", "changelog-producer": "lookup"}},
	} {
		for _, javaWriter := range []string{java1, java2} {
			testPKMixedWriters(t, tc.name, tc.options, javaWriter)
		}
	}
}

func testPKMixedWriters(t *testing.T, name string, options map[string]string, javaWriter string) {
	t.Run(name+"with "+javaWriter, func(t *testing.T) {
		ctx := ctxT(t)
		wh := t.TempDir()
		cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cat.CreateTable(ctx, "interop", "mixed", lakecore.TableSpec{
			Fields: []types.DataField{
				{Name: "id", Type: types.IntType()}, {Name: "pt", Type: types.StringType()}, {Name: "v", Type: types.StringType()},
			},
			PartitionKeys: []string{"pt"}, PrimaryKeys: []string{"pt", "id"},
			Options: func() map[string]string {
				o := map[string]string{"bucket": "2", "num-sorted-run.compaction-trigger": "3"}
				for k, v := range options {
					o[k] = v
				}
				return o
			}(),
		})
		if err != nil {
			t.Fatal(err)
		}
		ref := tableRef{wh, "interop", "mixed"}
		model := map[string][]any{}
		rng := rand.New(rand.NewPCG(5, uint64(len(javaWriter))))
		changes := func(n int, tag string) [][2]any { // kind, row
			var out [][2]any
			for range n {
				row := []any{int32(rng.IntN(40)), []string{"a", "b"}[rng.IntN(2)], fmt.Sprintf("%s-%d", tag, rng.IntN(1000))}
				kind := kv.Insert
				switch rng.IntN(6) {
				case 0:
					kind = kv.Delete
				case 1, 2:
					kind = kv.UpdateAfter
				}
				out = append(out, [2]any{kind, row})
				key := fmt.Sprint(row[1], "/", row[0])
				if options["merge-engine"] == "first-row" { // ignore-delete: the first row stays
					if _, ok := model[key]; !ok && kind != kv.Delete {
						model[key] = row
					}
					continue
				}
				if kind == kv.Delete {
					delete(model, key)
				} else {
					model[key] = row
				}
			}
			return out
		}
		var goID int64 // lakecore's commit identifiers, one user across phases
		goPhase := func(phase string, commits int) {
			t.Helper()
			tb, err := cat.OpenTable(ctx, "interop", "mixed")
			if err != nil {
				t.Fatal(err)
			}
			committer := tb.NewCommitter("interop-go")
			for range commits {
				w, err := tb.NewKeyValueWriter(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range changes(25, phase) {
					if err := w.Write(ctx, c[0].(kv.RowKind), c[1].([]any)); err != nil {
						t.Fatal(err)
					}
				}
				msgs, err := w.Prepare(ctx)
				if err != nil {
					t.Fatal(err)
				}
				goID++
				if _, err := committer.Commit(ctx, goID, msgs); err != nil {
					t.Fatalf("phase %s: lakecore's commit: %v", phase, err)
				}
			}
		}
		javaPhase := func(phase string, commits int) {
			t.Helper()
			spec := map[string]any{"continue": true, "primaryKeys": []string{"pt", "id"}, "commitUser": "interop-java"}
			var cs []any
			for range commits {
				var chs []any
				for _, c := range changes(25, phase) {
					r := c[1].([]any)
					chs = append(chs, map[string]any{"kind": c[0].(kv.RowKind).String(), "row": []any{r[0], r[1], r[2]}})
				}
				cs = append(cs, map[string]any{"kind": "changes", "changes": chs})
			}
			spec["commits"] = cs
			data, _ := json.Marshal(spec)
			f := filepath.Join(t.TempDir(), "spec.json")
			if err := os.WriteFile(f, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := env.oracles[javaWriter].Call(append(append([]string{"pk-write"}, ref.flags()...), "--spec", f)...); err != nil {
				t.Fatalf("phase %s: %s continues the table: %v", phase, javaWriter, err)
			}
		}
		vectors := map[string]int{} // deletion vectors of the latest snapshot after each phase
		check := func(phase string) {
			t.Helper()
			tb, want := checkModel(ctx, t, cat, ref, model, fmt.Sprintf("%s (java writer %s)", phase, javaWriter))
			if s, err := tb.Snapshots().Latest(ctx); err == nil && s != nil && s.IndexManifest != nil {
				dvs, err := manifest.ReadDeletionVectors(ctx, tb.FileIO(), tb.Path(), *s.IndexManifest)
				if err != nil {
					t.Fatalf("%s: deletion vectors: %v", phase, err)
				}
				vectors[phase] = len(dvs)
			}
			if options["changelog-producer"] != "lookup" {
				return
			}
			checkChangelogStream(ctx, t, tb, ref, []string{"pt", "id"}, want, phase+" (java writer "+javaWriter+")")
		}
		goPhase("go1", 6)
		check("lakecore's first commits")
		javaPhase("java", 5)
		check(javaWriter + "'s commits")
		goPhase("go2", 6)
		check("lakecore's second commits")
		snaps, err := oracleSnapshots(java1, ref)
		if err != nil {
			t.Fatal(err)
		}
		users := map[string]int{}
		for _, s := range snaps {
			users[s.CommitUser+" "+s.Kind]++
		}
		t.Logf("snapshots by user and kind: %v; deletion vectors after each phase: %v", users, vectors)
		if options["deletion-vectors.enabled"] == "true" && (vectors["lakecore's first commits"] == 0 || vectors["lakecore's second commits"] == 0) {
			t.Errorf("lakecore left no deletion vectors: %v", vectors)
		}
		if users["interop-go COMPACT"] == 0 || users["interop-java COMPACT"] == 0 {
			t.Errorf("both writers should have compacted: %v", users)
		}
	})
}

// checkModel checks that lakecore, Java 1.4.2 and Java 2.0.0 read exactly
// the rows of model (one row per key) from the latest snapshot of ref,
// reporting differences as after what. It returns the table and the
// model's rows, canonical and sorted.
func checkModel(ctx context.Context, t *testing.T, cat *lakecore.Catalog, ref tableRef, model map[string][]any, what string) (*lakecore.Table, []string) {
	t.Helper()
	tb, err := cat.OpenTable(ctx, ref.db, ref.table)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for _, r := range model {
		rows = append(rows, r)
	}
	want, err := canonicalRows(tb.Schema().Fields, rows)
	if err != nil {
		t.Fatal(err)
	}
	sortCodePoints(want)
	goRows, err := tb.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := canonicalRows(tb.Schema().Fields, goRows)
	if err != nil {
		t.Fatal(err)
	}
	sortCodePoints(got)
	results := map[string][]string{"go": got}
	for _, o := range []string{java1, java2} {
		if results[o], err = oracleRead(o, ref, readOpts{}); err != nil {
			t.Fatalf("after %s: %s reads: %v", what, o, err)
		}
	}
	for reader, rows := range results {
		if !slices.Equal(rows, want) {
			t.Errorf("table %s after %s, reader %s: rows differ from the model\n got  %d:\n  %s\n want %d:\n  %s",
				ref, what, reader, len(rows), strings.Join(rows, "\n  "), len(want), strings.Join(want, "\n  "))
		}
	}
	return tb, want
}
