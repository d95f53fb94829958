//go:build interop

// The Java Paimon checks of maintenance (build tag interop: `make interop`
// runs them after tests/interop/setup.sh has built the oracle).

package maintain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/oracle"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
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
