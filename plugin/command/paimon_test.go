package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestMain removes the binary the CLI tests run (binarytest.Path builds it
// on first use).
func TestMain(m *testing.M) {
	code := m.Run()
	binarytest.Remove()
	os.Exit(code)
}

// cliResult is one run of the binary.
type cliResult struct {
	stdout, stderr string
	code           int
}

// lines returns stdout's lines with runs of spaces collapsed, so that
// expectations do not depend on column widths.
func (r cliResult) lines() []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(r.stdout, "\n"), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func runCLI(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	bin := binarytest.Path(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", args, err)
	}
	for _, bad := range []string{"goroutine ", "panic:", ".go:"} {
		if strings.Contains(r.stderr, bad) {
			t.Fatalf("stderr of %v looks like a Go stack trace (%q):\n%s", args, bad, r.stderr)
		}
	}
	return r
}

// paimon runs `benthos-paimon paimon <cmd> <args>` and fails the test
// unless it exits 0.
func paimon(t *testing.T, cmd string, args ...string) cliResult {
	t.Helper()
	r := runCLI(t, nil, append([]string{"paimon", cmd}, args...)...)
	if r.code != 0 {
		t.Fatalf("paimon %s %v: %s", cmd, args, r)
	}
	return r
}

// requireLines fails unless want appears in got as consecutive lines.
func requireLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	for i := 0; i+len(want) <= len(got); i++ {
		if slices.Equal(got[i:i+len(want)], want) {
			return
		}
	}
	t.Fatalf("output lacks the lines\n  %s\ngot:\n  %s", strings.Join(want, "\n  "), strings.Join(got, "\n  "))
}

// testTable is an append table default.events (id BIGINT NOT NULL, dt
// STRING, msg STRING) partitioned by dt, written with lakecore.
type testTable struct {
	t         *testing.T
	warehouse string
	tbl       *lakecore.Table
	ident     int64
	nextID    int64
}

const testUser = "cli-test"

func newTestTable(t *testing.T, warehouse string, s3 storage.S3Config, options map[string]string) *testTable {
	t.Helper()
	ctx := context.Background()
	cat, err := lakecore.OpenCatalog(ctx, warehouse, s3)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "default", "events", lakecore.TableSpec{
		Fields:        types.MustParse("ROW<id BIGINT NOT NULL, dt STRING, msg STRING>").Fields,
		PartitionKeys: []string{"dt"},
		Options:       options,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &testTable{t: t, warehouse: warehouse, tbl: tbl}
}

// commit appends n rows to each partition in dts, one file per partition,
// as one APPEND snapshot.
func (tt *testTable) commit(n int, dts ...string) *snapshot.Snapshot {
	tt.t.Helper()
	ctx := context.Background()
	w, err := tt.tbl.NewWriter(ctx)
	if err != nil {
		tt.t.Fatal(err)
	}
	for _, dt := range dts {
		for range n {
			tt.nextID++
			if err := w.Write(ctx, []any{tt.nextID, dt, fmt.Sprintf("message %d", tt.nextID)}); err != nil {
				tt.t.Fatal(err)
			}
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		tt.t.Fatal(err)
	}
	tt.ident++
	snap, err := tt.tbl.NewCommitter(testUser).Commit(ctx, tt.ident, msgs)
	if err != nil {
		tt.t.Fatal(err)
	}
	return snap
}

// rows returns the table's rows as "id/dt/msg", sorted.
func (tt *testTable) rows() []string {
	tt.t.Helper()
	rows, err := tt.tbl.ReadAll(context.Background(), 0)
	if err != nil {
		tt.t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%v/%v/%v", r[0], r[1], r[2])
	}
	sort.Strings(out)
	return out
}

// live returns the live files of the latest snapshot.
func (tt *testTable) live() []manifest.Entry {
	tt.t.Helper()
	ctx := context.Background()
	snap, err := tt.tbl.Snapshots().Latest(ctx)
	if err != nil {
		tt.t.Fatal(err)
	}
	entries, err := tt.tbl.Planner().LiveEntries(ctx, snap, nil)
	if err != nil {
		tt.t.Fatal(err)
	}
	return entries
}

func (tt *testTable) args(extra ...string) []string {
	return append([]string{"--warehouse", tt.warehouse, "--table", "events"}, extra...)
}

func (tt *testTable) dir() string { return filepath.Join(tt.warehouse, "default.db", "events") }

// countByPartition counts live files per partition directory name.
func countByPartition(entries []manifest.Entry, dtOf func([]byte) string) map[string]int {
	m := map[string]int{}
	for _, e := range entries {
		m[dtOf(e.Partition)]++
	}
	return m
}

func TestInfoSnapshotsFiles(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, nil)
	s1 := tt.commit(2, "2024-01-01")
	s2 := tt.commit(3, "2024-01-02")
	s3 := tt.commit(1, "2024-01-01", "2024-01-02")
	if err := tt.tbl.Consumers().Put(context.Background(), "reader-1", snapshot.Consumer{NextSnapshot: 2}); err != nil {
		t.Fatal(err)
	}
	snaps := []*snapshot.Snapshot{s1, s2, s3}

	// The files per partition, as info and files should show them.
	files := filesOnDisk(t, tt)
	partFiles := map[string][]fileOnDisk{}
	for _, f := range files {
		partFiles[f.dt] = append(partFiles[f.dt], f)
	}
	sum := func(fs []fileOnDisk) (n, rows, bytes int64) {
		for _, f := range fs {
			n++
			rows += f.rows
			bytes += f.size
		}
		return
	}

	t.Run("info", func(t *testing.T) {
		r := paimon(t, "info", tt.args()...)
		got := r.lines()
		requireLines(t, got,
			"Table: default.events",
			"Location: "+tt.warehouse+"/default.db/events",
			"Schema: 0 (highest field id 2)",
			"Fields:",
			"ID NAME TYPE",
			"0 id BIGINT NOT NULL",
			"1 dt STRING",
			"2 msg STRING",
			"Partition keys: dt",
			"Options:",
			"bucket = -1",
			"file.format = parquet",
			"Snapshots: 3 (earliest 1, latest 3)",
			fmt.Sprintf("Latest snapshot: 3 APPEND at %s, commit user %s, identifier 3, 7 total records", formatTime(s3.TimeMillis), testUser),
			"Files of snapshot 3:",
			"PARTITION BUCKETS FILES ROWS BYTES SIZE",
		)
		n1, r1, b1 := sum(partFiles["2024-01-01"])
		n2, r2, b2 := sum(partFiles["2024-01-02"])
		requireLines(t, got,
			fmt.Sprintf("dt=2024-01-01 1 %d %d %d %s", n1, r1, b1, formatBytes(b1)),
			fmt.Sprintf("dt=2024-01-02 1 %d %d %d %s", n2, r2, b2, formatBytes(b2)),
			fmt.Sprintf("total 2 %d %d %d %s", n1+n2, r1+r2, b1+b2, formatBytes(b1+b2)),
			"Consumers:",
			"ID NEXT SNAPSHOT UPDATED (UTC) STATE",
		)
		if n1 != 2 || r1 != 3 || n2 != 2 || r2 != 4 {
			t.Fatalf("table has %d files/%d rows in 2024-01-01 and %d/%d in 2024-01-02, want 2/3 and 2/4", n1, r1, n2, r2)
		}
		var consumer string
		for _, l := range got {
			if strings.HasPrefix(l, "reader-1 ") {
				consumer = l
			}
		}
		if !strings.HasPrefix(consumer, "reader-1 2 ") || !strings.HasSuffix(consumer, " ok") {
			t.Fatalf("consumer line %q, want reader-1 at next snapshot 2, ok", consumer)
		}
		if last := got[len(got)-1]; last != fmt.Sprintf("default.events: 3 fields, 3 snapshots, 4 files (%s) in 2 partitions", formatBytes(b1+b2)) {
			t.Fatalf("summary line %q", last)
		}

		var j struct {
			Fields []struct {
				ID         int
				Name, Type string
			}
			PartitionKeys []string `json:"partition_keys"`
			Snapshots     struct{ Count, Earliest, Latest int64 }
			Partitions    []struct {
				Partition          string
				Files, Rows, Bytes int64
			}
			Consumers []struct {
				ID           string
				NextSnapshot int64 `json:"next_snapshot"`
				Expired      bool
			}
		}
		r = paimon(t, "info", tt.args("--json")...)
		if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
			t.Fatalf("info --json: %v\n%s", err, r.stdout)
		}
		wantFields := fmt.Sprint([]any{0, "id", "BIGINT NOT NULL", 1, "dt", "STRING", 2, "msg", "STRING"})
		var gotFields []any
		for _, f := range j.Fields {
			gotFields = append(gotFields, f.ID, f.Name, f.Type)
		}
		if fmt.Sprint(gotFields) != wantFields || fmt.Sprint(j.PartitionKeys) != "[dt]" ||
			j.Snapshots.Count != 3 || j.Snapshots.Earliest != 1 || j.Snapshots.Latest != 3 ||
			len(j.Partitions) != 2 || j.Partitions[0].Files != n1 || j.Partitions[1].Bytes != b2 ||
			len(j.Consumers) != 1 || j.Consumers[0].NextSnapshot != 2 || j.Consumers[0].Expired {
			t.Fatalf("info --json = %+v", j)
		}
	})

	t.Run("snapshots", func(t *testing.T) {
		r := paimon(t, "snapshots", tt.args()...)
		want := []string{"ID KIND COMMIT TIME (UTC) COMMIT USER IDENTIFIER SCHEMA TOTAL RECORDS DELTA RECORDS"}
		totals := []int{2, 5, 7}
		deltas := []int{2, 3, 2}
		for i, s := range snaps {
			want = append(want, fmt.Sprintf("%d APPEND %s %s %d 0 %d %d", i+1, formatTime(s.TimeMillis), testUser, i+1, totals[i], deltas[i]))
		}
		want = append(want, "default.events: 3 snapshots (1..3)")
		if got := r.lines(); !slices.Equal(got, want) {
			t.Fatalf("snapshots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		r = paimon(t, "snapshots", tt.args("--json")...)
		var rows []snapshotRow
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatal(err)
		}
		for i, s := range snaps {
			got, _ := json.Marshal(rows[i])
			want, _ := json.Marshal(newSnapshotRow(s))
			if string(got) != string(want) || *rows[i].TotalRecordCount != int64(totals[i]) ||
				*rows[i].DeltaRecordCount != int64(deltas[i]) || rows[i].CommitKind != "APPEND" {
				t.Fatalf("snapshot %d: %s, want %s", i+1, got, want)
			}
		}
		if len(rows) != 3 || strings.TrimSpace(r.stderr) != "default.events: 3 snapshots (1..3)" {
			t.Fatalf("%d rows, stderr %q", len(rows), r.stderr)
		}
	})

	t.Run("files", func(t *testing.T) {
		r := paimon(t, "files", tt.args()...)
		want := []string{"PARTITION BUCKET FILE ROWS BYTES SEQUENCE LEVEL"}
		for _, f := range files {
			want = append(want, fmt.Sprintf("dt=%s 0 %s %d %d %d-%d 0", f.dt, f.name, f.rows, f.size, f.minSeq, f.maxSeq))
		}
		_, rows, bytes := sum(files)
		want = append(want, fmt.Sprintf("default.events: 4 files, %d rows, %s in 2 partitions (snapshot 3)", rows, formatBytes(bytes)))
		if got := r.lines(); !slices.Equal(got, want) {
			t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		r = paimon(t, "files", tt.args("--partition", "dt=2024-01-02", "--json")...)
		var got []fileRow
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range got {
			if f.Partition != "dt=2024-01-02" || f.FilePath != "default.db/events/dt=2024-01-02/bucket-0/"+f.FileName || f.FileFormat != "parquet" {
				t.Fatalf("file %+v", f)
			}
			names = append(names, f.FileName)
		}
		var want2 []string
		for _, f := range partFiles["2024-01-02"] {
			want2 = append(want2, f.name)
		}
		if !slices.Equal(names, want2) {
			t.Fatalf("files of dt=2024-01-02: %v, want %v", names, want2)
		}

		// An older snapshot has fewer files.
		first, err := tt.tbl.Planner().LiveEntries(context.Background(), s1, nil)
		if err != nil || len(first) != 1 {
			t.Fatalf("snapshot 1: %d files, %v", len(first), err)
		}
		r = paimon(t, "files", tt.args("--snapshot", "1")...)
		if got := r.lines(); len(got) != 3 || got[1] != fmt.Sprintf("dt=2024-01-01 0 %s 2 %d 0-1 0", first[0].File.FileName, first[0].File.FileSize) {
			t.Fatalf("files of snapshot 1:\n%s", r.stdout)
		}
	})
}

// fileOnDisk is a live data file, with its partition value.
type fileOnDisk struct {
	dt, name       string
	rows, size     int64
	minSeq, maxSeq int64
}

// filesOnDisk lists the latest snapshot's live files in the order `files`
// prints them (partition, bucket, sequence, name) and checks that each
// exists with its recorded size.
func filesOnDisk(t *testing.T, tt *testTable) []fileOnDisk {
	t.Helper()
	var out []fileOnDisk
	for _, e := range tt.live() {
		dt := partitionValue(t, e.Partition)
		fi, err := os.Stat(filepath.Join(tt.dir(), "dt="+dt, "bucket-0", e.File.FileName))
		if err != nil || fi.Size() != e.File.FileSize {
			t.Fatalf("live file %s: %v (size %d, recorded %d)", e.File.FileName, err, fi.Size(), e.File.FileSize)
		}
		out = append(out, fileOnDisk{dt: dt, name: e.File.FileName, rows: e.File.RowCount, size: e.File.FileSize,
			minSeq: e.File.MinSequenceNumber, maxSeq: e.File.MaxSequenceNumber})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].dt != out[j].dt {
			return out[i].dt < out[j].dt
		}
		if out[i].minSeq != out[j].minSeq {
			return out[i].minSeq < out[j].minSeq
		}
		return out[i].name < out[j].name
	})
	return out
}

func partitionValue(t *testing.T, part []byte) string {
	t.Helper()
	vals, err := binrow.Deserialize([]types.DataType{types.StringType()}, part)
	if err != nil {
		t.Fatal(err)
	}
	return vals[0].(string)
}

// requirePrefixed fails unless a line of got starts with prefix and
// contains each of parts.
func requirePrefixed(t *testing.T, got []string, prefix string, parts ...string) {
	t.Helper()
	for _, l := range got {
		if strings.HasPrefix(l, prefix) {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				return
			}
		}
	}
	t.Fatalf("no line %q...%q in\n  %s", prefix, parts, strings.Join(got, "\n  "))
}

// dataFiles lists the parquet files under the table directory, relative
// to it.
func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range fixturetest.ListFiles(t, dir) {
		if strings.HasSuffix(f, ".parquet") {
			out = append(out, f)
		}
	}
	return out
}

func TestCompact(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, nil)
	for range 6 {
		tt.commit(2, "2024-01-01")
	}
	for range 3 {
		tt.commit(2, "2024-01-02")
	}
	rowsBefore := tt.rows()
	filesBefore := dataFiles(t, tt.dir())
	if len(filesBefore) != 9 {
		t.Fatalf("%d data files before compaction, want 9", len(filesBefore))
	}

	// A dry run plans the one task (6 small files in 2024-01-01; 3 in
	// 2024-01-02 are fewer than compaction.min.file-num 5) and changes
	// nothing.
	r := paimon(t, "compact", tt.args("--dry-run")...)
	if got := r.lines(); !strings.HasPrefix(got[len(got)-1], "compact default.db/events: dry run, would rewrite 6 files (") ||
		!strings.Contains(got[len(got)-1], "in 1 task") {
		t.Fatalf("dry run:\n%s", r)
	}
	// It lists the task: its files in read order, rows and expected output.
	var names []string
	var size int64
	for _, f := range filesOnDisk(t, tt) {
		if f.dt == "2024-01-01" {
			names = append(names, f.name)
			size += f.size
		}
	}
	var task string
	for _, l := range r.lines() {
		if strings.HasPrefix(l, "task 1: ") {
			task = l
		}
	}
	head, list, _ := strings.Cut(task, " -> 1 file: ")
	listed := strings.Fields(list)
	slices.Sort(listed)
	if head != fmt.Sprintf("task 1: dt=2024-01-01 bucket 0: 6 files (%s), 12 rows", formatBytes(size)) || !slices.Equal(listed, names) {
		t.Fatalf("dry run task line %q, want the 6 files %v", task, names)
	}
	requireLines(t, r.lines(), fmt.Sprintf("dt=2024-01-01: 6 files (%s) -> 1 file (%s)", formatBytes(size), formatBytes(size)))
	if got := dataFiles(t, tt.dir()); !slices.Equal(got, filesBefore) {
		t.Fatalf("dry run changed the files: %v", got)
	}

	r = paimon(t, "compact", tt.args()...)
	got := r.lines()
	requirePrefixed(t, got, "dt=2024-01-01: 6 files (", ") -> 1 file (")
	requirePrefixed(t, got, "dt=2024-01-02: 3 files (", ") -> 3 files (")
	if last := got[len(got)-1]; !strings.HasPrefix(last, "compact default.db/events: rewrote 6 files (") ||
		!strings.Contains(last, "into 1 file (") || !strings.Contains(last, "in 1 task, snapshot 10") {
		t.Fatalf("summary %q\n%s", last, r)
	}
	if !strings.Contains(r.stderr, "compact default.events: rewrite 1/1\n") {
		t.Fatalf("no progress on stderr:\n%s", r.stderr)
	}
	byPart := countByPartition(tt.live(), func(p []byte) string { return partitionValue(t, p) })
	if byPart["2024-01-01"] != 1 || byPart["2024-01-02"] != 3 || len(tt.live()) != 4 {
		t.Fatalf("live files after compaction: %v, want 1 in 2024-01-01 and 3 in 2024-01-02", byPart)
	}
	if got := tt.rows(); !slices.Equal(got, rowsBefore) {
		t.Fatalf("rows changed by compaction:\n%v\nwant\n%v", got, rowsBefore)
	}
	r = paimon(t, "snapshots", tt.args()...)
	if l := r.lines(); !strings.HasPrefix(l[len(l)-2], "10 COMPACT ") {
		t.Fatalf("last snapshot is not COMPACT:\n%s", r.stdout)
	}

	// The other partition alone, with a lower compaction.min.file-num.
	r = paimon(t, "compact", tt.args("--partition", "dt=2024-01-02", "--min-file-num", "2")...)
	if l := r.lines(); !strings.Contains(l[len(l)-1], "rewrote 3 files (") || !strings.Contains(l[len(l)-1], "into 1 file") {
		t.Fatalf("compact dt=2024-01-02:\n%s", r)
	}
	if n := len(tt.live()); n != 2 {
		t.Fatalf("%d live files, want 2", n)
	}
	if got := tt.rows(); !slices.Equal(got, rowsBefore) {
		t.Fatal("rows changed by the second compaction")
	}
	// The replaced files stay until snapshot expiry removes them.
	if got := dataFiles(t, tt.dir()); len(got) != 11 {
		t.Fatalf("%d data files on disk, want 9 + 2", len(got))
	}

	r = paimon(t, "compact", tt.args("--partition", "dt=1999-01-01")...)
	if !strings.Contains(r.stdout, "no partition matches --partition dt=1999-01-01; nothing to compact") {
		t.Fatalf("unmatched partition:\n%s", r)
	}
}

func TestExpireSnapshots(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, nil)
	for range 5 {
		tt.commit(1, "2024-01-01")
	}
	replaced := dataFiles(t, tt.dir())
	paimon(t, "compact", tt.args()...) // snapshot 6 replaces the 5 files
	compacted := dataFiles(t, tt.dir())
	rows := tt.rows()

	// The table's defaults (num-retained.min 10, time-retained 1 h) keep
	// everything.
	r := paimon(t, "expire-snapshots", tt.args()...)
	if l := r.lines(); !strings.HasPrefix(l[len(l)-1], "expire-snapshots default.db/events: nothing to expire in ") {
		t.Fatalf("default expiry:\n%s", r)
	}

	r = paimon(t, "expire-snapshots", tt.args("--retain-max", "1", "--verbose")...)
	got := r.lines()
	if last := got[len(got)-1]; !strings.HasPrefix(last, "expire-snapshots default.db/events: expired 5 snapshots [1, 6), removed 5 data files (") {
		t.Fatalf("summary %q\n%s", last, r)
	}
	for _, f := range replaced {
		requireLines(t, got, "removed default.db/events/"+f)
	}
	if !strings.Contains(r.stderr, "note: --retain-min lowered to 1 (the table's snapshot.num-retained.min is 10)") {
		t.Fatalf("stderr: %s", r.stderr)
	}
	ids, err := tt.tbl.Snapshots().ListIDs(context.Background())
	if err != nil || !slices.Equal(ids, []int64{6}) {
		t.Fatalf("snapshots left: %v, %v; want [6]", ids, err)
	}
	left := dataFiles(t, tt.dir())
	want := slices.DeleteFunc(slices.Clone(compacted), func(f string) bool { return slices.Contains(replaced, f) })
	if !slices.Equal(left, want) || len(left) != 1 {
		t.Fatalf("data files left %v, want %v", left, want)
	}
	snapDir, _ := os.ReadDir(filepath.Join(tt.dir(), "snapshot"))
	var names []string
	for _, e := range snapDir {
		names = append(names, e.Name())
	}
	if fmt.Sprint(names) != "[EARLIEST LATEST snapshot-6]" {
		t.Fatalf("snapshot directory: %v", names)
	}
	if got := tt.rows(); !slices.Equal(got, rows) {
		t.Fatal("rows changed by expiry")
	}
	r = paimon(t, "snapshots", tt.args()...)
	if l := r.lines(); len(l) != 3 || !strings.HasPrefix(l[1], "6 COMPACT ") {
		t.Fatalf("snapshots after expiry:\n%s", r.stdout)
	}
}

func TestExpirePartitions(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, nil)
	today := time.Now().Format("2006-01-02")
	tt.commit(2, "2020-01-01", "2020-01-02", today)
	tt.commit(1, "2020-01-02", today)

	r := paimon(t, "expire-partitions", tt.args("--expiration-time", "7d", "--dry-run")...)
	if l := r.lines(); !strings.HasPrefix(l[len(l)-1], "expire-partitions default.db/events: dry run, would drop 2 partitions (3 files (") {
		t.Fatalf("dry run:\n%s", r)
	}
	// It names every partition with its files and rows.
	sizes := map[string]int64{}
	for _, f := range filesOnDisk(t, tt) {
		sizes[f.dt] += f.size
	}
	requireLines(t, r.lines(),
		fmt.Sprintf("would drop dt=2020-01-01: 1 file (%s), 2 rows", formatBytes(sizes["2020-01-01"])),
		fmt.Sprintf("would drop dt=2020-01-02: 2 files (%s), 3 rows", formatBytes(sizes["2020-01-02"])))
	if len(tt.live()) != 5 {
		t.Fatal("the dry run dropped files")
	}

	r = paimon(t, "expire-partitions", tt.args("--expiration-time", "7 d")...)
	if l := r.lines(); !strings.HasPrefix(l[len(l)-1], "expire-partitions default.db/events: dropped 2 partitions (3 files (") ||
		!strings.Contains(l[len(l)-1], "in snapshot 3") {
		t.Fatalf("expire-partitions:\n%s", r)
	}
	r = paimon(t, "snapshots", tt.args()...)
	if l := r.lines(); !strings.HasPrefix(l[3], "3 OVERWRITE ") || !strings.HasSuffix(l[3], " 3 -5") {
		t.Fatalf("snapshot 3 is not an OVERWRITE dropping 5 rows:\n%s", r.stdout)
	}
	for _, row := range tt.rows() {
		if !strings.Contains(row, "/"+today+"/") {
			t.Fatalf("row %s of an expired partition is still live", row)
		}
	}
	if n := len(tt.rows()); n != 3 {
		t.Fatalf("%d rows left, want 3 of %s", n, today)
	}
	r = paimon(t, "info", tt.args()...)
	requireLines(t, r.lines(), "PARTITION BUCKETS FILES ROWS BYTES SIZE")
	if !strings.Contains(r.stdout, "in 1 partition\n") {
		t.Fatalf("info after partition expiry:\n%s", r.stdout)
	}

	// Without the flag or the table option there is nothing to go by.
	r = runCLI(t, nil, append([]string{"paimon", "expire-partitions"}, tt.args()...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "paimon expire-partitions: give --expiration-time (the table has no partition.expiration-time)") {
		t.Fatalf("no expiration time: %s", r)
	}
}

func TestRemoveOrphanFiles(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, nil)
	tt.commit(2, "2024-01-01")
	tt.commit(2, "2024-01-01")
	live := dataFiles(t, tt.dir())
	bucket := filepath.Join(tt.dir(), "dt=2024-01-01", "bucket-0")
	old := filepath.Join(bucket, "data-00000000-0000-0000-0000-000000000000-0.parquet")
	young := filepath.Join(bucket, "data-11111111-1111-1111-1111-111111111111-0.parquet")
	oldTmp := filepath.Join(tt.dir(), "snapshot", ".snapshot-3.a1b2.tmp")
	for _, f := range []string{old, young, oldTmp} {
		if err := os.WriteFile(f, []byte("orphan"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	twoDaysAgo := time.Now().Add(-48 * time.Hour)
	for _, f := range []string{old, oldTmp} {
		if err := os.Chtimes(f, twoDaysAgo, twoDaysAgo); err != nil {
			t.Fatal(err)
		}
	}

	r := paimon(t, "remove-orphan-files", tt.args("--dry-run")...)
	want := []string{
		"default.db/events/dt=2024-01-01/bucket-0/" + filepath.Base(old),
		"default.db/events/snapshot/" + filepath.Base(oldTmp),
	}
	got := r.lines()
	requireLines(t, got, want...)
	if last := got[len(got)-1]; !strings.HasPrefix(last, "remove-orphan-files default.db/events: dry run, would remove 2 files (12 B) in ") {
		t.Fatalf("summary %q", last)
	}
	for _, f := range []string{old, young, oldTmp} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("dry run removed %s", f)
		}
	}

	r = paimon(t, "remove-orphan-files", tt.args("-v")...)
	got = r.lines()
	requireLines(t, got, "removed "+want[0], "removed "+want[1])
	if last := got[len(got)-1]; !strings.HasPrefix(last, "remove-orphan-files default.db/events: removed 2 files (12 B) in ") {
		t.Fatalf("summary %q", last)
	}
	for _, f := range []string{old, oldTmp} {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s still there: %v", f, err)
		}
	}
	if _, err := os.Stat(young); err != nil {
		t.Fatalf("the young orphan was removed: %v", err)
	}
	wantFiles := append(slices.Clone(live), "dt=2024-01-01/bucket-0/"+filepath.Base(young))
	sort.Strings(wantFiles)
	if got := dataFiles(t, tt.dir()); !slices.Equal(got, wantFiles) {
		t.Fatalf("data files after cleanup: %v", got)
	}
	if n := len(tt.rows()); n != 4 {
		t.Fatalf("%d rows after cleanup, want 4", n)
	}

	// A shorter --older-than takes the younger file too.
	tenMinutesAgo := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(young, tenMinutesAgo, tenMinutesAgo); err != nil {
		t.Fatal(err)
	}
	r = paimon(t, "remove-orphan-files", tt.args("--older-than", "5min")...)
	if l := r.lines(); !strings.HasPrefix(l[len(l)-1], "remove-orphan-files default.db/events: removed 1 file (6 B)") {
		t.Fatalf("older-than now:\n%s", r)
	}
}

func TestJavaFixture(t *testing.T) {
	wh := fixturetest.CopyWarehouse(t, "cpp-java11-append-fixed-bucket-complex-types")
	args := []string{"--warehouse", wh, "--table", "append_complex_data"}

	r := paimon(t, "info", args...)
	requireLines(t, r.lines(),
		"Fields:",
		"ID NAME TYPE",
		"0 f1 INT",
		"1 f2 INT",
		"2 f3 DATE",
		"3 f4 TIMESTAMP(9)",
		"4 f5 DECIMAL(23, 5)",
		"5 f6 BYTES",
		"Partition keys: f1",
		"Options:",
		"bucket = 2",
		"bucket-key = f2",
		"file.format = parquet",
		"manifest.format = avro",
		"parquet.use-native = false",
		"Snapshots: 4 (earliest 1, latest 4)",
		"Latest snapshot: 4 COMPACT at 2025-08-25T09:13:28.950Z, commit user d6fa8cca-d72a-461c-8e5d-8786c0243850, identifier 3, 8 total records",
		"Files of snapshot 4:",
		"PARTITION BUCKETS FILES ROWS BYTES SIZE",
		"f1=10 1 1 6 1358 1.3 KiB",
		"f1=20 2 2 2 2363 2.3 KiB",
		"total 3 3 8 3721 3.6 KiB",
		"Consumers: none",
		"Tags: none",
		"default.append_complex_data: 6 fields, 4 snapshots, 3 files (3.6 KiB) in 2 partitions",
	)

	r = paimon(t, "snapshots", args...)
	user := "d6fa8cca-d72a-461c-8e5d-8786c0243850"
	if got, want := r.lines(), []string{
		"ID KIND COMMIT TIME (UTC) COMMIT USER IDENTIFIER SCHEMA TOTAL RECORDS DELTA RECORDS",
		"1 APPEND 2025-08-25T09:13:28.670Z " + user + " 1 0 3 3",
		"2 APPEND 2025-08-25T09:13:28.844Z " + user + " 2 0 7 4",
		"3 APPEND 2025-08-25T09:13:28.931Z " + user + " 3 0 8 1",
		"4 COMPACT 2025-08-25T09:13:28.950Z " + user + " 3 0 8 0",
		"default.append_complex_data: 4 snapshots (1..4)",
	}; !slices.Equal(got, want) {
		t.Fatalf("snapshots:\n%s", r.stdout)
	}

	r = paimon(t, "files", args...)
	if got, want := r.lines(), []string{
		"PARTITION BUCKET FILE ROWS BYTES SEQUENCE LEVEL",
		"f1=10 0 data-f8754699-0c43-4e53-be00-7e8af1754913-0.parquet 6 1358 0-5 0",
		"f1=20 0 data-ac0894ca-fc13-49c8-bb22-4556c8ee416c-0.parquet 1 1236 0-0 0",
		"f1=20 1 data-e0a6a424-e3b0-47ba-b259-d033fc01e87c-0.parquet 1 1127 0-0 0",
		"default.append_complex_data: 3 files, 8 rows, 3.6 KiB in 2 partitions (snapshot 4)",
	}; !slices.Equal(got, want) {
		t.Fatalf("files:\n%s", r.stdout)
	}

	// Expiring snapshots 1-3 deletes the three files snapshot 4 compacted.
	table := filepath.Join(wh, "default.db", "append_complex_data")
	r = paimon(t, "expire-snapshots", append(args, "--retain-max", "1")...)
	if l := r.lines(); !strings.HasPrefix(l[len(l)-1], "expire-snapshots default.db/append_complex_data: expired 3 snapshots [1, 4), removed 3 data files (") {
		t.Fatalf("expire-snapshots:\n%s", r)
	}
	if got, want := dataFiles(t, table), []string{
		"f1=10/bucket-0/data-f8754699-0c43-4e53-be00-7e8af1754913-0.parquet",
		"f1=20/bucket-0/data-ac0894ca-fc13-49c8-bb22-4556c8ee416c-0.parquet",
		"f1=20/bucket-1/data-e0a6a424-e3b0-47ba-b259-d033fc01e87c-0.parquet",
	}; !slices.Equal(got, want) {
		t.Fatalf("data files after expiry: %v", got)
	}
	tbl, err := lakecore.Open(context.Background(), wh, "default", "append_complex_data")
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := tbl.ReadAll(context.Background(), 0); err != nil || len(rows) != 8 {
		t.Fatalf("read after expiry: %d rows, %v", len(rows), err)
	}
}

func TestErrors(t *testing.T) {
	wh := t.TempDir()
	newTestTable(t, wh, storage.S3Config{}, nil).commit(1, "2024-01-01")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing table", []string{"info", "--warehouse", wh, "--table", "nope"},
			"paimon info: table default.nope does not exist in warehouse " + wh + " (no schema file under default.db/nope/schema)\n"},
		{"missing warehouse", []string{"compact", "--warehouse", wh + "/nope", "--table", "events"},
			"paimon compact: warehouse " + wh + "/nope is not a directory\n"},
		{"bad partition key", []string{"files", "--warehouse", wh, "--table", "events", "--partition", "day=1"},
			"paimon files: --partition \"day=1\": \"day\" is not a partition key (partition keys: dt)\n"},
		{"bad older-than", []string{"remove-orphan-files", "--warehouse", wh, "--table", "events", "--older-than", "yesterday"},
			"paimon remove-orphan-files: --older-than \"yesterday\" is neither a duration (7d, 12h, 30min) nor a time (2024-05-30 12:00:00, 2024-05-30, RFC 3339)\n"},
		{"credentials", []string{"info", "--warehouse", "s3://b/wh", "--table", "events", "--s3-access-key-id", "k"},
			"paimon info: --s3-secret-access-key is required when --s3-access-key-id is set\n"},
		{"bad retain", []string{"expire-snapshots", "--warehouse", wh, "--table", "events", "--retain-max", "0"},
			"paimon expire-snapshots: --retain-max must be at least 1, not 0\n"},
		{"retain-max below retain-min", []string{"expire-snapshots", "--warehouse", wh, "--table", "events", "--retain-max", "2", "--retain-min", "3"},
			"retainMax (2) must not be less than retainMin (3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"paimon"}, tc.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("want exit 1 and %q on stderr; got %s", tc.want, r)
			}
		})
	}
	if _, err := os.Stat(wh + "/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a command created the missing warehouse: %v", err)
	}
}

// TestPrimaryKeyMaintenanceCommands: expire-snapshots and
// remove-orphan-files run on a Java-written primary-key table (deletion
// vectors) and leave it readable.
func TestPrimaryKeyMaintenanceCommands(t *testing.T) {
	pk := fixturetest.CopyWarehouse(t, "cpp-java09-pk-table-avro-manifest-reference")
	for _, args := range [][]string{
		{"expire-snapshots", "--warehouse", pk, "--table", "pk_09", "--retain-max", "1", "--retain-min", "1"},
		{"remove-orphan-files", "--warehouse", pk, "--table", "pk_09", "--older-than", "1ms"},
		{"info", "--warehouse", pk, "--table", "pk_09"},
	} {
		if r := runCLI(t, nil, append([]string{"paimon"}, args...)...); r.code != 0 {
			t.Fatalf("paimon %v: %s", args, r)
		}
	}
	tbl, err := lakecore.Open(context.Background(), pk, "default", "pk_09")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tbl.Snapshots().ListIDs(context.Background())
	if err != nil || len(ids) != 1 {
		t.Fatalf("snapshots after expiry with retain 1: %v %v", ids, err)
	}
	if _, err := tbl.ReadAll(context.Background(), 0); err != nil {
		t.Fatalf("read after expiry and orphan cleanup: %v", err)
	}
}

func TestS3InfoAndCompact(t *testing.T) {
	cfg, bucket := s3test.Server(t)
	wh := "s3://" + bucket + "/wh"
	tt := newTestTable(t, wh, cfg, nil)
	for range 5 {
		tt.commit(1, "2024-01-01")
	}
	rows := tt.rows()
	s3 := []string{"--s3-endpoint", cfg.Endpoint, "--s3-region", cfg.Region, "--s3-force-path-style"}

	r := paimon(t, "info", tt.args(append(s3, "--s3-access-key-id", cfg.AccessKeyID, "--s3-secret-access-key", cfg.SecretAccessKey)...)...)
	requireLines(t, r.lines(), "Table: default.events", "Location: "+wh+"/default.db/events")
	requireLines(t, r.lines(), "Snapshots: 5 (earliest 1, latest 5)")
	requirePrefixed(t, r.lines(), "dt=2024-01-01 1 5 5 ")

	// Credentials from the AWS environment variables (the default chain).
	env := []string{"AWS_ACCESS_KEY_ID=" + cfg.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + cfg.SecretAccessKey,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
	r = runCLI(t, env, append([]string{"paimon", "compact"}, tt.args(s3...)...)...)
	if l := r.lines(); r.code != 0 || !strings.HasPrefix(l[len(l)-1], "compact default.db/events: rewrote 5 files (") ||
		!strings.Contains(l[len(l)-1], "into 1 file") {
		t.Fatalf("compact on S3: %s", r)
	}
	if n := len(tt.live()); n != 1 {
		t.Fatalf("%d live files after compaction, want 1", n)
	}
	if got := tt.rows(); !slices.Equal(got, rows) {
		t.Fatal("rows changed by compaction on S3")
	}
}

func TestParseOlderThan(t *testing.T) {
	now := time.Date(2024, 5, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"1d", now.Add(-24 * time.Hour)},
		{"12 h", now.Add(-12 * time.Hour)},
		{"90min", now.Add(-90 * time.Minute)},
		{"36h30m", now.Add(-36*time.Hour - 30*time.Minute)},
		{"2024-05-01T10:00:00Z", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)},
		{"2024-05-01T10:00:00+02:00", time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)},
		{"2024-05-01 10:00:00", time.Date(2024, 5, 1, 10, 0, 0, 0, time.Local)},
		{"2024-05-01 10:00:00.250", time.Date(2024, 5, 1, 10, 0, 0, 250e6, time.Local)},
		{"2024-05-01", time.Date(2024, 5, 1, 0, 0, 0, 0, time.Local)},
	} {
		got, err := parseOlderThan(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseOlderThan(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"yesterday", "-1h", "0s", "2024-13-01"} {
		if _, err := parseOlderThan(bad, now); err == nil {
			t.Errorf("parseOlderThan(%q) accepted", bad)
		}
	}
}

// TestCompactFilters: --partition specs become typed partition predicates,
// one when the matched partitions are a product of per-key values, one per
// partition otherwise; the binary then compacts exactly those partitions.
func TestCompactFilters(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "default", "hours", lakecore.TableSpec{
		Fields:        types.MustParse("ROW<id BIGINT, dt STRING, hr INT>").Fields,
		PartitionKeys: []string{"dt", "hr"},
		Options:       map[string]string{"compaction.min.file-num": "2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	parts := []struct {
		dt string
		hr int32
	}{{"a", 1}, {"a", 2}, {"b", 1}, {"b", 2}}
	for i := range 2 {
		w, err := tbl.NewWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range parts {
			if err := w.Write(ctx, []any{int64(10*i + j), p.dt, p.hr}); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.NewCommitter("u").Commit(ctx, int64(i+1), msgs); err != nil {
			t.Fatal(err)
		}
	}
	s := &session{ctx: ctx, conf: configTable(wh, "hours"), tbl: tbl}
	for _, tc := range []struct {
		specs []string
		want  string
	}{
		{nil, "[]"},
		{[]string{"dt=a"}, "[dt IN (a) AND hr IN (1, 2)]"},
		{[]string{"hr=2"}, "[dt IN (a, b) AND hr IN (2)]"},
		{[]string{"dt=a,hr=1", "dt=b,hr=1"}, "[dt IN (a, b) AND hr IN (1)]"},
		{[]string{"dt=a,hr=1", "dt=b,hr=2"}, "[dt IN (a) AND hr IN (1) dt IN (b) AND hr IN (2)]"},
		{[]string{"dt=c"}, "[]"},
	} {
		specs, err := partition.ParseSpecs("--partition", tc.specs, tbl.Schema().PartitionFields())
		if err != nil {
			t.Fatal(err)
		}
		filters, err := compactFilters(s, specs)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range filters {
			got = append(got, f.String())
			// The values are typed: hr is an INT key.
			if !slices.Equal(tc.specs, []string{"dt=a"}) {
				continue
			}
			if !f.Match([]any{"a", int32(2)}) || f.Match([]any{"a", "2"}) {
				t.Fatalf("%s: want int32 values for hr", f)
			}
		}
		if s := "[" + strings.Join(got, " ") + "]"; s != tc.want {
			t.Errorf("compactFilters(%v) = %s, want %s", tc.specs, s, tc.want)
		}
		if tc.specs == nil && filters != nil {
			t.Errorf("no specs gave %v, want nil (the whole table)", filters)
		}
	}

	r := paimon(t, "compact", "--warehouse", wh, "--table", "hours", "--partition", "dt=a,hr=1", "--partition", "dt=b,hr=2")
	got := r.lines()
	requirePrefixed(t, got, "dt=a/hr=1: 2 files (", ") -> 1 file (")
	requirePrefixed(t, got, "dt=b/hr=2: 2 files (", ") -> 1 file (")
	if last := got[len(got)-1]; !strings.HasPrefix(last, "compact default.db/hours: rewrote 4 files (") ||
		!strings.Contains(last, "into 2 files (") || !strings.Contains(last, "in 2 tasks, snapshots 3, 4") {
		t.Fatalf("summary %q\n%s", last, r)
	}
	r = paimon(t, "files", "--warehouse", wh, "--table", "hours")
	lines := r.lines()
	var perPart []string
	for _, l := range lines[1 : len(lines)-1] {
		perPart = append(perPart, strings.Fields(l)[0])
	}
	if fmt.Sprint(perPart) != "[dt=a/hr=1 dt=a/hr=2 dt=a/hr=2 dt=b/hr=1 dt=b/hr=1 dt=b/hr=2]" {
		t.Fatalf("files after compaction:\n%s", r.stdout)
	}
}

func configTable(warehouse, table string) config.Table {
	return config.Table{Warehouse: warehouse, Database: "default", Table: table}
}
