package command

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// plannedInput is one input file of a dry run's plan, or one file a
// COMPACT snapshot deletes: the bucket it is in, its name and level.
type plannedInput struct {
	partition string // dt=...
	bucket    int32
	name      string
	level     int32
}

var (
	taskLine  = regexp.MustCompile(`^task \d+: (\S+) bucket (\d+): .* -> \d+ files? at level (\d+): `)
	inputLine = regexp.MustCompile(`^(\S+\.parquet): level (\d+), [^,]+, (\d+) rows?, (merged and rewritten|moved up unchanged)$`)
)

// parsePlan reads the tasks of `compact --dry-run` on a primary-key table:
// the inputs, and the output level of each bucket.
func parsePlan(t *testing.T, lines []string) (inputs []plannedInput, outLevel map[string]int32, how map[string]int) {
	t.Helper()
	outLevel, how = map[string]int32{}, map[string]int{}
	var part string
	var bucket int32
	for _, l := range lines {
		if m := taskLine.FindStringSubmatch(l); m != nil {
			b, _ := strconv.Atoi(m[2])
			lv, _ := strconv.Atoi(m[3])
			part, bucket = m[1], int32(b)
			outLevel[fmt.Sprintf("%s/%d", part, b)] = int32(lv)
			continue
		}
		if m := inputLine.FindStringSubmatch(l); m != nil {
			if part == "" {
				t.Fatalf("input line before a task line: %q", l)
			}
			lv, _ := strconv.Atoi(m[2])
			inputs = append(inputs, plannedInput{part, bucket, m[1], int32(lv)})
			how[m[4]]++
		}
	}
	return inputs, outLevel, how
}

// TestCompactDryRunPrimaryKey: on a primary-key table (partitioned, two
// buckets, write-only so that level-0 files pile up), `compact --dry-run`
// lists per partition and bucket the files the compaction would take,
// with level, size and rows, and the output level; the compaction run
// next deletes exactly those files in its COMPACT snapshot and writes its
// files at that level, and the dry run changes no file of the table.
// Three rounds: universal compaction of overlapping level-0 files, a full
// compaction, and (with a small target-file-size) level-0 files of
// disjoint keys that are moved up unchanged rather than rewritten.
func TestCompactDryRunPrimaryKey(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "default", "kv", lakecore.TableSpec{
		Fields:      types.MustParse("ROW<dt STRING NOT NULL, k BIGINT NOT NULL, v STRING>").Fields,
		PrimaryKeys: []string{"dt", "k"}, PartitionKeys: []string{"dt"},
		Options: map[string]string{"bucket": "2", "write-only": "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	committer := tbl.NewCommitter("writer")
	ident := int64(0)
	// commits writes n commits of 12 changes each over two partitions;
	// keys(c, i) is the key of change i of commit c.
	commits := func(n int, keys func(c, i int) int64) {
		t.Helper()
		for c := range n {
			w, err := tbl.NewKeyValueWriter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 12 {
				kind := kv.Insert
				if i%5 == 4 && keys(c, i) < 100 {
					kind = kv.Delete
				}
				dt := []string{"2024-01-01", "2024-01-02"}[i%2]
				if err := w.Write(ctx, kind, []any{dt, keys(c, i), fmt.Sprintf("v%d-%d", c, i)}); err != nil {
					t.Fatal(err)
				}
			}
			msgs, err := w.Prepare(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ident++
			if _, err := committer.Commit(ctx, ident, msgs); err != nil {
				t.Fatal(err)
			}
			_ = w.Close()
		}
	}
	dir := filepath.Join(wh, "default.db", "kv")
	args := func(extra ...string) []string {
		return append([]string{"--warehouse", wh, "--table", "kv"}, extra...)
	}
	hows := map[string]int{}
	round := func(name string, extra ...string) {
		t.Helper()
		before := fixturetest.ListFiles(t, dir)
		r := paimon(t, "compact", args(append(extra, "--dry-run")...)...)
		if got := fixturetest.ListFiles(t, dir); !slices.Equal(got, before) {
			t.Fatalf("%s: the dry run changed the table's files:\nbefore %v\nafter  %v", name, before, got)
		}
		planned, outLevel, how := parsePlan(t, r.lines())
		if len(planned) == 0 {
			t.Fatalf("%s: the dry run plans nothing:\n%s", name, r)
		}
		maps.Copy(hows, how)
		last := r.lines()[len(r.lines())-1]
		if want := fmt.Sprintf("dry run, would rewrite %d files (", len(planned)); !strings.Contains(last, want) {
			t.Errorf("%s: summary %q lacks %q", name, last, want)
		}

		paimon(t, "compact", args(extra...)...)
		snap, err := tbl.Snapshots().Latest(ctx)
		if err != nil || snap.CommitKind != "COMPACT" {
			t.Fatalf("%s: latest snapshot %+v (%v), want the COMPACT one", name, snap, err)
		}
		r2 := manifest.NewReader(tbl.FileIO(), tbl.Path(), manifest.ReaderOptions{})
		metas, err := r2.ReadList(ctx, manifest.DeltaList(snap))
		if err != nil {
			t.Fatal(err)
		}
		var deleted []plannedInput
		for i := range metas {
			entries, err := r2.ReadManifest(ctx, &metas[i])
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				part := "dt=" + partitionValue(t, e.Partition)
				if e.Kind == manifest.FileKindDelete {
					deleted = append(deleted, plannedInput{part, e.Bucket, e.File.FileName, e.File.Level})
				} else if lv, ok := outLevel[fmt.Sprintf("%s/%d", part, e.Bucket)]; !ok || lv != e.File.Level {
					t.Errorf("%s: %s of %s bucket %d added at level %d; the dry run planned level %d (%v)", name, e.File.FileName, part, e.Bucket, e.File.Level, lv, ok)
				}
			}
		}
		cmp := func(a, b plannedInput) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }
		slices.SortFunc(planned, cmp)
		slices.SortFunc(deleted, cmp)
		if !slices.Equal(planned, deleted) {
			t.Fatalf("%s: the dry run planned\n  %v\nthe compaction deleted\n  %v\ndry run:\n%s", name, planned, deleted, r.stdout)
		}
	}

	commits(7, func(c, i int) int64 { return int64((c*7 + i*3) % 20) })
	round("universal")
	commits(2, func(c, i int) int64 { return int64((c*5 + i) % 20) })
	round("full", "--full")
	paimon(t, "alter", args("--set", "target-file-size=1 kb")...)
	commits(5, func(c, i int) int64 { return int64(100 + c*20 + i) })
	round("level-0 files moved up")

	// The append tables' overrides are refused rather than ignored.
	r := runCLI(t, nil, append([]string{"paimon", "compact"}, args("--target-file-size", "1mb", "--dry-run")...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "overrides are for append tables") {
		t.Errorf("--target-file-size on a primary-key table: %s", r)
	}
	if hows["merged and rewritten"] == 0 || hows["moved up unchanged"] == 0 {
		t.Errorf("inputs by what happens to them %v; want both kinds planned", hows)
	}
}
