package snapshot_test

import (
	"context"
	"errors"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// TestLatestOfUserDanglingLatestHint: a LATEST hint naming a snapshot that
// does not exist (trusted, as in Java, while the next id is absent) must
// not read as "the user's snapshots expired", which would make a restarted
// writer begin its identifiers at 1 again. Found by the reliability suite
// (writers stuck on a LATEST hint left by a stale snapshot).
func TestLatestOfUserDanglingLatestHint(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	m := snapshot.NewManager(fio, table)
	commitRange(t, m, 1, 5) // user "u", identifiers 1..5
	write(t, fio, "LATEST", "9")
	s, err := m.LatestOfUser(ctx, "u")
	if err != nil || s == nil || s.ID != 5 || s.CommitIdentifier != 5 {
		t.Fatalf("LatestOfUser = %+v, %v; want snapshot 5", s, err)
	}
	// Expired snapshots below still end the walk as before.
	for id := int64(1); id <= 4; id++ {
		if err := m.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := m.LatestOfUser(ctx, "other"); err != nil || s != nil {
		t.Fatalf("LatestOfUser(other) = %+v, %v; want nil", s, err)
	}
}

// TestFindCommitDanglingLatestHint: a committer looks for its own snapshot
// after an attempt with an unknown outcome. With a LATEST hint more than
// one above the last snapshot, FindCommit used to skip the hint's missing
// snapshot and then take the next missing id for expiry, so it missed the
// landed attempt and the committer wrote the same commit a second time.
func TestFindCommitDanglingLatestHint(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	m := snapshot.NewManager(fio, table)
	commitRange(t, m, 1, 5) // user "u", identifiers 1..5
	write(t, fio, "LATEST", "9")
	s, err := m.FindCommit(ctx, "u", 5, snapshot.CommitAppend, 3)
	if err != nil || s == nil || s.ID != 5 {
		t.Fatalf("FindCommit = %+v, %v; want snapshot 5", s, err)
	}
	if s, err := m.FindCommit(ctx, "u", 5, snapshot.CommitAppend, 5); err != nil || s != nil {
		t.Fatalf("FindCommit after 5 = %+v, %v; want nil", s, err)
	}
	if s, err := m.LatestExisting(ctx); err != nil || s == nil || s.ID != 5 {
		t.Fatalf("LatestExisting = %+v, %v; want snapshot 5", s, err)
	}
	if _, err := m.Latest(ctx); !errors.Is(err, snapshot.ErrSnapshotNotFound) {
		t.Fatalf("Latest = %v; want ErrSnapshotNotFound naming snapshot 9 (Java's behaviour, kept for readers)", err)
	}
}
