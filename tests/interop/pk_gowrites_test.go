//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// TestGoWritesPrimaryKey writes random change streams (inserts, updates,
// deletes, keys repeated within and across commits) into primary-key
// tables with lakecore's KeyValueWriter, one commit per batch, for each
// merge engine lakecore writes, fixed and dynamic buckets (bucket = -1),
// partitioned and not, with lakecore's universal compactions in between
// (APPEND and COMPACT snapshots; with changelog-producer lookup, a lookup
// compaction of level 0 with its changelog at every commit); Java Paimon
// 1.4.2 and 2.0.0 read every snapshot and must return exactly the rows of
// lakecore's merged read, and their streaming reads must equal lakecore's.
func TestGoWritesPrimaryKey(t *testing.T) {
	requireOracles(t)
	for _, c := range []struct {
		name        string
		engine      string
		partitioned bool
		buckets     string
		options     map[string]string
	}{
		{"pk_dedupe_b1", "deduplicate", false, "1", nil},
		{"pk_dedupe_part_b4", "deduplicate", true, "4", nil},
		{"pk_dedupe_seqfield", "deduplicate", false, "2", map[string]string{"sequence.field": "v"}},
		{"pk_dedupe_input_changelog", "deduplicate", true, "2", map[string]string{"changelog-producer": "input"}},
		{"pk_partial_update", "partial-update", true, "2", nil},
		// A tiny write buffer that spills sorted runs to local disk, merged
		// in passes of two at each commit (write-buffer-spillable is on by
		// default).
		{"pk_dedupe_spill_input_changelog", "deduplicate", true, "2", map[string]string{"changelog-producer": "input", "write-buffer-size": "2kb", "local-sort.max-num-file-handles": "2"}},
		{"pk_partial_update_spill", "partial-update", false, "1", map[string]string{"write-buffer-size": "2kb"}},
		{"pk_dedupe_dynamic_bucket", "deduplicate", true, "-1", map[string]string{"dynamic-bucket.target-row-num": "10"}},
		{"pk_partial_update_dynamic_bucket", "partial-update", false, "-1", map[string]string{"dynamic-bucket.target-row-num": "15"}},
		{"pk_aggregation", "aggregation", false, "3", map[string]string{"fields.v.aggregate-function": "sum", "fields.s.aggregate-function": "listagg", "fields.s.ignore-retract": "true"}},
		{"pk_dedupe_lookup", "deduplicate", true, "2", map[string]string{"changelog-producer": "lookup"}},
		{"pk_dedupe_lookup_rowdedup_b1", "deduplicate", false, "1", map[string]string{"changelog-producer": "lookup", "changelog-producer.row-deduplicate": "true", "num-sorted-run.compaction-trigger": "3"}},
		{"pk_partial_update_lookup", "partial-update", false, "2", map[string]string{"changelog-producer": "lookup"}},
		{"pk_aggregation_lookup", "aggregation", true, "2", map[string]string{"changelog-producer": "lookup", "fields.v.aggregate-function": "sum", "fields.s.aggregate-function": "listagg", "fields.s.ignore-retract": "true"}},
		{"pk_first_row", "first-row", false, "2", map[string]string{"ignore-delete": "true"}},
		{"pk_first_row_lookup", "first-row", true, "2", map[string]string{"ignore-delete": "true", "changelog-producer": "lookup"}},
		{"pk_dedupe_dv", "deduplicate", true, "2", map[string]string{"deletion-vectors.enabled": "true"}},
		{"pk_dedupe_dv_seqfield", "deduplicate", false, "2", map[string]string{"deletion-vectors.enabled": "true", "sequence.field": "v"}},
		{"pk_dedupe_dv_lookup_b1", "deduplicate", false, "1", map[string]string{"deletion-vectors.enabled": "true", "changelog-producer": "lookup", "num-sorted-run.compaction-trigger": "3"}},
		{"pk_partial_update_dv", "partial-update", false, "2", map[string]string{"deletion-vectors.enabled": "true"}},
		{"pk_aggregation_dv_lookup", "aggregation", true, "2", map[string]string{"deletion-vectors.enabled": "true", "changelog-producer": "lookup",
			"fields.v.aggregate-function": "sum", "fields.s.aggregate-function": "listagg", "fields.s.ignore-retract": "true"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctxT(t)
			wh := t.TempDir()
			cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
			if err != nil {
				t.Fatal(err)
			}
			opts := map[string]string{"bucket": c.buckets, "merge-engine": c.engine}
			for k, v := range c.options {
				opts[k] = v
			}
			fields := []types.DataField{
				{Name: "k", Type: types.BigIntType()}, {Name: "pt", Type: types.StringType()},
				{Name: "s", Type: types.StringType()}, {Name: "v", Type: types.BigIntType()},
			}
			spec := lakecore.TableSpec{Fields: fields, PrimaryKeys: []string{"k", "pt"}, Options: opts}
			if c.partitioned {
				spec.PartitionKeys = []string{"pt"}
			}
			tb, err := cat.CreateTable(ctx, "interop", c.name, spec)
			if err != nil {
				t.Fatal(err)
			}
			ref := tableRef{wh, "interop", c.name}
			committer := tb.NewCommitter("interop-go")
			dv := c.options["deletion-vectors.enabled"] == "true"
			// A deletion-vectors table has a twin without them, written
			// with the same changes: its merged read (checked against Java
			// by the cases without deletion vectors) is the model the
			// table's read must equal after every commit.
			var twin *lakecore.Table
			var twinCommitter *commit.Committer
			if dv {
				twinSpec := spec
				twinSpec.Options = maps.Clone(opts)
				delete(twinSpec.Options, "deletion-vectors.enabled")
				if twin, err = cat.CreateTable(ctx, "interop", c.name+"_twin", twinSpec); err != nil {
					t.Fatal(err)
				}
				twinCommitter = twin.NewCommitter("interop-go")
			}
			rng := rand.New(rand.NewPCG(11, uint64(len(c.name))))
			compacts, vectors := 0, 0
			// commits are the changes of each commit, in pk-write's spec
			// form, for the Java-written twin of a lookup table.
			var commits []any
			defer func() {
				if compacts == 0 {
					t.Errorf("table %s: lakecore never compacted", ref)
				}
				if c.options["deletion-vectors.enabled"] == "true" && vectors == 0 {
					t.Errorf("table %s: lakecore never committed deletion vectors", ref)
				}
			}()
			for commitID := int64(1); commitID <= 12; commitID++ {
				w, err := tb.NewKeyValueWriter(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var tw *write.KeyValueWriter
				if twin != nil {
					if tw, err = twin.NewKeyValueWriter(ctx); err != nil {
						t.Fatal(err)
					}
				}
				var changes []any
				for range 30 + rng.IntN(40) {
					kind := kv.Insert
					switch r := rng.IntN(10); {
					case c.engine == "partial-update":
						if r < 4 {
							kind = kv.UpdateAfter
						}
					case r < 2:
						kind = kv.Delete
					case r < 3:
						kind = kv.UpdateBefore
					case r < 6:
						kind = kv.UpdateAfter
					}
					var s any = fmt.Sprintf("s%d", rng.IntN(100))
					if rng.IntN(4) == 0 {
						s = nil
					}
					var v any = int64(rng.IntN(100))
					if c.engine == "partial-update" && rng.IntN(3) == 0 {
						v = nil
					}
					row := []any{int64(rng.IntN(30)), []string{"a", "b"}[rng.IntN(2)], s, v}
					if kind != kv.UpdateBefore || c.engine != "deduplicate" {
						// A Flink sink delivers a deduplicate table's changes
						// in upsert mode, without -U, and lakecore's writer
						// drops -U there as that sink does; Java's writer API
						// would take a -U as a delete, so the Java twin gets
						// the changes as Flink delivers them.
						changes = append(changes, map[string]any{"kind": kind.String(), "row": slices.Clone(row)})
					}
					if err := w.Write(ctx, kind, row); err != nil {
						t.Fatal(err)
					}
					if tw != nil {
						if err := tw.Write(ctx, kind, slices.Clone(row)); err != nil {
							t.Fatal(err)
						}
					}
				}
				commits = append(commits, map[string]any{"kind": "changes", "changes": changes})
				msgs, err := w.Prepare(ctx)
				if err != nil {
					t.Fatal(err)
				}
				snap, err := committer.Commit(ctx, commitID, msgs)
				if err != nil {
					t.Fatal(err)
				}
				if tw != nil {
					twinMsgs, err := tw.Prepare(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := twinCommitter.Commit(ctx, commitID, twinMsgs); err != nil {
						t.Fatal(err)
					}
					if _, ok := c.options["sequence.field"]; ok {
						// A deletion-vectors table drops every delete at its
						// lookup compaction (forceDropDelete), so a later
						// insert with a smaller sequence.field value is new;
						// in the twin a kept delete would win over it. A
						// full compaction of the twin after every commit
						// drops its deletes as well.
						if _, err := twin.Compact(ctx, maintain.CompactOptions{Committer: twinCommitter, Full: true}); err != nil {
							t.Fatal(err)
						}
					}
					got, err := tb.ReadAll(ctx, snap.ID)
					if err != nil {
						t.Fatal(err)
					}
					want, err := twin.ReadAll(ctx, 0)
					if err != nil {
						t.Fatal(err)
					}
					g, err := canonicalRows(tb.Schema().Fields, got)
					if err != nil {
						t.Fatal(err)
					}
					m, err := canonicalRows(twin.Schema().Fields, want)
					if err != nil {
						t.Fatal(err)
					}
					sortCodePoints(g)
					sortCodePoints(m)
					if d := equalRows(g, m); d != "" {
						t.Errorf("table %s, commit %d: lakecore's read differs from the model (the twin without deletion vectors):%s", ref, commitID, d)
					}
					if snap.IndexManifest != nil {
						dvs, err := manifest.ReadDeletionVectors(ctx, tb.FileIO(), tb.Path(), *snap.IndexManifest)
						if err != nil {
							t.Fatal(err)
						}
						vectors += len(dvs)
					}
				}
				ids := []int64{snap.ID}
				if snap.CommitKind == "COMPACT" {
					compacts++
					if (c.options["changelog-producer"] == "lookup" || c.engine == "first-row" || dv) && snap.ID > 1 {
						// The APPEND snapshot before the lookup compaction
						// holds the level-0 files readers merge too.
						ids = []int64{snap.ID - 1, snap.ID}
					}
				}
				for _, id := range ids {
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
							t.Errorf("table %s, snapshot %d, writer go, reader %s: rows differ\n got  %d:\n  %s\n want %d (lakecore):\n  %s",
								ref, id, o, len(got), strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
						}
					}
				}
			}
			// Streaming: Java's streaming reads of the Go-written table (the
			// delta files of each APPEND snapshot with their row kinds for
			// changelog-producer none; the changelog files of each snapshot
			// for input and lookup) equal lakecore's, from each scan mode.
			fields = tb.Schema().Fields
			for _, m := range []pkMode{{Mode: "latest-full"}, {Mode: "from-snapshot", Snapshot: 1}, {Mode: "from-snapshot-full", Snapshot: 3}} {
				got, err := goStream(ctx, tb, fields, m)
				if err != nil {
					t.Fatalf("table %s, writer go, reader go, scan mode %s: %v", ref, m, err)
				}
				for _, o := range []string{java1, java2} {
					want, err := javaStream(o, ref, m)
					if err != nil {
						t.Fatalf("table %s, writer go, reader %s, scan mode %s: %v", ref, o, m, err)
					}
					g, err := inJavaColumns(t, want, got, fields, m)
					if err != nil {
						t.Fatalf("table %s, writer go, reader go, scan mode %s: %v", ref, m, err)
					}
					if d := diffPlans(spec.PrimaryKeys, want, g); d != "" {
						t.Errorf("table %s, writer go, reader go, scan mode %s: streams differ (expected: %s's):\n%s", ref, m, o, d)
					}
				}
				if c.options["changelog-producer"] == "lookup" && m.Mode == "from-snapshot" {
					javaWrittenLookupChangelog(t, ref, spec, commits, got)
					// The lookup changelog from the first snapshot replays
					// to the table's last state.
					replayed, err := replayPlans(spec.PrimaryKeys, got)
					if err != nil {
						t.Fatalf("table %s: changelog replay: %v", ref, err)
					}
					rows, err := tb.ReadAll(ctx, 0)
					if err != nil {
						t.Fatal(err)
					}
					want, err := canonicalRows(fields, rows)
					if err != nil {
						t.Fatal(err)
					}
					sortCodePoints(want)
					if d := equalRows(replayed, want); d != "" {
						t.Errorf("table %s: the changelog from snapshot 1 replayed differs from the merged read:%s", ref, d)
					}
				}
			}
		})
	}
}

// javaWrittenLookupChangelog writes the changes lakecore wrote into ref
// (commits, in pk-write's spec form) into a twin table with Java 1.4.2's
// writer (one StreamTableWrite, waiting for its lookup compaction at every
// commit, as lakecore does), streams the twin's changelog from snapshot 1
// with Java and requires the same changes of every key, in the same order,
// as goStream gave for ref (got, in Java's columns): the -U/+U sequence a
// Java writer produces from the same change stream.
func javaWrittenLookupChangelog(t *testing.T, ref tableRef, spec lakecore.TableSpec, commits []any, got []pkPlan) {
	t.Helper()
	var schema []map[string]string
	for _, f := range spec.Fields {
		schema = append(schema, map[string]string{"name": f.Name, "type": f.Type.String()})
	}
	twin := tableRef{ref.warehouse, ref.db, ref.table + "_java"}
	data, err := json.Marshal(map[string]any{"schema": schema, "partitionKeys": spec.PartitionKeys, "primaryKeys": spec.PrimaryKeys,
		"options": spec.Options, "commitUser": "interop-java", "waitCompaction": true, "commits": commits})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := env.oracles[java1].Call(append(append([]string{"pk-write"}, twin.flags()...), "--spec", f)...); err != nil {
		t.Fatalf("%s writes the twin %s: %v", java1, twin, err)
	}
	want, err := javaStream(java1, twin, pkMode{Mode: "from-snapshot", Snapshot: 1})
	if err != nil {
		t.Fatalf("%s streams the twin %s: %v", java1, twin, err)
	}
	byKey := func(plans []pkPlan) map[string][]pkRecord {
		out := map[string][]pkRecord{}
		for _, p := range plans {
			for k, rs := range groupByKey(spec.PrimaryKeys, p.Records) {
				out[k] = append(out[k], rs...)
			}
		}
		return out
	}
	w, g := byKey(want), byKey(got)
	keys := map[string]bool{}
	for k := range w {
		keys[k] = true
	}
	for k := range g {
		keys[k] = true
	}
	diffs := 0
	for k := range keys {
		if !equalRecords(w[k], g[k]) {
			if diffs < 10 {
				t.Errorf("table %s, key %s: the changelog of lakecore's writes differs from Java's writes of the same changes (%s)\n  java     %s\n  lakecore %s",
					ref, strings.ReplaceAll(strings.TrimSuffix(k, "\x00"), "\x00", ","), twin, recordsText(w[k]), recordsText(g[k]))
			}
			diffs++
		}
	}
	if len(keys) == 0 {
		t.Errorf("table %s: neither changelog has a record", ref)
	}
}
