package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// TestMarshalTagMatchesJava: a tag without time retained is the snapshot's
// JSON as Java wrote it (TagManager writes snapshot.toJson()), for every
// Java-written snapshot of the fixtures; with time retained Tag.toJson
// appends tagCreateTime and tagTimeRetained as Jackson's JavaTimeModule
// prints a LocalDateTime and a Duration (the layout of Java-written tags:
// paimon-format.md, "tag = snapshot JSON + tag fields").
func TestMarshalTagMatchesJava(t *testing.T) {
	files := fixturetest.Files(t, "snapshot/snapshot-*")
	if len(files) == 0 {
		t.Fatal("no Java-written snapshot in the fixtures")
	}
	for _, f := range files {
		t.Run(fixturetest.Name(t, f), func(t *testing.T) {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := snapshot.Parse(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := snapshot.MarshalTag(s, nil, time.Now())
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("MarshalTag without retention = %v\n%s\nwant\n%s", err, got, want)
			}
			day := 24 * time.Hour
			got, err = snapshot.MarshalTag(s, &day, time.Date(2024, 5, 30, 12, 0, 0, 123000000, time.Local))
			if err != nil {
				t.Fatal(err)
			}
			wantTag := string(want[:len(want)-2]) + ",\n  \"tagCreateTime\" : [ 2024, 5, 30, 12, 0, 0, 123000000 ],\n  \"tagTimeRetained\" : 86400.000000000\n}"
			if string(got) != wantTag {
				t.Fatalf("MarshalTag with retention:\n%s\nwant\n%s", got, wantTag)
			}
			// Reading it back gives the tag fields; tagging a tag's
			// snapshot again replaces them (Tag.trimToSnapshot).
			tag, err := snapshot.Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := snapshot.MarshalTag(tag, nil, time.Now())
			if err != nil || !bytes.Equal(again, want) {
				t.Fatalf("MarshalTag of a tag's snapshot = %v\n%s\nwant\n%s", err, again, want)
			}
		})
	}
}

// TestMarshalTagTimes: Jackson's LocalDateTimeSerializer drops zero
// seconds and nanoseconds from the end; DurationSerializer writes seconds
// with nine decimals, and 0.0 for zero.
func TestMarshalTagTimes(t *testing.T) {
	s := snap(1, "u", 1, snapshot.CommitAppend, 1)
	for _, tc := range []struct {
		created  time.Time
		retained time.Duration
		want     string
	}{
		{time.Date(2024, 1, 2, 3, 4, 0, 0, time.UTC), time.Hour, "[ 2024, 1, 2, 3, 4 ], \"tagTimeRetained\" : 3600.000000000"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), 1500 * time.Millisecond, "[ 2024, 1, 2, 3, 4, 5 ], \"tagTimeRetained\" : 1.500000000"},
		{time.Date(2024, 12, 31, 23, 59, 0, 7000, time.UTC), 0, "[ 2024, 12, 31, 23, 59, 0, 7000 ], \"tagTimeRetained\" : 0.0"},
	} {
		got, err := snapshot.MarshalTag(s, &tc.retained, tc.created)
		if err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(string(got)), " ")
		if want := "\"tagCreateTime\" : " + tc.want + " }"; !strings.HasSuffix(flat, want) {
			t.Errorf("MarshalTag(%v, %v) ends %q, want %q", tc.created, tc.retained, flat[max(0, len(flat)-80):], want)
		}
	}
}

func TestTagCreateAndDelete(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	tags := snapshot.NewTagManager(fio, table)
	s := snap(3, "u", 3, snapshot.CommitAppend, 3000)
	if err := tags.Create(ctx, "v1", s, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := tags.Create(ctx, "v1", snap(4, "u", 4, snapshot.CommitAppend, 4000), nil, time.Now()); !errors.Is(err, snapshot.ErrTagExists) {
		t.Fatalf("Create of an existing tag = %v, want ErrTagExists", err)
	}
	got, err := tags.Get(ctx, "v1")
	if err != nil || got.Snapshot.ID != 3 {
		t.Fatalf("Get(v1) = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "  ", "a/b"} {
		if err := tags.Create(ctx, bad, s, nil, time.Now()); !errors.Is(err, snapshot.ErrInvalidTag) {
			t.Errorf("Create(%q) = %v, want ErrInvalidTag", bad, err)
		}
	}
	if err := tags.DeleteFile(ctx, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := tags.Get(ctx, "v1"); !errors.Is(err, snapshot.ErrTagNotFound) {
		t.Fatalf("Get after DeleteFile = %v", err)
	}
}

// TestRollback follows RollbackHelper: LATEST first, later snapshots,
// long-lived changelogs (with their LATEST hint) and tags deleted, a tag's
// expired snapshot written back with EARLIEST; a dry run changes nothing.
func TestRollback(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (storage.FileIO, *snapshot.Manager, *snapshot.ChangelogManager, *snapshot.TagManager) {
		fio := newFIO(t)
		m := snapshot.NewManager(fio, table)
		commitRange(t, m, 4, 8)
		cm := snapshot.NewChangelogManager(fio, table)
		for id := int64(1); id <= 6; id++ {
			data, _ := snap(id, "u", id, snapshot.CommitAppend, id).Marshal()
			if err := cm.Commit(ctx, id, data); err != nil {
				t.Fatal(err)
			}
		}
		tm := snapshot.NewTagManager(fio, table)
		for _, tg := range []struct {
			name string
			id   int64
		}{{"old", 2}, {"five", 5}, {"seven", 7}, {"seven-b", 7}} {
			if err := tm.Create(ctx, tg.name, snap(tg.id, "u", tg.id, snapshot.CommitAppend, 1000*tg.id), nil, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		return fio, m, cm, tm
	}
	state := func(m *snapshot.Manager, cm *snapshot.ChangelogManager, tm *snapshot.TagManager) string {
		ids, _ := m.ListIDs(ctx)
		cls, _ := cm.ListIDs(ctx)
		tags, _ := tm.List(ctx)
		var names []string
		for _, tg := range tags {
			names = append(names, tg.Name)
		}
		latest, _, _ := m.ReadLatestHint(ctx)
		earliest, _, _ := m.ReadEarliestHint(ctx)
		return fmt.Sprintf("snapshots %v changelogs %v tags %v LATEST %d EARLIEST %d", ids, cls, names, latest, earliest)
	}
	for _, tc := range []struct {
		name string
		to   snapshot.RollbackTarget
		want string
		res  string
	}{
		{"snapshot", snapshot.RollbackTarget{SnapshotID: 5},
			"snapshots [4 5] changelogs [1 2 3 4 5] tags [old five] LATEST 5 EARLIEST 0",
			"&{Previous:8 Target:5 ViaTag: Snapshots:[8 7 6] Changelogs:[6] Tags:[seven seven-b] Restored:false}"},
		{"tag of an existing snapshot", snapshot.RollbackTarget{Tag: "seven"},
			"snapshots [4 5 6 7] changelogs [1 2 3 4 5 6] tags [old five seven seven-b] LATEST 7 EARLIEST 0",
			"&{Previous:8 Target:7 ViaTag:seven Snapshots:[8] Changelogs:[] Tags:[] Restored:false}"},
		{"expired snapshot through its tag", snapshot.RollbackTarget{SnapshotID: 2},
			"snapshots [2] changelogs [1 2] tags [old] LATEST 2 EARLIEST 2",
			"&{Previous:8 Target:2 ViaTag:old Snapshots:[8 7 6 5 4] Changelogs:[6 5 4 3] Tags:[five seven seven-b] Restored:true}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fio, m, cm, tm := setup(t)
			before := state(m, cm, tm)
			dry, err := snapshot.Rollback(ctx, fio, table, tc.to, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := state(m, cm, tm); got != before {
				t.Fatalf("dry run changed %s to %s", before, got)
			}
			res, err := snapshot.Rollback(ctx, fio, table, tc.to, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%+v", res); got != tc.res || fmt.Sprintf("%+v", dry) != tc.res {
				t.Fatalf("result %s (dry run %+v), want %s", got, dry, tc.res)
			}
			if got := state(m, cm, tm); got != tc.want {
				t.Fatalf("after rollback: %s\nwant %s", got, tc.want)
			}
		})
	}
	fio, _, _, _ := setup(t)
	for _, to := range []snapshot.RollbackTarget{{SnapshotID: 3}, {SnapshotID: 9}} {
		if _, err := snapshot.Rollback(ctx, fio, table, to, false); !errors.Is(err, snapshot.ErrSnapshotNotFound) {
			t.Errorf("Rollback to %+v = %v, want ErrSnapshotNotFound", to, err)
		}
	}
	if _, err := snapshot.Rollback(ctx, fio, table, snapshot.RollbackTarget{Tag: "nope"}, false); !errors.Is(err, snapshot.ErrTagNotFound) {
		t.Errorf("Rollback to a missing tag = %v, want ErrTagNotFound", err)
	}
}
