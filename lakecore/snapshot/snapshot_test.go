package snapshot_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

func ptr[T any](v T) *T { return &v }

// TestFixtureRoundTrip parses every Java-written snapshot (Paimon 0.9 to
// 2.0) and requires Marshal to reproduce it byte for byte, keys that only
// some versions write included.
func TestFixtureRoundTrip(t *testing.T) {
	for _, f := range fixturetest.Files(t, "snapshot/snapshot-*") {
		t.Run(fixturetest.Name(t, f), func(t *testing.T) {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := snapshot.Parse(want)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Marshal differs\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

func readFixture(t *testing.T, fixture, table string, id string) *snapshot.Snapshot {
	t.Helper()
	data, err := os.ReadFile(fixturetest.Dir(t) + "/" + fixture + "/warehouse/default.db/" + table + "/snapshot/snapshot-" + id)
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFixtureContents(t *testing.T) {
	s := readFixture(t, "cpp-java11-append-fixed-bucket-complex-types", "append_complex_data", "4")
	if s.ID != 4 || s.SchemaID != 0 || s.CommitKind != snapshot.CommitCompact || s.CommitIdentifier != 3 ||
		*s.TotalRecordCount != 8 || *s.DeltaRecordCount != 0 || s.ChangelogManifestList != nil ||
		*s.ChangelogRecordCount != 0 || s.BaseManifestListSize == nil || s.Version != 3 {
		t.Errorf("snapshot 4 = %+v", s)
	}
	s = readFixture(t, "paimon-java20snap-pk-table-manifest-reference", "test_pk_global_index_golden", "1")
	if s.CommitIdentifier != math.MaxInt64 || s.NextRowID == nil || *s.NextRowID != 0 ||
		*s.BaseManifestListSize != 1006 || *s.DeltaManifestListSize != 1107 || s.TimeMillis != 1784213019480 {
		t.Errorf("2.0 snapshot 1 = %+v", s)
	}
	s = readFixture(t, "cpp-java09-pk-table-avro-manifest-reference", "pk_09", "6")
	if s.IndexManifest == nil || !strings.HasPrefix(*s.IndexManifest, "index-manifest-") || s.BaseManifestListSize != nil {
		t.Errorf("0.9 snapshot 6 = %+v", s)
	}
}

// TestNewSnapshotMatchesJava builds a snapshot from scratch and requires
// the bytes Paimon 1.4.2's Snapshot.toJson wrote for the same values
// (testdata/java142-snapshot-append, see lakecore/schema/testdata/oracle).
func TestNewSnapshotMatchesJava(t *testing.T) {
	want, err := os.ReadFile("testdata/java142-snapshot-append")
	if err != nil {
		t.Fatal(err)
	}
	s := &snapshot.Snapshot{
		ID: 5, SchemaID: 1,
		BaseManifestList: "manifest-list-a-0", BaseManifestListSize: ptr(int64(100)),
		DeltaManifestList: "manifest-list-a-1", DeltaManifestListSize: ptr(int64(200)),
		CommitUser: "user-1", CommitIdentifier: math.MaxInt64, CommitKind: snapshot.CommitAppend,
		TimeMillis: 1700000000000, TotalRecordCount: ptr(int64(10)), DeltaRecordCount: ptr(int64(3)),
	}
	got, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("\n--- got\n%s\n--- want\n%s", got, want)
	}

	// A Paimon 1.1 snapshot made fresh loses logOffsets and the null
	// changelogManifestList and takes 1.4's shape.
	old := readFixture(t, "cpp-java12-append-unaware-file-index", "append_with_bitmap_no_embedding", "1")
	out, err := old.Fresh().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"logOffsets", "changelogManifestList"} {
		if bytes.Contains(out, []byte(gone)) {
			t.Errorf("fresh snapshot still has %s:\n%s", gone, out)
		}
	}
	back, err := snapshot.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != old.ID || *back.TotalRecordCount != *old.TotalRecordCount || *back.ChangelogRecordCount != 0 {
		t.Errorf("fresh round trip lost values: %+v", back)
	}

	// Optional keys are written when set, in Java's order, and a nil
	// count is written as 0.
	full := &snapshot.Snapshot{
		ID: 1, BaseManifestList: "b", DeltaManifestList: "d", CommitUser: "u", CommitKind: snapshot.CommitOverwrite,
		UUID: ptr("x"), IndexManifest: ptr("index-manifest-1"), Watermark: ptr(int64(-9223372036854775808)),
		Statistics: ptr("stat-1"), Properties: map[string]string{"b": "2", "a": "1"}, NextRowID: ptr(int64(0)),
	}
	got, err = full.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	const wantFull = `{
  "version" : 3,
  "uuid" : "x",
  "id" : 1,
  "schemaId" : 0,
  "baseManifestList" : "b",
  "deltaManifestList" : "d",
  "indexManifest" : "index-manifest-1",
  "commitUser" : "u",
  "commitIdentifier" : 0,
  "commitKind" : "OVERWRITE",
  "timeMillis" : 0,
  "totalRecordCount" : 0,
  "deltaRecordCount" : 0,
  "watermark" : -9223372036854775808,
  "statistics" : "stat-1",
  "properties" : {
    "a" : "1",
    "b" : "2"
  },
  "nextRowId" : 0
}`
	if string(got) != wantFull {
		t.Errorf("\n--- got\n%s\n--- want\n%s", got, wantFull)
	}
	if _, err := (&snapshot.Snapshot{CommitKind: "MERGE"}).Marshal(); !errors.Is(err, snapshot.ErrInvalidSnapshot) {
		t.Errorf("Marshal with an unknown kind = %v", err)
	}
}

func TestParse(t *testing.T) {
	const ok = `"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitUser":"u","commitKind":"APPEND"`
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"minimal", `{` + ok + `}`, true},
		{"unknown keys", `{` + ok + `,"future":{"x":[1]},"operation":"WRITE","writerVersion":"2.1"}`, true},
		{"null optionals", `{` + ok + `,"watermark":null,"properties":null,"totalRecordCount":null,"commitIdentifier":null}`, true},
		{"missing id", `{"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitUser":"u","commitKind":"APPEND"}`, false},
		{"missing commitKind", `{"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitUser":"u"}`, false},
		{"missing commitUser", `{"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitKind":"APPEND"}`, false},
		{"missing deltaManifestList", `{"id":1,"schemaId":0,"baseManifestList":"b","commitUser":"u","commitKind":"APPEND"}`, false},
		{"unknown commitKind", `{"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitUser":"u","commitKind":"append"}`, false},
		{"null id", `{` + strings.Replace(ok, `"id":1`, `"id":null`, 1) + `}`, false},
		{"string id", `{` + strings.Replace(ok, `"id":1`, `"id":"one"`, 1) + `}`, false},
		{"huge id", `{` + strings.Replace(ok, `"id":1`, `"id":99999999999999999999`, 1) + `}`, false},
		{"numeric user", `{` + strings.Replace(ok, `"commitUser":"u"`, `"commitUser":7`, 1) + `}`, false},
		{"bad properties", `{` + ok + `,"properties":{"a":1}}`, false},
		{"version out of range", `{` + ok + `,"version":4294967296}`, false},
		{"array", `[]`, false},
		{"garbage", `snapshot`, false},
		{"empty", ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := snapshot.Parse([]byte(tc.in))
			if tc.ok != (err == nil) {
				t.Fatalf("Parse = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, snapshot.ErrInvalidSnapshot) {
					t.Fatalf("error %v does not wrap ErrInvalidSnapshot", err)
				}
				return
			}
			out, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			back, err := snapshot.Parse(out)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out)
			}
			again, _ := back.Marshal()
			if !bytes.Equal(out, again) {
				t.Fatalf("unstable:\n%s\n%s", out, again)
			}
		})
	}
	s, err := snapshot.Parse([]byte(`{` + ok + `,"future":{"x":[1]},"operation":"WRITE"}`))
	if err != nil {
		t.Fatal(err)
	}
	if raw, has := s.Extra("future"); !has || string(raw) != `{"x":[1]}` {
		t.Errorf("Extra(future) = %s, %v", raw, has)
	}
	if s.Operation == nil || *s.Operation != "WRITE" {
		t.Errorf("Operation = %v", s.Operation)
	}
	out, _ := s.Marshal()
	if !bytes.HasSuffix(out, []byte("\"operation\" : \"WRITE\",\n  \"future\" : {\n    \"x\" : [ 1 ]\n  }\n}")) {
		t.Errorf("unknown keys not kept at the end:\n%s", out)
	}
}
