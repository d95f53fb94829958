package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

// TestCorruptTableThroughInput damages one file of a table with three
// snapshots and tails it with the paimon input (bounded, from snapshot 1):
// the input must report an error that names the file (in the log, again
// and again), must not end the bounded read (which would be a silently
// shorter result) and must not panic; once the file is repaired the read
// completes with every row exactly once. lakecore's own tests cover the
// same damage through Table.ReadAll and the planner (lakecore TestCorrupt*,
// scan TestPlannerCorruptMetadata, read TestCorruptDataFiles); this is the
// path a pipeline takes.
func TestCorruptTableThroughInput(t *testing.T) {
	skipShort(t)
	type damage struct {
		name string
		// apply damages the table and returns the file to name in the
		// error and a function that repairs it.
		apply func(t *testing.T, wh string, tbl *lakecore.Table) (named string, repair func())
	}
	cases := []damage{
		{"truncated snapshot JSON", func(t *testing.T, wh string, tbl *lakecore.Table) (string, func()) {
			p := filepath.Join(wh, tbl.Path(), "snapshot", "snapshot-2")
			return "snapshot-2", cut(t, p, 0.5)
		}},
		{"damaged Avro block in a manifest", func(t *testing.T, wh string, tbl *lakecore.Table) (string, func()) {
			name := deltaManifest(t, tbl, 2)
			p := filepath.Join(wh, tbl.Path(), "manifest", name)
			return name, flip(t, p)
		}},
		{"Parquet data file cut short", func(t *testing.T, wh string, tbl *lakecore.Table) (string, func()) {
			name, dir := deltaDataFile(t, tbl, 3)
			return name, cut(t, filepath.Join(wh, tbl.Path(), dir, name), 0.6)
		}},
		{"LATEST hint pointing at nothing", func(t *testing.T, wh string, tbl *lakecore.Table) (string, func()) {
			p := filepath.Join(wh, tbl.Path(), "snapshot", "LATEST")
			old, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("9"), 0o644); err != nil {
				t.Fatal(err)
			}
			return "snapshot-9", func() {
				if err := os.WriteFile(p, old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wh, tbl := newLocalTable(t, "corrupt", nil)
			for s := int64(0); s < 3; s++ {
				appendRows(t, tbl, s*100, 100)
			}
			named, repair := c.apply(t, wh, tbl)
			// lakecore itself fails loudly too.
			if c.name != "truncated snapshot JSON" { // ReadAll reads the latest snapshot only
				if rows, err := tbl.ReadAll(context.Background(), 0); err == nil || !strings.Contains(err.Error(), named) {
					t.Errorf("ReadAll: %d rows, error %v; want an error naming %s", len(rows), err, named)
				}
			}
			in := startInput(t, fmt.Sprintf(`
  warehouse: %s
  database: rel
  table: corrupt
  scan_mode: from-snapshot
  scan_snapshot_id: 1
  bounded: true
  discovery_interval: 50ms
  batch_size: 50
`, wh), 0)
			defer in.stop(5 * time.Second)
			if !waitFor(20*time.Second, func() bool { return len(in.logs.grep(named)) >= 2 }) {
				t.Fatalf("no repeated error naming %s; logs:\n%s", named, strings.Join(firstN(in.logs.grep("level="), 20), "\n"))
			}
			if ended, err := in.ended(500 * time.Millisecond); ended {
				t.Fatalf("the bounded read ended (%v) with %d rows while %s is damaged", err, len(in.received()), named)
			}
			if n := len(in.logs.grep("panic")); n > 0 {
				t.Errorf("%d log lines mention a panic", n)
			}
			errLine := in.logs.grep(named)[0]
			before := len(in.received())
			repair()
			ended, err := in.ended(60 * time.Second)
			if !ended || err != nil {
				t.Fatalf("after the repair the read did not end: %v, %v", ended, err)
			}
			got := in.received()
			slices.Sort(got)
			want := make([]int64, 300)
			for i := range want {
				want[i] = int64(i)
			}
			if !slices.Equal(got, want) {
				t.Errorf("read %d rows after the repair (%d before it); want ids 0..299 once each", len(got), before)
			}
			t.Logf("%s: %d rows before the repair; error: %s", c.name, before, truncate(errLine, 300))
		})
	}
}

// deltaManifest returns the first manifest of snapshot id's delta.
func deltaManifest(t *testing.T, tbl *lakecore.Table, id int64) string {
	t.Helper()
	ctx := context.Background()
	s, err := tbl.Snapshots().Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	metas, err := manifest.ReadFileMetas(ctx, tbl.FileIO(), tbl.Path(), s.DeltaManifestList)
	if err != nil || len(metas) == 0 {
		t.Fatalf("delta of snapshot %d: %v", id, err)
	}
	return metas[0].FileName
}

// deltaDataFile returns a data file snapshot id added and its directory.
func deltaDataFile(t *testing.T, tbl *lakecore.Table, id int64) (string, string) {
	t.Helper()
	ctx := context.Background()
	s, err := tbl.Snapshots().Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tbl.Planner().Delta(ctx, s, nil)
	if err != nil || len(plan.Splits) == 0 {
		t.Fatalf("delta of snapshot %d: %v", id, err)
	}
	sp := plan.Splits[0]
	return sp.Files[0].FileName, fmt.Sprintf("p=%v/bucket-%d", sp.PartitionValues[0], sp.Bucket)
}

// cut keeps the first fraction of the file and returns the repair.
func cut(t *testing.T, p string, keep float64) func() {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data[:int(float64(len(data))*keep)], 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// flip inverts 8 bytes of the last Avro data block (before the 16-byte
// sync marker that ends the file; the size stays) and returns the repair.
func flip(t *testing.T, p string) func() {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(data)
	for i := len(bad) - 16 - 12; i < len(bad)-16-4; i++ {
		bad[i] ^= 0xff
	}
	if err := os.WriteFile(p, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
