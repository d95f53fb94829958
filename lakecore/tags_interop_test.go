//go:build interop

// The Java Paimon checks of tags and rollback (build tag interop: `make
// interop` runs them after tests/interop/setup.sh has built the oracle).

package lakecore_test

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
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// tagTable is db.t (id INT, grp STRING) partitioned by grp, written by
// lakecore: snapshots 1-3 appends, 4 a compaction, 5 an append.
func tagTable(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	wh := filepath.Join(t.TempDir(), "w")
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "db", "t", lakecore.TableSpec{
		Fields:        []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "grp", Type: types.StringType()}},
		PartitionKeys: []string{"grp"},
		Options:       map[string]string{"compaction.min.file-num": "2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := int32(0)
	commit := func(grps ...string) {
		w, err := tbl.NewWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range grps {
			id++
			if err := w.Write(ctx, []any{id, g}); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.NewCommitter("go").Commit(ctx, int64(id), msgs); err != nil {
			t.Fatal(err)
		}
	}
	commit("g1", "g2")
	commit("g1")
	commit("g1", "g3")
	if _, err := tbl.Compact(ctx, maintain.CompactOptions{}); err != nil {
		t.Fatal(err)
	}
	commit("g2")
	if ids, _ := tbl.Snapshots().ListIDs(ctx); fmt.Sprint(ids) != "[1 2 3 4 5]" {
		t.Fatalf("snapshots %v, want 1-5", ids)
	}
	return wh
}

func copyWarehouse(t *testing.T, wh string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "w")
	if err := os.CopyFS(dst, os.DirFS(wh)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func openT(t *testing.T, wh string) *lakecore.Table {
	t.Helper()
	tbl, err := lakecore.Open(context.Background(), wh, "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func javaRows(t *testing.T, java *oracle.Process, wh string, flags ...string) []string {
	t.Helper()
	out := strings.TrimSpace(java.Run(t, append([]string{"read", "--warehouse", wh, "--database", "db", "--table", "t"}, flags...)...))
	if out == "" {
		return nil
	}
	lines := strings.Split(out, "\n")
	sort.Strings(lines)
	return lines
}

// goRows renders lakecore's rows of snapshot id (0 = latest) as the
// oracle's canonical JSON lines.
func goRows(t *testing.T, tbl *lakecore.Table, id int64) []string {
	t.Helper()
	rows, err := tbl.ReadAll(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		g, _ := json.Marshal(r[1])
		out = append(out, fmt.Sprintf(`{"id":%d,"grp":%s}`, r[0], g))
	}
	sort.Strings(out)
	return out
}

func tableFiles(t *testing.T, wh string) []string {
	t.Helper()
	return fixturetest.ListFiles(t, filepath.Join(wh, "db.db", "t"))
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestInteropTagsMatchJava: tags lakecore creates are read by Java (its
// tag list, and reads at the tag after the snapshot expired); tags Java
// creates are byte for byte what MarshalTag writes; rollback and tag
// deletion by lakecore leave exactly the files Java's leave.
func TestInteropTagsMatchJava(t *testing.T) {
	java := oracle.Java(t, oracle.Paimon1)
	ctx := context.Background()
	wh := tagTable(t)
	tbl := openT(t, wh)
	rowsAt := map[int64][]string{}
	for id := int64(1); id <= 5; id++ {
		rowsAt[id] = goRows(t, tbl, id)
		if got := javaRows(t, java, wh, "--snapshot", fmt.Sprint(id)); !slices.Equal(got, rowsAt[id]) {
			t.Fatalf("snapshot %d: Java reads %v, lakecore %v", id, got, rowsAt[id])
		}
	}
	day := 24 * time.Hour
	if _, err := tbl.CreateTag(ctx, "go-1", 1, &day); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.CreateTag(ctx, "go-3", 3, nil); err != nil {
		t.Fatal(err)
	}
	args := []string{"--warehouse", wh, "--database", "db", "--table", "t"}
	java.Run(t, append([]string{"create-tag", "--tag", "java-2", "--snapshot", "2"}, args...)...)
	java.Run(t, append([]string{"create-tag", "--tag", "java-4r", "--snapshot", "4", "--time-retained-millis", fmt.Sprint(day.Milliseconds())}, args...)...)

	// Java's tag files are what MarshalTag writes.
	tagDir := filepath.Join(wh, "db.db", "t", "tag")
	for _, c := range []struct {
		tag      string
		id       int64
		retained *time.Duration
	}{{"java-2", 2, nil}, {"java-4r", 4, &day}} {
		javaTag := readFile(t, filepath.Join(tagDir, "tag-"+c.tag))
		s, err := tbl.Snapshots().Get(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		created := time.Now()
		if c.retained != nil {
			parsed, err := tbl.Tags().Get(ctx, c.tag)
			if err != nil {
				t.Fatal(err)
			}
			var p []int
			if err := json.Unmarshal(parsed.CreateTime, &p); err != nil || len(p) < 5 {
				t.Fatalf("Java's tagCreateTime %s: %v", parsed.CreateTime, err)
			}
			for len(p) < 7 {
				p = append(p, 0)
			}
			created = time.Date(p[0], time.Month(p[1]), p[2], p[3], p[4], p[5], p[6], time.Local)
		}
		ours, err := snapshot.MarshalTag(s, c.retained, created)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, javaTag) {
			t.Errorf("tag %s: Java wrote\n%s\nMarshalTag writes\n%s", c.tag, javaTag, ours)
		}
	}

	// Both list the same tags.
	wantTags := []string{`{"name":"go-1","snapshot":1}`, `{"name":"java-2","snapshot":2}`, `{"name":"go-3","snapshot":3}`, `{"name":"java-4r","snapshot":4}`}
	if got := strings.Split(strings.TrimSpace(java.Run(t, append([]string{"tags"}, args...)...)), "\n"); !slices.Equal(got, wantTags) {
		t.Fatalf("Java lists tags %v, want %v", got, wantTags)
	}
	goTags, err := tbl.Tags().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var goList []string
	for _, tg := range goTags {
		goList = append(goList, fmt.Sprintf(`{"name":%q,"snapshot":%d}`, tg.Name, tg.Snapshot.ID))
	}
	if !slices.Equal(goList, wantTags) {
		t.Fatalf("lakecore lists tags %v, want %v", goList, wantTags)
	}

	beforeExpiry := copyWarehouse(t, wh)

	// After lakecore expires snapshots 1-4, Java still reads every tag.
	if _, err := tbl.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMax: 1, RetainMin: 1, OlderThan: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := tbl.Snapshots().ListIDs(ctx); fmt.Sprint(ids) != "[5]" {
		t.Fatalf("snapshots after expiry %v", ids)
	}
	for _, tg := range []struct {
		name string
		id   int64
	}{{"go-1", 1}, {"java-2", 2}, {"go-3", 3}, {"java-4r", 4}} {
		if got := javaRows(t, java, wh, "--tag", tg.name); !slices.Equal(got, rowsAt[tg.id]) {
			t.Errorf("Java reads tag %s after expiry: %v, want the rows of snapshot %d %v", tg.name, got, tg.id, rowsAt[tg.id])
		}
	}

	// Rollback and tag deletion: lakecore and Java on copies of one table
	// leave the same files and hints, and both read the result alike.
	for _, c := range []struct {
		name string
		from string
		java []string
		run  func(tbl *lakecore.Table) error
	}{
		{"rollback to snapshot 3", beforeExpiry, []string{"rollback", "--snapshot", "3"}, func(tbl *lakecore.Table) error {
			_, err := tbl.RollbackTo(ctx, snapshot.RollbackTarget{SnapshotID: 3}, false)
			return err
		}},
		{"rollback to the tag of expired snapshot 2", wh, []string{"rollback", "--tag", "java-2"}, func(tbl *lakecore.Table) error {
			_, err := tbl.RollbackTo(ctx, snapshot.RollbackTarget{Tag: "java-2"}, false)
			return err
		}},
		{"rollback to expired snapshot 1 by id", wh, []string{"rollback", "--snapshot", "1"}, func(tbl *lakecore.Table) error {
			_, err := tbl.RollbackTo(ctx, snapshot.RollbackTarget{SnapshotID: 1}, false)
			return err
		}},
		{"delete the tag of an expired snapshot", wh, []string{"delete-tag", "--tag", "go-3"}, func(tbl *lakecore.Table) error {
			_, err := tbl.DeleteTag(ctx, "go-3", maintain.DeleteTagOptions{})
			return err
		}},
		{"delete the tag of a live snapshot", beforeExpiry, []string{"delete-tag", "--tag", "java-4r"}, func(tbl *lakecore.Table) error {
			_, err := tbl.DeleteTag(ctx, "java-4r", maintain.DeleteTagOptions{})
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			javaW, goW := copyWarehouse(t, c.from), copyWarehouse(t, c.from)
			java.Run(t, append(c.java, "--warehouse", javaW, "--database", "db", "--table", "t")...)
			goT := openT(t, goW)
			if err := c.run(goT); err != nil {
				t.Fatal(err)
			}
			javaFiles, goFiles := tableFiles(t, javaW), tableFiles(t, goW)
			if !slices.Equal(javaFiles, goFiles) {
				t.Errorf("files after Java:\n  %s\nafter lakecore:\n  %s", strings.Join(javaFiles, "\n  "), strings.Join(goFiles, "\n  "))
			}
			for _, f := range javaFiles {
				if strings.HasPrefix(f, "snapshot/") || strings.HasPrefix(f, "tag/") {
					if a, b := readFile(t, filepath.Join(javaW, "db.db", "t", f)), readFile(t, filepath.Join(goW, "db.db", "t", f)); !bytes.Equal(a, b) {
						t.Errorf("%s: Java\n%s\nlakecore\n%s", f, a, b)
					}
				}
			}
			jr, gr := javaRows(t, java, goW), goRows(t, openT(t, javaW), 0)
			if want := javaRows(t, java, javaW); !slices.Equal(jr, want) || !slices.Equal(gr, want) {
				t.Errorf("latest rows: Java on Java's table %v, Java on ours %v, lakecore on Java's %v", want, jr, gr)
			}
		})
	}
}

func openTable(t *testing.T, wh, db, table string) (*lakecore.Table, error) {
	t.Helper()
	return lakecore.Open(context.Background(), wh, db, table)
}

func itoa(n int64) string { return fmt.Sprint(n) }
