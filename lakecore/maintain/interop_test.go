//go:build interop

// The Java Paimon checks of maintenance (build tag interop: `make interop`
// runs them after tests/interop/setup.sh has built the oracle).

package maintain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/oracle"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// javaRead returns Java's canonical rows of the latest snapshot, sorted.
func javaRead(t *testing.T, java *oracle.Process, warehouse string) []string {
	t.Helper()
	out := strings.TrimSpace(java.Run(t, "read", "--warehouse", warehouse, "--database", "db", "--table", "t"))
	if out == "" {
		return nil
	}
	lines := strings.Split(out, "\n")
	sort.Strings(lines)
	return lines
}

// canonical renders rows of INT and STRING columns as the oracle does.
func canonical(names []string, rows [][]any) []string {
	var out []string
	for _, r := range rows {
		var b strings.Builder
		b.WriteByte('{')
		for i, v := range r {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(names[i])
			val, _ := json.Marshal(v)
			b.Write(k)
			b.WriteByte(':')
			b.Write(val)
		}
		b.WriteByte('}')
		out = append(out, b.String())
	}
	sort.Strings(out)
	return out
}

func writeSpec(t *testing.T, java *oracle.Process, warehouse string, spec string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	java.Run(t, "write", "--warehouse", warehouse, "--database", "db", "--table", "t", "--spec", p)
}

const expireSpec = `{
  "schema": [{"name": "id", "type": "INT"}, {"name": "grp", "type": "STRING"}],
  "partitionKeys": ["grp"],
  "options": {"compaction.min.file-num": "2", "manifest.merge-min-count": "3"},
  "commits": [
    {"kind": "append", "rows": [{"id": 1, "grp": "g1"}, {"id": 2, "grp": "g2"}]},
    {"kind": "append", "rows": [{"id": 3, "grp": "g1"}]},
    {"kind": "append", "rows": [{"id": 4, "grp": "g1"}, {"id": 5, "grp": "g2"}]},
    {"kind": "compact"},
    {"kind": "append", "rows": [{"id": 6, "grp": "g3"}]},
    {"kind": "overwrite", "partition": {"grp": "g2"}, "rows": [{"id": 7, "grp": "g2"}]},
    {"kind": "append", "rows": [{"id": 8, "grp": "g1"}]},
    {"kind": "compact"},
    {"kind": "append", "rows": [{"id": 9, "grp": "g4"}]},
    {"kind": "append", "rows": [{"id": 10, "grp": "g1"}]}
  ]
}`

// TestInteropExpireMatchesJava expires copies of one Java-written table
// with Java's ExpireSnapshotsImpl and with ExpireSnapshots, and expects the
// same files to remain, for retain-max alone, with a consumer, and with a
// tag.
func TestInteropExpireMatchesJava(t *testing.T) {
	java := oracle.Java(t, oracle.Paimon1)
	template := filepath.Join(t.TempDir(), "w")
	writeSpec(t, java, template, expireSpec)
	rowsBefore := javaRead(t, java, template)
	for _, c := range []struct {
		name      string
		retainMax int
		consumer  int64
		tag       int64
	}{
		{"retain-max 3", 3, 0, 0},
		{"retain-max 1", 1, 0, 0},
		{"consumer at 6", 2, 6, 0},
		{"tag on 3", 1, 0, 3},
		{"tag on 5", 2, 0, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			javaW := filepath.Join(t.TempDir(), "w")
			if err := os.CopyFS(javaW, os.DirFS(template)); err != nil {
				t.Fatal(err)
			}
			table := filepath.Join(javaW, "db.db", "t")
			if c.consumer > 0 {
				mustWrite(t, filepath.Join(table, "consumer", "consumer-reader"), fmt.Sprintf(`{"nextSnapshot":%d}`, c.consumer))
			}
			if c.tag > 0 {
				data, err := os.ReadFile(filepath.Join(table, "snapshot", fmt.Sprint("snapshot-", c.tag)))
				if err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(table, "tag", "tag-t"), string(data))
			}
			goW := filepath.Join(t.TempDir(), "w")
			if err := os.CopyFS(goW, os.DirFS(javaW)); err != nil {
				t.Fatal(err)
			}

			java.Run(t, "expire", "--warehouse", javaW, "--database", "db", "--table", "t", "--retain-max", fmt.Sprint(c.retainMax))
			fio, err := storage.NewLocal(goW)
			if err != nil {
				t.Fatal(err)
			}
			// Java's oracle retains by count only: every snapshot counts
			// as young.
			rep, err := maintain.ExpireSnapshots(context.Background(), fio, "db.db/t", maintain.ExpireSnapshotsOptions{
				RetainMax: c.retainMax, RetainMin: 1, OlderThan: time.UnixMilli(1),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.SnapshotsExpired == 0 {
				t.Fatalf("nothing expired: %s", rep)
			}
			javaFiles := fixturetest.ListFiles(t, table)
			goFiles := fixturetest.ListFiles(t, filepath.Join(goW, "db.db", "t"))
			if d := diff(javaFiles, goFiles); d != "" {
				t.Errorf("files after Java's expiry vs ours (%s):%s", rep.Summary(), d)
			}
			for _, hint := range []string{"EARLIEST", "LATEST"} {
				a, _ := os.ReadFile(filepath.Join(table, "snapshot", hint))
				b, _ := os.ReadFile(filepath.Join(goW, "db.db", "t", "snapshot", hint))
				if !bytes.Equal(a, b) {
					t.Errorf("%s: Java %q, ours %q", hint, a, b)
				}
			}
			if got := javaRead(t, java, goW); !slices.Equal(got, rowsBefore) {
				t.Errorf("Java reads %v after our expiry, %v before", got, rowsBefore)
			}
		})
	}
}

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInteropJavaReadsAfterMaintenance runs every operation on a table
// lakecore wrote and reads it with Java after each; then Java compacts and
// appends, and lakecore maintains and reads again.
func TestInteropJavaReadsAfterMaintenance(t *testing.T) {
	java := oracle.Java(t, oracle.Paimon1)
	for _, bucket := range []string{"-1", "2"} {
		t.Run("bucket="+bucket, func(t *testing.T) {
			opts := map[string]string{"bucket": bucket, "partition.expiration-time": "1 d", "compaction.min.file-num": "3"}
			if bucket != "-1" {
				opts["bucket-key"] = "id"
			}
			l := newLakeTable(t, lakecore.TableSpec{
				Fields:        []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "dt", Type: types.StringType()}},
				PartitionKeys: []string{"dt"},
				Options:       opts,
			})
			names := []string{"id", "dt"}
			ctx := context.Background()
			id := 0
			for c := 0; c < 12; c++ {
				var rows [][]any
				for _, dt := range []string{"2020-01-01", "2020-01-02", "2999-12-31"} {
					rows = append(rows, []any{int32(id), dt}, []any{int32(id + 1), dt})
					id += 2
				}
				l.appendRows(rows...)
			}
			check := func(step string) {
				t.Helper()
				goRows := canonical(names, l.readAll(0))
				if got := javaRead(t, java, l.root); !slices.Equal(got, goRows) {
					t.Fatalf("after %s Java reads %d rows, lakecore %d:\n%v\n%v", step, len(got), len(goRows), got, goRows)
				}
			}
			check("writes")
			rep, err := l.tb.Compact(ctx, maintain.CompactOptions{})
			if err != nil || rep.Tasks == 0 {
				t.Fatalf("compact: %v %v", err, rep)
			}
			check("compaction")
			rep, err = l.tb.ExpirePartitions(ctx, maintain.ExpirePartitionsOptions{})
			if err != nil || len(rep.PartitionsDropped) != 2 {
				t.Fatalf("expire partitions: %v %v", err, rep)
			}
			check("partition expiry")
			rep, err = l.tb.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMin: 1, OlderThan: time.Now().Add(time.Minute)})
			if err != nil || rep.SnapshotsExpired == 0 {
				t.Fatalf("expire snapshots: %v %v", err, rep)
			}
			check("snapshot expiry")
			setOld(t, l.dir(), time.Now().Add(-48*time.Hour))
			mustWrite(t, filepath.Join(l.dir(), "manifest", "manifest-stray-0"), "x")
			if err := os.Chtimes(filepath.Join(l.dir(), "manifest", "manifest-stray-0"), time.Now().Add(-48*time.Hour), time.Now().Add(-48*time.Hour)); err != nil {
				t.Fatal(err)
			}
			rep, err = l.tb.RemoveOrphanFiles(ctx, maintain.RemoveOrphanFilesOptions{})
			if err != nil || len(rep.Removed) != 1 {
				t.Fatalf("remove orphan files: %v %v", err, rep)
			}
			check("orphan cleanup")

			// Java appends and compacts on top; lakecore expires and reads.
			writeSpec(t, java, l.root, `{"commits": [
				{"kind": "append", "rows": [{"id": 9000, "dt": "2999-12-31"}]},
				{"kind": "append", "rows": [{"id": 9001, "dt": "2999-12-31"}]},
				{"kind": "compact"}]}`)
			check("Java's compaction")
			if _, err := l.tb.Compact(ctx, maintain.CompactOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := l.tb.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMin: 1, OlderThan: time.Now().Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			check("maintenance after Java")
		})
	}
}

// pkExpireSpec is a pk-write spec (tests/interop/README.md, "Primary-key
// tables") of random changes to (p, id) -> v, or id -> v when unpartitioned:
// -U before +U as a CDC source sends them, deletes, and a full compaction
// after every fourth commit.
// setOptions, when not nil, are set by a last "alter" step (the table's
// own writer would expire with them while writing).
func pkExpireSpec(t *testing.T, options map[string]string, partitioned bool, commits int, setOptions map[string]string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, uint64(commits)))
	type key struct{ p, id int }
	state := map[key]string{}
	row := func(k key, v string) []any {
		if partitioned {
			return []any{k.p, k.id, v}
		}
		return []any{k.id, v}
	}
	type change struct {
		Kind string `json:"kind"`
		Row  []any  `json:"row"`
	}
	var steps []map[string]any
	for c := 1; c <= commits; c++ {
		var changes []change
		for range 10 {
			k := key{id: rng.IntN(12)}
			if partitioned {
				k.p = 1 + rng.IntN(2)
			}
			v := fmt.Sprintf("v%d", rng.IntN(1000))
			switch old, ok := state[k]; {
			case !ok:
				changes = append(changes, change{"+I", row(k, v)})
				state[k] = v
			case rng.IntN(4) == 0:
				changes = append(changes, change{"-D", row(k, old)})
				delete(state, k)
			default:
				changes = append(changes, change{"-U", row(k, old)}, change{"+U", row(k, v)})
				state[k] = v
			}
		}
		steps = append(steps, map[string]any{"kind": "changes", "changes": changes})
		if c%4 == 0 {
			steps = append(steps, map[string]any{"kind": "compact", "full": true})
		}
	}
	if setOptions != nil {
		steps = append(steps, map[string]any{"kind": "alter", "setOptions": setOptions})
	}
	spec := map[string]any{
		"schema":      []map[string]string{{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}},
		"primaryKeys": []string{"id"},
		"options":     options,
		"commits":     steps,
	}
	if partitioned {
		spec["schema"] = []map[string]string{{"name": "p", "type": "INT NOT NULL"}, {"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}}
		spec["partitionKeys"] = []string{"p"}
		spec["primaryKeys"] = []string{"p", "id"}
	}
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// goPK is a primary-key table lakecore writes for the interop tests:
// (id) -> v, or partitioned (dt, id) -> v, with options (num-sorted-run.
// compaction-trigger 3 added), 12 commits of 10 random changes (-U before
// +U, deletes) by the KeyValueWriter, a full compaction after every
// compactEvery-th commit (0: none) and, partitioned, the 2020 partition
// dropped by ExpirePartitions at the end (partition.expiration-time 1 d).
type goPK struct {
	options      map[string]string
	partitioned  bool
	compactEvery int
	seed         uint64
}

func goWritesPK(o goPK) func(t *testing.T, warehouse string) {
	return func(t *testing.T, warehouse string) {
		ctx := context.Background()
		fio, err := storage.NewLocal(warehouse)
		if err != nil {
			t.Fatal(err)
		}
		spec := lakecore.TableSpec{
			Fields:      []types.DataField{{Name: "id", Type: types.IntType().NotNull()}, {Name: "v", Type: types.StringType()}},
			PrimaryKeys: []string{"id"},
			Options:     map[string]string{"num-sorted-run.compaction-trigger": "3"},
		}
		for k, v := range o.options {
			spec.Options[k] = v
		}
		if o.partitioned {
			spec.Fields = append([]types.DataField{{Name: "dt", Type: types.StringType().NotNull()}}, spec.Fields...)
			spec.PartitionKeys, spec.PrimaryKeys = []string{"dt"}, []string{"dt", "id"}
			spec.Options["partition.expiration-time"] = "1 d"
		}
		tb, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", spec)
		if err != nil {
			t.Fatal(err)
		}
		c := tb.NewCommitter("go-writer")
		rng := rand.New(rand.NewPCG(5, 6+o.seed))
		type key struct {
			dt string
			id int32
		}
		row := func(k key, v string) []any {
			if o.partitioned {
				return []any{k.dt, k.id, v}
			}
			return []any{k.id, v}
		}
		state := map[key]string{}
		for i := 1; i <= 12; i++ {
			w, err := tb.NewKeyValueWriter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				k := key{id: int32(rng.IntN(12))}
				if o.partitioned {
					k.dt = []string{"2020-01-01", "2999-01-01"}[rng.IntN(2)]
				}
				v := fmt.Sprintf("v%d", rng.IntN(1000))
				old, ok := state[k]
				var err error
				switch {
				case !ok:
					err = w.Write(ctx, kv.Insert, row(k, v))
					state[k] = v
				case rng.IntN(4) == 0:
					err = w.Write(ctx, kv.Delete, row(k, old))
					delete(state, k)
				default:
					if err = w.Write(ctx, kv.UpdateBefore, row(k, old)); err == nil {
						err = w.Write(ctx, kv.UpdateAfter, row(k, v))
					}
					state[k] = v
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			msgs, err := w.Prepare(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Commit(ctx, int64(i), msgs); err != nil {
				t.Fatal(err)
			}
			if o.compactEvery > 0 && i%o.compactEvery == 0 {
				if _, err := tb.Compact(ctx, maintain.CompactOptions{Full: true}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if o.partitioned {
			rep, err := tb.ExpirePartitions(ctx, maintain.ExpirePartitionsOptions{})
			if err != nil || len(rep.PartitionsDropped) != 1 {
				t.Fatalf("expire partitions: %v %v", err, rep)
			}
		}
	}
}

// TestInteropExpirePKMatchesJava expires copies of primary-key tables with
// Java's ExpireSnapshotsImpl and with ExpireSnapshots and expects the same
// files to remain, down to every data, changelog, manifest and index file:
// Java-written tables with changelog-producer input, lookup and
// full-compaction, with deletion vectors and with a dynamic bucket (HASH
// index files), and one written by lakecore's KeyValueWriter (changelog-
// producer input, lakecore's compactions; partitioned, one partition
// dropped by ExpirePartitions). Java reads the same rows after our expiry
// as before.
func TestInteropExpirePKMatchesJava(t *testing.T) {
	java := oracle.Java(t, oracle.Paimon1)
	ctx := context.Background()
	type tableCase struct {
		name  string
		write func(t *testing.T, warehouse string)
	}
	javaWrites := func(options map[string]string, partitioned bool) func(t *testing.T, warehouse string) {
		return func(t *testing.T, warehouse string) {
			p := filepath.Join(t.TempDir(), "pk.json")
			if err := os.WriteFile(p, []byte(pkExpireSpec(t, options, partitioned, 10, nil)), 0o644); err != nil {
				t.Fatal(err)
			}
			java.Run(t, "pk-write", "--warehouse", warehouse, "--database", "db", "--table", "t", "--spec", p)
		}
	}
	for _, tc := range []tableCase{
		{"java input partitioned", javaWrites(map[string]string{"bucket": "2", "changelog-producer": "input"}, true)},
		{"java lookup", javaWrites(map[string]string{"bucket": "1", "changelog-producer": "lookup"}, false)},
		{"java full-compaction", javaWrites(map[string]string{"bucket": "1", "changelog-producer": "full-compaction"}, false)},
		{"java deletion vectors", javaWrites(map[string]string{"bucket": "2", "deletion-vectors.enabled": "true", "num-sorted-run.compaction-trigger": "3"}, false)},
		{"java dynamic bucket", javaWrites(map[string]string{"bucket": "-1"}, true)},
		{"go input", goWritesPK(goPK{options: map[string]string{"bucket": "2", "changelog-producer": "input"}, compactEvery: 4})},
		{"go input partitioned, a partition dropped", goWritesPK(goPK{options: map[string]string{"bucket": "2", "changelog-producer": "input"}, compactEvery: 4, partitioned: true})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			template := filepath.Join(t.TempDir(), "w")
			tc.write(t, template)
			table := filepath.Join("db.db", "t")
			rowsBefore := javaRead(t, java, template)
			var sawChangelog, sawIndex bool
			for _, f := range fixturetest.ListFiles(t, filepath.Join(template, table)) {
				sawChangelog = sawChangelog || strings.Contains(f, "/changelog-")
				sawIndex = sawIndex || strings.HasPrefix(f, "index/")
			}
			t.Logf("changelog files: %v, index files: %v", sawChangelog, sawIndex)
			for _, retainMax := range []int{4, 1} {
				t.Run(fmt.Sprint("retain-max ", retainMax), func(t *testing.T) {
					javaW := filepath.Join(t.TempDir(), "w")
					goW := filepath.Join(t.TempDir(), "w")
					for _, d := range []string{javaW, goW} {
						if err := os.CopyFS(d, os.DirFS(template)); err != nil {
							t.Fatal(err)
						}
					}
					java.Run(t, "expire", "--warehouse", javaW, "--database", "db", "--table", "t", "--retain-max", fmt.Sprint(retainMax))
					fio, err := storage.NewLocal(goW)
					if err != nil {
						t.Fatal(err)
					}
					tb, err := lakecore.NewCatalog(fio).OpenTable(ctx, "db", "t")
					if err != nil {
						t.Fatal(err)
					}
					rep, err := tb.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMax: retainMax, RetainMin: 1, OlderThan: time.UnixMilli(1)})
					if err != nil {
						t.Fatal(err)
					}
					if rep.SnapshotsExpired == 0 {
						t.Fatalf("nothing expired: %s", rep)
					}
					before := fixturetest.ListFiles(t, filepath.Join(template, table))
					javaFiles := fixturetest.ListFiles(t, filepath.Join(javaW, table))
					goFiles := fixturetest.ListFiles(t, filepath.Join(goW, table))
					if d := diff(javaFiles, goFiles); d != "" {
						t.Errorf("files after Java's expiry vs ours (%s):%s", rep.Summary(), d)
					}
					// Count what went by kind, so that the log (and the checks
					// below) show the changelog and index cleanup was exercised.
					gone := map[string]int{}
					for _, f := range before {
						if slices.Contains(goFiles, f) {
							continue
						}
						switch base := path.Base(f); {
						case strings.HasPrefix(f, "index/"):
							gone["index"]++
						case strings.HasPrefix(base, "changelog-"):
							gone["changelog"]++
						case strings.HasPrefix(base, "data-"):
							gone["data"]++
						}
					}
					t.Logf("%s; gone: %v", rep.Summary(), gone)
					if retainMax == 1 && ((sawChangelog && gone["changelog"] == 0) || (sawIndex && gone["index"] == 0) || gone["data"] == 0) {
						t.Errorf("expiry to the latest snapshot deleted %v: some kind of file the table has was never deleted", gone)
					}
					for _, hint := range []string{"EARLIEST", "LATEST"} {
						a, _ := os.ReadFile(filepath.Join(javaW, table, "snapshot", hint))
						b, _ := os.ReadFile(filepath.Join(goW, table, "snapshot", hint))
						if !bytes.Equal(a, b) {
							t.Errorf("%s: Java %q, ours %q", hint, a, b)
						}
					}
					if got := javaRead(t, java, goW); !slices.Equal(got, rowsBefore) {
						t.Errorf("Java reads %v after our expiry, %v before", got, rowsBefore)
					}
				})
			}
		})
	}
}

// decoupledRetention keeps 3 snapshots and 7 changelogs, all old enough to
// expire: the changelog outlives the snapshots. withRetention adds it to
// a table's options.
var decoupledRetention = map[string]string{
	"snapshot.num-retained.max": "3", "snapshot.num-retained.min": "1", "snapshot.time-retained": "1 ms",
	"changelog.num-retained.max": "7", "changelog.num-retained.min": "1",
}

func withRetention(options map[string]string) map[string]string {
	for k, v := range decoupledRetention {
		options[k] = v
	}
	return options
}

// TestInteropExpireDecoupledChangelogMatchesJava: primary-key tables whose
// changelog outlives their snapshots, expired by Java's writer expiry
// (expire-table: ExpireSnapshotsImpl, then ExpireChangelogImpl, with the
// table's options) and by ExpireSnapshots, keep identical files, down to
// the changelog/changelog-N files and their hints; Java reads the same
// rows after our expiry as before, and streams the same changes from the
// earliest long-lived changelog on both copies.
func TestInteropExpireDecoupledChangelogMatchesJava(t *testing.T) {
	java := oracle.Java(t, oracle.Paimon1)
	ctx := context.Background()
	javaWrites := func(options map[string]string, partitioned bool) func(t *testing.T, warehouse string) {
		return func(t *testing.T, warehouse string) {
			p := filepath.Join(t.TempDir(), "pk.json")
			if err := os.WriteFile(p, []byte(pkExpireSpec(t, options, partitioned, 12, decoupledRetention)), 0o644); err != nil {
				t.Fatal(err)
			}
			java.Run(t, "pk-write", "--warehouse", warehouse, "--database", "db", "--table", "t", "--spec", p)
		}
	}
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, warehouse string)
	}{
		{"java input partitioned", javaWrites(map[string]string{"bucket": "2", "changelog-producer": "input"}, true)},
		{"java lookup", javaWrites(map[string]string{"bucket": "1", "changelog-producer": "lookup"}, false)},
		{"java none", javaWrites(map[string]string{"bucket": "2"}, false)},
		{"java none deletion vectors", javaWrites(map[string]string{"bucket": "2", "deletion-vectors.enabled": "true"}, false)},
		{"go input", goWritesPK(goPK{options: withRetention(map[string]string{"bucket": "2", "changelog-producer": "input"}), seed: 7})},
		{"go none", goWritesPK(goPK{options: withRetention(map[string]string{"bucket": "2", "changelog-producer": "none"}), seed: 7})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			template := filepath.Join(t.TempDir(), "w")
			tc.write(t, template)
			table := filepath.Join("db.db", "t")
			rowsBefore := javaRead(t, java, template)
			javaW := filepath.Join(t.TempDir(), "w")
			goW := filepath.Join(t.TempDir(), "w")
			for _, d := range []string{javaW, goW} {
				if err := os.CopyFS(d, os.DirFS(template)); err != nil {
					t.Fatal(err)
				}
			}
			out := java.Run(t, "expire-table", "--warehouse", javaW, "--database", "db", "--table", "t")
			fio, err := storage.NewLocal(goW)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := lakecore.NewCatalog(fio).OpenTable(ctx, "db", "t")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := tb.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Java %s; ours: %s", strings.TrimSpace(out), rep.Summary())
			if rep.SnapshotsExpired == 0 || rep.ChangelogsExpired == 0 {
				t.Fatalf("expired %d snapshots and %d changelogs: the case does not exercise the changelog expiry", rep.SnapshotsExpired, rep.ChangelogsExpired)
			}
			javaFiles := fixturetest.ListFiles(t, filepath.Join(javaW, table))
			goFiles := fixturetest.ListFiles(t, filepath.Join(goW, table))
			if d := diff(javaFiles, goFiles); d != "" {
				t.Errorf("files after Java's expiry vs ours:%s", d)
			}
			for _, hint := range []string{"snapshot/EARLIEST", "snapshot/LATEST", "changelog/EARLIEST", "changelog/LATEST"} {
				a, _ := os.ReadFile(filepath.Join(javaW, table, hint))
				b, _ := os.ReadFile(filepath.Join(goW, table, hint))
				if !bytes.Equal(a, b) {
					t.Errorf("%s: Java %q, ours %q", hint, a, b)
				}
			}
			if got := javaRead(t, java, goW); !slices.Equal(got, rowsBefore) {
				t.Errorf("Java reads %v after our expiry, %v before", got, rowsBefore)
			}
			earliest, err := os.ReadFile(filepath.Join(goW, table, "changelog", "EARLIEST"))
			if err != nil {
				t.Fatal(err)
			}
			stream := func(w string) string {
				return java.Run(t, "stream", "--warehouse", w, "--database", "db", "--table", "t", "--mode", "from-snapshot", "--snapshot", string(earliest))
			}
			a, b := stream(javaW), stream(goW)
			if a != b {
				t.Errorf("Java streams from changelog %s differently after Java's expiry and ours:\n%s\n%s", earliest, a, b)
			}
			t.Logf("Java streams %d plan lines from changelog %s on both", strings.Count(a, "\n"), earliest)
		})
	}
}

// TestInteropRemoveOrphanFilesPKMatchesJava plants orphans (a data file
// and a changelog file in a bucket directory, a manifest, an index file,
// stray files in snapshot/ and changelog/) into copies of primary-key
// tables, all files old, and cleans one copy with Java's
// LocalOrphanFilesClean and one with RemoveOrphanFiles: the same files
// remain, every file of a snapshot, tag or long-lived changelog among
// them (deletion-vector and hash index files, changelog files, the
// manifests a changelog-N keeps), and Java reads the same rows.
func TestInteropRemoveOrphanFilesPKMatchesJava(t *testing.T) {
	java := oracle.Java(t, oracle.Paimon1)
	ctx := context.Background()
	javaWrites := func(options map[string]string, setOptions map[string]string) func(t *testing.T, warehouse string) {
		return func(t *testing.T, warehouse string) {
			p := filepath.Join(t.TempDir(), "pk.json")
			if err := os.WriteFile(p, []byte(pkExpireSpec(t, options, false, 12, setOptions)), 0o644); err != nil {
				t.Fatal(err)
			}
			java.Run(t, "pk-write", "--warehouse", warehouse, "--database", "db", "--table", "t", "--spec", p)
		}
	}
	for _, tc := range []struct {
		name string
		// write builds the table; expire, when set, runs Java's writer
		// expiry on it first, leaving long-lived changelogs.
		write  func(t *testing.T, warehouse string)
		expire bool
	}{
		{"java deletion vectors", javaWrites(map[string]string{"bucket": "2", "deletion-vectors.enabled": "true"}, nil), false},
		{"java dynamic bucket", javaWrites(map[string]string{"bucket": "-1"}, nil), false},
		{"java lookup, decoupled changelog expired", javaWrites(map[string]string{"bucket": "1", "changelog-producer": "lookup"}, decoupledRetention), true},
		{"java none, decoupled changelog expired", javaWrites(map[string]string{"bucket": "2"}, decoupledRetention), true},
		{"go input, decoupled changelog expired", goWritesPK(goPK{options: withRetention(map[string]string{"bucket": "2", "changelog-producer": "input"}), compactEvery: 4}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			template := filepath.Join(t.TempDir(), "w")
			tc.write(t, template)
			if tc.expire {
				java.Run(t, "expire-table", "--warehouse", template, "--database", "db", "--table", "t")
			}
			table := filepath.Join(template, "db.db", "t")
			bucketDir := ""
			for _, f := range fixturetest.ListFiles(t, table) {
				if strings.HasPrefix(path.Base(path.Dir(f)), "bucket-") {
					bucketDir = path.Dir(f)
					break
				}
			}
			for _, p := range []string{
				path.Join(bucketDir, "data-00000000-orphan-0.parquet"),
				path.Join(bucketDir, "changelog-00000000-orphan-0.parquet"),
				"manifest/manifest-00000000-orphan-0",
				"index/index-00000000-orphan-0",
				"snapshot/.snapshot-99.00000000.tmp",
				"changelog/.changelog-99.00000000.tmp",
			} {
				mustWrite(t, filepath.Join(table, filepath.FromSlash(p)), "orphan")
			}
			setOld(t, table, time.Now().Add(-48*time.Hour))
			rowsBefore := javaRead(t, java, template)
			before := fixturetest.ListFiles(t, table)

			javaW := filepath.Join(t.TempDir(), "w")
			goW := filepath.Join(t.TempDir(), "w")
			for _, d := range []string{javaW, goW} {
				if err := os.CopyFS(d, os.DirFS(template)); err != nil {
					t.Fatal(err)
				}
				setOld(t, filepath.Join(d, "db.db", "t"), time.Now().Add(-48*time.Hour))
			}
			olderThan := time.Now().Add(-24 * time.Hour)
			out := java.Run(t, "remove-orphans", "--warehouse", javaW, "--database", "db", "--table", "t", "--older-than-millis", fmt.Sprint(olderThan.UnixMilli()))
			fio, err := storage.NewLocal(goW)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := lakecore.NewCatalog(fio).OpenTable(ctx, "db", "t")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := tb.RemoveOrphanFiles(ctx, maintain.RemoveOrphanFilesOptions{OlderThan: olderThan})
			if err != nil {
				t.Fatal(err)
			}
			javaFiles := fixturetest.ListFiles(t, filepath.Join(javaW, "db.db", "t"))
			goFiles := fixturetest.ListFiles(t, filepath.Join(goW, "db.db", "t"))
			t.Logf("Java %s; ours removed %d of %d files", strings.TrimSpace(out), len(rep.Removed), len(before))
			if d := diff(javaFiles, goFiles); d != "" {
				t.Errorf("files after Java's orphan cleanup vs ours:%s", d)
			}
			if len(rep.Removed) != 6 {
				t.Errorf("removed %v, want the 6 planted orphans", rep.Removed)
			}
			if got := javaRead(t, java, goW); !slices.Equal(got, rowsBefore) {
				t.Errorf("Java reads %v after our cleanup, %v before", got, rowsBefore)
			}
		})
	}
}
