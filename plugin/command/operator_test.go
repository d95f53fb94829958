package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestDatabasesAndTables: databases lists <name>.db directories with their
// table counts; tables lists every table with the counts of its latest
// snapshot, which agree with the live files on disk.
func TestDatabasesAndTables(t *testing.T) {
	wh := t.TempDir()
	tt := newTestTable(t, wh, storage.S3Config{}, nil)
	tt.commit(2, "2024-01-01")
	tt.commit(3, "2024-01-02")
	ctx := context.Background()
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, "default", "empty", lakecore.TableSpec{
		Fields: types.MustParse("ROW<k INT NOT NULL, v STRING>").Fields, PrimaryKeys: []string{"k"}, Options: map[string]string{"bucket": "2"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, "sales", "orders", lakecore.TableSpec{Fields: types.MustParse("ROW<id BIGINT>").Fields}); err != nil {
		t.Fatal(err)
	}
	// Not tables: a directory without schema files, a stray file.
	if err := os.MkdirAll(filepath.Join(wh, "default.db", "not-a-table", "snapshot"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wh, "README"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var files, rows, size int64
	for _, f := range filesOnDisk(t, tt) {
		files, rows, size = files+1, rows+f.rows, size+f.size
	}

	r := paimon(t, "databases", "--warehouse", wh)
	want := []string{"DATABASE TABLES", "default 2", "sales 1", wh + ": 2 databases, 3 tables"}
	if got := r.lines(); !slices.Equal(got, want) {
		t.Fatalf("databases:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	r = paimon(t, "tables", "--warehouse", wh)
	want = []string{
		"TABLE KIND PARTITION KEYS BUCKET SCHEMA SNAPSHOT PARTITIONS FILES ROWS SIZE",
		"empty primary key (k) - 2 0 - 0 0 0 0 B",
		fmt.Sprintf("events append dt -1 0 2 2 %d %d %s", files, rows, strings.Join(strings.Fields(formatBytes(size)), " ")),
		fmt.Sprintf("default: 2 tables, %d rows, %d files, %s", rows, files, formatBytes(size)),
	}
	if got := r.lines(); !slices.Equal(got, want) {
		t.Fatalf("tables:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if files != 2 || rows != 5 {
		t.Fatalf("table has %d files and %d rows, want 2 and 5", files, rows)
	}

	r = paimon(t, "tables", "--warehouse", wh, "--database", "sales", "--json")
	var j []tableRow
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatal(err)
	}
	if len(j) != 1 || j[0].Table != "orders" || j[0].LatestSnapshot != 0 || j[0].Files != 0 || j[0].Bucket != "-1" {
		t.Fatalf("tables --json = %+v", j)
	}
	if r.stderr != "sales: 1 table, 0 rows, 0 files, 0 B\n" {
		t.Fatalf("stderr %q", r.stderr)
	}

	// A missing database has no tables; a missing warehouse is an error.
	r = paimon(t, "tables", "--warehouse", wh, "--database", "nope")
	if got := r.lines(); !slices.Equal(got, []string{"TABLE KIND PARTITION KEYS BUCKET SCHEMA SNAPSHOT PARTITIONS FILES ROWS SIZE", "nope: 0 tables, 0 rows, 0 files, 0 B"}) {
		t.Fatalf("tables of a missing database: %q", got)
	}
	if r := runCLI(t, nil, "paimon", "databases", "--warehouse", wh+"/nope"); r.code != 1 || !strings.Contains(r.stderr, "is not a directory") {
		t.Fatalf("databases of a missing warehouse: %s", r)
	}
}

// TestSchemaHistory: schema shows the current schema and each schema file
// with its changes, by field id, for a Java-written table that renamed,
// dropped, added and reordered columns, and for a column added by lakecore.
func TestSchemaHistory(t *testing.T) {
	wh := fixturetest.CopyWarehouse(t, "cpp-java12-append-unaware-schema-evolution")
	args := []string{"--warehouse", wh, "--table", "append_table_with_alter_table"}
	r := paimon(t, "schema", args...)
	requireLines(t, r.lines(),
		"Table: default.append_table_with_alter_table",
		"Schema: 1 (highest field id 8)",
		"Fields:",
		"ID NAME TYPE",
		"0 key0 INT",
		"1 key1 INT",
		"6 k INT",
		"3 c INT",
		"7 d INT",
		"5 a INT",
		"8 e INT",
		"Partition keys: key0, key1",
		"Primary keys: none",
		"Options:",
		"file.format = parquet",
		"manifest.format = avro",
		"History:",
		"ID TIME (UTC) FIELDS CHANGES",
		"0 2025-08-25T03:35:21.896Z 7 create table",
		"1 2025-08-25T05:07:19.075Z 7 drop column a (id 2); drop column c (id 4); rename column b to c (id 3); "+
			"rename column d to a (id 5); add column d INT (id 7); add column e INT (id 8); reorder columns",
		"default.append_table_with_alter_table: schema 1, 7 fields, 2 schema versions",
	)

	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, map[string]string{"snapshot.num-retained.max": "50"})
	if _, err := tt.tbl.Schemas().AddColumns(context.Background(), types.MustParse("ROW<score DOUBLE>").Fields); err != nil {
		t.Fatal(err)
	}
	r = paimon(t, "schema", tt.args("--json")...)
	var j schemaReport
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Versions) != 2 || j.Current.ID != 1 || fmt.Sprint(j.Versions[1].Changes) != "[add column score DOUBLE (id 3)]" ||
		j.Current.Options["snapshot.num-retained.max"] != "50" || len(j.Current.Fields) != 4 {
		t.Fatalf("schema --json = %+v", j)
	}
}

// tagFile reads tag/tag-<name> of tt's table.
func tagFile(t *testing.T, tt *testTable, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tt.dir(), "tag", "tag-"+name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// requireFilesExist fails unless every data file of snapshot s (read with
// its manifests) is on disk.
func liveDataFiles(t *testing.T, tt *testTable, s *snapshot.Snapshot) []string {
	t.Helper()
	entries, err := tt.tbl.Planner().LiveEntries(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join(tt.dir(), "dt="+partitionValue(t, e.Partition), "bucket-0", e.File.FileName))
	}
	return out
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Stat(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// TestTags: create-tag writes Java's tag file (the snapshot's JSON, plus
// the tag fields with --time-retained), tags lists them, expiry keeps a
// tagged snapshot's files, and delete-tag of an expired snapshot's tag
// deletes the files only it used.
func TestTags(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, nil)
	s1 := tt.commit(2, "2024-01-01")
	tt.commit(1, "2024-01-02")
	s3 := tt.commit(1, "2024-01-01")

	// Without time retained the tag file is the snapshot file, byte for
	// byte (TagManager writes snapshot.toJson()).
	r := paimon(t, "create-tag", tt.args("--tag", "first", "--snapshot", "1")...)
	if r.stdout != "create-tag default.events: created tag first of snapshot 1 (APPEND, 2 records)\n" {
		t.Fatalf("create-tag: %s", r)
	}
	snapFile, err := os.ReadFile(filepath.Join(tt.dir(), "snapshot", "snapshot-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tagFile(t, tt, "first"); !bytes.Equal(got, snapFile) {
		t.Fatalf("tag-first:\n%s\nwant snapshot-1:\n%s", got, snapFile)
	}
	// With time retained, Tag.toJson: the snapshot's keys, then
	// tagCreateTime (a LocalDateTime array) and tagTimeRetained (seconds).
	paimon(t, "create_tag", tt.args("--tag_name", "latest", "--time_retained", "1 d")...)
	got := tagFile(t, tt, "latest")
	snapFile3, _ := os.ReadFile(filepath.Join(tt.dir(), "snapshot", "snapshot-3"))
	tail := regexp.MustCompile(`(?s),\n  "tagCreateTime" : \[ 20\d\d, \d+, \d+, \d+, \d+(, \d+(, \d+)?)? \],\n  "tagTimeRetained" : 86400\.000000000\n}$`)
	loc := tail.FindIndex(got)
	if loc == nil || string(got[:loc[0]]) != strings.TrimSuffix(string(snapFile3), "\n}") {
		t.Fatalf("tag-latest:\n%s\nwant snapshot-3 plus the tag fields:\n%s", got, snapFile3)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"exists", []string{"--tag", "first"}, `tag "first" already exists`},
		{"missing snapshot", []string{"--tag", "x", "--snapshot", "9"}, "snapshot 9 doesn't exist"},
		{"blank", []string{"--tag", " "}, "tag name shouldn't be blank"},
		{"slash", []string{"--tag", "a/b"}, `must not contain "/"`},
		{"bad retention", []string{"--tag", "x", "--time-retained", "soon"}, `--time-retained "soon" is not a positive duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"paimon", "create-tag"}, tt.args(tc.args...)...)...)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("want exit 1 and %q; got %s", tc.want, r)
			}
		})
	}

	r = paimon(t, "tags", tt.args()...)
	lines := r.lines()
	if len(lines) != 4 || lines[0] != "TAG SNAPSHOT SCHEMA COMMIT TIME (UTC) RECORDS CREATED TIME RETAINED" ||
		lines[1] != fmt.Sprintf("first 1 0 %s 2 - -", formatTime(s1.TimeMillis)) ||
		!strings.HasPrefix(lines[2], fmt.Sprintf("latest 3 0 %s 4 20", formatTime(s3.TimeMillis))) || !strings.HasSuffix(lines[2], " 24h0m0s") ||
		lines[3] != "default.events: 2 tags" {
		t.Fatalf("tags:\n%s", strings.Join(lines, "\n"))
	}

	// Expiry keeps the files of the tagged snapshot 1; without the tag the
	// 2 rows of its first file would be compacted away and deleted.
	tagged := liveDataFiles(t, tt, s1)
	paimon(t, "compact", tt.args("--min-file-num", "2")...)
	tt.commit(1, "2024-01-03")
	paimon(t, "expire-snapshots", tt.args("--retain-max", "1", "--retain-min", "1")...)
	if ids, _ := tt.tbl.Snapshots().ListIDs(context.Background()); len(ids) != 1 {
		t.Fatalf("snapshots after expiry: %v", ids)
	}
	for _, f := range tagged {
		if !exists(t, f) {
			t.Fatalf("expiry deleted %s, a file of tagged snapshot 1", f)
		}
	}
	rows, err := tt.tbl.ReadAll(context.Background(), 0)
	if err != nil || len(rows) != 5 {
		t.Fatalf("latest snapshot: %d rows, %v", len(rows), err)
	}
	r = paimon(t, "tags", tt.args("--json")...)
	var tags []tagRow
	if err := json.Unmarshal([]byte(r.stdout), &tags); err != nil {
		t.Fatal(err)
	}
	if len(tags) != 2 || !tags[0].SnapshotExpired || tags[0].SnapshotID != 1 || tags[1].TimeRetained != "24h0m0s" || tags[1].CreateTime == "" {
		t.Fatalf("tags --json = %+v", tags)
	}
	// A tag of an expired snapshot can be created from another tag.
	paimon(t, "create-tag", tt.args("--tag", "first-again", "--snapshot", "1")...)
	if !bytes.Equal(tagFile(t, tt, "first-again"), snapFile) {
		t.Fatalf("tag of expired snapshot 1 differs from snapshot-1")
	}

	// delete-tag: while another tag holds snapshot 1, only the tag file goes.
	r = paimon(t, "delete-tag", tt.args("--tag", "first-again")...)
	if !strings.HasPrefix(r.stdout, "delete-tag default.db/events: removed 0 data files (0 B) and 1 metadata file") {
		t.Fatalf("delete-tag: %s", r)
	}
	// Tag "latest" (snapshot 3) holds every file of snapshot 1, so
	// deleting tag "first" removes only snapshot 1's manifest lists; a dry
	// run lists them and deletes nothing.
	r = paimon(t, "delete-tag", tt.args("--tag", "first", "--dry-run")...)
	if !strings.Contains(r.stdout, "dry run, would remove 0 data files (0 B) and 3 metadata files") ||
		!strings.Contains(r.stdout, "default.db/events/tag/tag-first\n") || !exists(t, filepath.Join(tt.dir(), "tag", "tag-first")) {
		t.Fatalf("delete-tag --dry-run: %s", r)
	}
	paimon(t, "delete-tag", tt.args("--tag", "first")...)
	// Deleting "latest", the last tag: the two files the compaction
	// replaced go, the file snapshot 5 still reads stays.
	taggedLatest := liveDataFiles(t, tt, s3)
	r = paimon(t, "delete-tag", tt.args("--tag", "latest", "-v")...)
	if !strings.Contains(r.stdout, "removed 2 data files") || exists(t, filepath.Join(tt.dir(), "tag", "tag-latest")) {
		t.Fatalf("delete-tag: %s", r)
	}
	var gone []string
	for _, f := range taggedLatest {
		if !exists(t, f) {
			gone = append(gone, f)
			if !strings.Contains(r.stdout, "  removed default.db/events/dt=2024-01-01/bucket-0/"+filepath.Base(f)+"\n") {
				t.Fatalf("delete-tag -v does not list %s:\n%s", f, r.stdout)
			}
		}
	}
	if len(taggedLatest) != 3 || len(gone) != 2 || !slices.Contains(gone, tagged[0]) {
		t.Fatalf("delete-tag removed %v of snapshot 3's files %v, want the two compacted ones of dt=2024-01-01", gone, taggedLatest)
	}
	if rows, err := tt.tbl.ReadAll(context.Background(), 0); err != nil || len(rows) != 5 {
		t.Fatalf("after delete-tag: %d rows, %v", len(rows), err)
	}
	paimon(t, "create-tag", tt.args("--tag", "keep")...)
	if r := runCLI(t, nil, append([]string{"paimon", "delete-tag"}, tt.args("--tag", "keep,nope")...)...); r.code != 1 ||
		!strings.Contains(r.stderr, `tag "nope" does not exist`) || !exists(t, filepath.Join(tt.dir(), "tag", "tag-keep")) {
		t.Fatalf("delete-tag of a missing tag: %s", r)
	}
}

// TestRollbackTo: rollback-to a snapshot deletes the later snapshots and
// tags and fixes LATEST; rollback-to a tag whose snapshot expired writes
// the snapshot back and fixes EARLIEST; dry runs change nothing.
func TestRollbackTo(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, nil)
	for range 5 {
		tt.commit(1, "2024-01-01")
	}
	ctx := context.Background()
	for _, tag := range []struct {
		name string
		id   int64
	}{{"t2", 2}, {"t4", 4}, {"t5", 5}} {
		if _, err := tt.tbl.CreateTag(ctx, tag.name, tag.id, nil); err != nil {
			t.Fatal(err)
		}
	}
	rowsAt := func(id int64) []string {
		t.Helper()
		rows, err := tt.tbl.ReadAll(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = fmt.Sprint(r...)
		}
		slices.Sort(out)
		return out
	}
	want3 := rowsAt(3)
	hint := func(name string) string {
		data, _ := os.ReadFile(filepath.Join(tt.dir(), "snapshot", name))
		return string(data)
	}
	snapIDs := func() []int64 {
		ids, err := tt.tbl.Snapshots().ListIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	tagNames := func() []string {
		tags, err := tt.tbl.Tags().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tg := range tags {
			out = append(out, tg.Name)
		}
		return out
	}

	r := paimon(t, "rollback-to", tt.args("--snapshot", "3", "--dry-run")...)
	want := []string{"would delete snapshot 5", "would delete snapshot 4", "would delete tag t4", "would delete tag t5",
		"rollback-to default.events: dry run, would roll back from snapshot 5 to snapshot 3, would delete 2 snapshots, 0 changelogs, 2 tags"}
	if got := r.lines(); !slices.Equal(got, want) {
		t.Fatalf("rollback-to --dry-run:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if fmt.Sprint(snapIDs()) != "[1 2 3 4 5]" || len(tagNames()) != 3 {
		t.Fatalf("dry run changed the table: %v %v", snapIDs(), tagNames())
	}

	if err := tt.tbl.Consumers().Put(ctx, "reader", snapshot.Consumer{NextSnapshot: 6}); err != nil {
		t.Fatal(err)
	}
	r = paimon(t, "rollback_to", tt.args("--version", "3")...)
	if !strings.Contains(r.stderr, "warning: consumer reader reads next snapshot 6; its reader would skip snapshots 4..5") {
		t.Fatalf("no warning about the consumer ahead of the rollback:\n%s", r.stderr)
	}
	if err := tt.tbl.Consumers().Delete(ctx, "reader"); err != nil {
		t.Fatal(err)
	}
	if got := r.lines(); got[len(got)-1] != "rollback-to default.events: rolled back from snapshot 5 to snapshot 3, deleted 2 snapshots, 0 changelogs, 2 tags" {
		t.Fatalf("rollback-to: %s", r)
	}
	if fmt.Sprint(snapIDs()) != "[1 2 3]" || fmt.Sprint(tagNames()) != "[t2]" || hint("LATEST") != "3" {
		t.Fatalf("after rollback: snapshots %v, tags %v, LATEST %q", snapIDs(), tagNames(), hint("LATEST"))
	}
	if got := rowsAt(0); !slices.Equal(got, want3) {
		t.Fatalf("rows after rollback %v, want those of snapshot 3 %v", got, want3)
	}
	// The table takes new commits after the rollback: snapshot 4 again.
	if s := tt.commit(1, "2024-01-02"); s.ID != 4 {
		t.Fatalf("commit after rollback made snapshot %d, want 4", s.ID)
	}

	// Roll back to tag t2 after snapshot 2 expired: snapshot-2 comes back
	// from the tag and EARLIEST names it.
	paimon(t, "expire-snapshots", tt.args("--retain-max", "1", "--retain-min", "1")...)
	if fmt.Sprint(snapIDs()) != "[4]" {
		t.Fatalf("snapshots after expiry: %v", snapIDs())
	}
	r = paimon(t, "rollback-to", tt.args("--tag", "t2")...)
	if got := r.lines(); !slices.Equal(got, []string{"deleted snapshot 4", "restore snapshot 2 from tag t2",
		"rollback-to default.events: rolled back from snapshot 4 to snapshot 2 (tag t2), deleted 1 snapshot, 0 changelogs, 0 tags"}) {
		t.Fatalf("rollback-to --tag: %s", r)
	}
	tag, err := tt.tbl.Tags().Get(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	back, err := os.ReadFile(filepath.Join(tt.dir(), "snapshot", "snapshot-2"))
	if err != nil || !bytes.Equal(back, tagFile(t, tt, "t2")) || tag.Snapshot.ID != 2 {
		t.Fatalf("snapshot-2 written back: %v\n%s", err, back)
	}
	if fmt.Sprint(snapIDs()) != "[2]" || hint("LATEST") != "2" || hint("EARLIEST") != "2" || len(rowsAt(0)) != 2 {
		t.Fatalf("after rollback to t2: snapshots %v, LATEST %q, EARLIEST %q, %d rows", snapIDs(), hint("LATEST"), hint("EARLIEST"), len(rowsAt(0)))
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--snapshot", "9"}, "snapshot 9 does not exist"},
		{[]string{"--tag", "nope"}, `tag "nope" does not exist`},
		{[]string{"--snapshot", "2", "--tag", "t2"}, "give exactly one of --snapshot, --tag and --version"},
		{nil, "give exactly one of"},
	} {
		r := runCLI(t, nil, append([]string{"paimon", "rollback-to"}, tt.args(tc.args...)...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("rollback-to %v: want exit 1 and %q; got %s", tc.args, tc.want, r)
		}
	}
}

// TestConsumerCommands: consumers lists them, reset-consumer moves one
// (to an existing snapshot only) or deletes it without --next-snapshot,
// delete-consumer deletes one; the files are Java's {"nextSnapshot" : N}.
func TestConsumerCommands(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, nil)
	tt.commit(1, "2024-01-01")
	tt.commit(1, "2024-01-01")
	consumerFile := func(id string) string {
		data, err := os.ReadFile(filepath.Join(tt.dir(), "consumer", "consumer-"+id))
		if errors.Is(err, fs.ErrNotExist) {
			return "missing"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	r := paimon(t, "reset-consumer", tt.args("--consumer", "job-a", "--next-snapshot", "2")...)
	if r.stdout != "reset-consumer default.events: consumer job-a created at next snapshot 2\n" || consumerFile("job-a") != "{\n  \"nextSnapshot\" : 2\n}" {
		t.Fatalf("reset-consumer: %s\nfile %q", r, consumerFile("job-a"))
	}
	r = paimon(t, "reset_consumer", tt.args("--consumer_id", "job-a", "--next_snapshot", "1")...)
	if r.stdout != "reset-consumer default.events: consumer job-a reset from next snapshot 2 to 1\n" {
		t.Fatalf("reset-consumer: %s", r)
	}
	paimon(t, "reset-consumer", tt.args("--consumer", "job-b", "--next-snapshot", "2")...)
	r = paimon(t, "consumers", tt.args()...)
	lines := r.lines()
	if len(lines) != 4 || lines[0] != "CONSUMER NEXT SNAPSHOT UPDATED (UTC) STATE" || !strings.HasPrefix(lines[1], "job-a 1 ") ||
		!strings.HasSuffix(lines[1], " ok") || !strings.HasPrefix(lines[2], "job-b 2 ") || lines[3] != "default.events: 2 consumers" {
		t.Fatalf("consumers:\n%s", strings.Join(lines, "\n"))
	}
	if r := runCLI(t, nil, append([]string{"paimon", "reset-consumer"}, tt.args("--consumer", "job-a", "--next-snapshot", "7")...)...); r.code != 1 ||
		!strings.Contains(r.stderr, "snapshot 7 does not exist") || consumerFile("job-a") != "{\n  \"nextSnapshot\" : 1\n}" {
		t.Fatalf("reset-consumer to a missing snapshot: %s", r)
	}
	r = paimon(t, "delete-consumer", tt.args("--consumer", "job-a")...)
	if r.stdout != "delete-consumer default.events: deleted consumer job-a (it was at next snapshot 1)\n" || consumerFile("job-a") != "missing" {
		t.Fatalf("delete-consumer: %s", r)
	}
	paimon(t, "reset-consumer", tt.args("--consumer", "job-b")...)
	if consumerFile("job-b") != "missing" {
		t.Fatal("reset-consumer without --next-snapshot kept the consumer")
	}
	if r := runCLI(t, nil, append([]string{"paimon", "delete-consumer"}, tt.args("--consumer", "job-b")...)...); r.code != 1 ||
		!strings.Contains(r.stderr, `consumer "job-b" does not exist`) {
		t.Fatalf("delete-consumer of a missing consumer: %s", r)
	}
	r = paimon(t, "consumers", tt.args("--json")...)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("consumers --json: %s", r)
	}
}

// TestActionAliases: Paimon's action names run the commands.
func TestActionAliases(t *testing.T) {
	for alias, name := range map[string]string{
		"expire_snapshots": "expire-snapshots", "expire_partitions": "expire-partitions", "remove_orphan_files": "remove-orphan-files",
		"create_tag": "create-tag", "delete_tag": "delete-tag", "rollback_to": "rollback-to", "reset_consumer": "reset-consumer",
		"delete_consumer": "delete-consumer",
	} {
		r := paimon(t, alias, "--help")
		if !strings.Contains(r.stdout, "paimon "+name+" - ") {
			t.Fatalf("%s --help does not show %s:\n%s", alias, name, r.stdout)
		}
	}
}

// TestAlter: alter sets and resets options and adds columns as one new
// schema file, refuses what Java refuses on a table with snapshots, and
// writes nothing in a dry run or on error.
func TestAlter(t *testing.T) {
	tt := newTestTable(t, t.TempDir(), storage.S3Config{}, map[string]string{"compaction.min.file-num": "3"})
	tt.commit(1, "2024-01-01")
	schemaIDs := func() string {
		ids, err := tt.tbl.Schemas().ListIDs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ids)
	}
	r := paimon(t, "alter", tt.args("--set", "snapshot.num-retained.max=20", "--reset", "compaction.min.file-num", "--add-column", "score DOUBLE", "--dry-run")...)
	want := []string{"set snapshot.num-retained.max = 20", "reset compaction.min.file-num (was 3)", "add column score DOUBLE",
		"alter default.events: dry run, would change schema 0 (3 changes)"}
	if got := r.lines(); !slices.Equal(got, want) || schemaIDs() != "[0]" {
		t.Fatalf("alter --dry-run:\n%s\nschemas %s", strings.Join(got, "\n"), schemaIDs())
	}
	r = paimon(t, "alter", tt.args("--set", "snapshot.num-retained.max=20", "--reset", "compaction.min.file-num", "--add-column", "score DOUBLE")...)
	if got := r.lines(); got[len(got)-1] != "alter default.events: schema 0 -> 1" || schemaIDs() != "[0 1]" {
		t.Fatalf("alter: %s", r)
	}
	s, err := tt.tbl.Schemas().Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, has := s.Options["compaction.min.file-num"]; has || s.Options["snapshot.num-retained.max"] != "20" ||
		fmt.Sprint(s.FieldNames()) != "[id dt msg score]" || s.Fields[3].ID != 3 {
		t.Fatalf("schema 1: options %v, fields %v", s.Options, s.FieldNames())
	}
	// Old files read with the new column as NULL.
	rows, err := mustOpen(t, tt.warehouse).ReadAll(context.Background(), 0)
	if err != nil || len(rows) != 1 || len(rows[0]) != 4 || rows[0][3] != nil {
		t.Fatalf("rows after alter: %v, %v", rows, err)
	}
	r = paimon(t, "schema", tt.args()...)
	requireLines(t, r.lines(), fmt.Sprintf("1 %s 4 add column score DOUBLE (id 3); set snapshot.num-retained.max = 20; reset compaction.min.file-num", formatTime(s.TimeMillis)))

	r = paimon(t, "alter", tt.args("--set", "snapshot.num-retained.max=20")...)
	if got := r.lines(); got[len(got)-1] != "alter default.events: nothing changed, schema 1 stays" || schemaIDs() != "[0 1]" {
		t.Fatalf("no-op alter: %s", r)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "bucket=4"}, "cannot change bucket when it is -1"},
		{[]string{"--reset", "bucket"}, "cannot reset bucket"},
		{[]string{"--set", "partition=x"}, "change 'partition' is not supported yet"},
		{[]string{"--set", "snapshot.num-retained.max=many"}, `snapshot.num-retained.max = "many"`},
		{[]string{"--set", "novalue"}, `--set "novalue" is not key=value`},
		{[]string{"--add-column", "score DOUBLE"}, `column "score" already exists`},
		{[]string{"--add-column", "n INT NOT NULL"}, "cannot be NOT NULL"},
		{[]string{"--add-column", "x NOTATYPE"}, `--add-column "x NOTATYPE"`},
		{nil, "nothing to alter"},
	} {
		r := runCLI(t, nil, append([]string{"paimon", "alter"}, tt.args(tc.args...)...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("alter %v: want exit 1 and %q; got %s", tc.args, tc.want, r)
		}
	}
	if schemaIDs() != "[0 1]" {
		t.Fatalf("refused alters wrote schemas: %s", schemaIDs())
	}
}

func mustOpen(t *testing.T, wh string) *lakecore.Table {
	t.Helper()
	tbl, err := lakecore.Open(context.Background(), wh, "default", "events")
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
