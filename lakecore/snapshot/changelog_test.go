package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// TestChangelogManager: changelog-<id> holds the snapshot's JSON and is
// followed by the LATEST hint of changelog/; ids list in order, a missing
// one wraps ErrSnapshotNotFound, and one holding another id is refused.
func TestChangelogManager(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	cm := snapshot.NewChangelogManager(fio, "db.db/t/")
	if ids, err := cm.ListIDs(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("no changelog yet: %v %v", ids, err)
	}
	for _, id := range []int64{10, 2, 3} {
		if err := cm.Commit(ctx, id, changelogJSON(id)); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := cm.ListIDs(ctx)
	if err != nil || !slices.Equal(ids, []int64{2, 3, 10}) {
		t.Fatalf("ids %v %v", ids, err)
	}
	if b, err := fio.ReadFile(ctx, "db.db/t/changelog/LATEST"); err != nil || string(b) != "3" {
		t.Errorf("LATEST = %q %v, want the last committed, 3", b, err)
	}
	if err := cm.WriteEarliestHint(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if b, err := fio.ReadFile(ctx, "db.db/t/changelog/EARLIEST"); err != nil || string(b) != "2" {
		t.Errorf("EARLIEST = %q %v", b, err)
	}
	c, err := cm.Get(ctx, 10)
	if err != nil || c.ID != 10 || c.DeltaManifestList != "d" || cm.Path(10) != "db.db/t/changelog/changelog-10" {
		t.Fatalf("changelog 10: %+v %v", c, err)
	}
	if _, err := cm.Get(ctx, 4); !errors.Is(err, snapshot.ErrSnapshotNotFound) {
		t.Errorf("missing changelog: %v", err)
	}
	if err := fio.WriteFile(ctx, cm.Path(5), changelogJSON(6)); err != nil {
		t.Fatal(err)
	}
	if _, err := cm.Get(ctx, 5); !errors.Is(err, snapshot.ErrInvalidSnapshot) {
		t.Errorf("changelog-5 holding id 6: %v", err)
	}
}

// changelogJSON is the JSON of a small APPEND snapshot with id.
func changelogJSON(id int64) []byte {
	return fmt.Appendf(nil, `{"version":3,"id":%d,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitUser":"u","commitIdentifier":1,"commitKind":"APPEND","timeMillis":5}`, id)
}
