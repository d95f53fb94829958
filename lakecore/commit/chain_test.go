package commit_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
)

// hookFIO runs a function once, before or after the first call to
// WriteExclusive (or ReadFile) of a path that match accepts.
type hookFIO struct {
	storage.FileIO
	match         func(op, p string) bool
	before, after func()
	once          sync.Once
}

func (h *hookFIO) fire(op, p string, f func()) {
	if f != nil && h.match(op, p) {
		h.once.Do(f)
	}
}

func (h *hookFIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	h.fire("create", p, h.before)
	err := h.FileIO.WriteExclusive(ctx, p, data)
	h.fire("create", p, h.after)
	return err
}

func (h *hookFIO) ReadFile(ctx context.Context, p string) ([]byte, error) {
	h.fire("read", p, h.before)
	return h.FileIO.ReadFile(ctx, p)
}

func snapshotPath(id int64) string { return fmt.Sprintf("%s/snapshot/snapshot-%d", tablePath, id) }

// expire deletes snapshot files, as snapshot expiry does last, and writes
// EARLIEST.
func expire(t testing.TB, fio storage.FileIO, earliest int64, ids ...int64) {
	t.Helper()
	sm := snapshot.NewManager(fio, tablePath)
	for _, id := range ids {
		if err := sm.Delete(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	if err := sm.WriteEarliestHint(context.Background(), earliest); err != nil {
		t.Fatal(err)
	}
}

func listIDs(t testing.TB, fio storage.FileIO) []int64 {
	t.Helper()
	ids, err := snapshot.NewManager(fio, tablePath).ListIDs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// writerA creates the table on local storage and commits a1 with writer a,
// the writer that overtakes b in the stale-snapshot tests.
func writerA(t testing.TB) (*storage.Local, *commit.Committer) {
	t.Helper()
	local := localFIO(t)
	createTable(t, local, nil)
	a := commit.New(local, tablePath, commit.Options{CommitUser: "a"})
	if _, err := a.Commit(context.Background(), 1, []commit.Message{msg(1, file("a1", 1))}); err != nil {
		t.Fatal(err)
	}
	return local, a
}

// overtake wraps fio so that, just before the first exclusive create of
// snapshot-2 through it (writer b's, on snapshot 1 as the latest), writer a
// commits files (identifiers 2 on) and expiry deletes every snapshot below
// a's last one: b's snapshot-2 lands on an expired base.
func overtake(t testing.TB, fio storage.FileIO, local *storage.Local, a *commit.Committer, files ...string) *hookFIO {
	hook := &hookFIO{FileIO: fio, match: func(op, p string) bool { return op == "create" && p == snapshotPath(2) }}
	hook.before = func() {
		var expired []int64
		for i, f := range files {
			if _, err := a.Commit(context.Background(), int64(i+2), []commit.Message{msg(1, file(f, 1))}); err != nil {
				t.Fatal(err)
			}
			expired = append(expired, int64(i+1))
		}
		expire(t, local, int64(len(files)+1), expired...)
	}
	return hook
}

// TestStaleSnapshotAfterExpiry: writer b reads snapshot 1 as the latest;
// before it creates snapshot-2, writer a commits snapshots 2 and 3 and
// expiry (retain 1) deletes 1 and 2. b's exclusive create of snapshot-2
// then succeeds on a stale base. b must notice (snapshot 3 does not carry
// its files), delete its snapshot-2 and land on top of 3: its rows in the
// table, a's rows kept, LATEST not pointing at the stale snapshot.
func TestStaleSnapshotAfterExpiry(t *testing.T) {
	local, a := writerA(t)
	ctx := context.Background()
	b := commit.New(overtake(t, local, local, a, "a2", "a3"), tablePath, commit.Options{CommitUser: "b"})
	s, err := b.Commit(ctx, 1, []commit.Message{msg(1, file("b1", 1))})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 4 {
		t.Errorf("b landed as snapshot %d, want 4", s.ID)
	}
	if got := listIDs(t, local); !slices.Equal(got, []int64{3, 4}) {
		t.Errorf("snapshots %v, want [3 4] (the stale snapshot-2 deleted)", got)
	}
	if got := names(live(t, local)); strings.Join(got, ",") != "a1,a2,a3,b1" {
		t.Errorf("live files %v", got)
	}
	if latest, ok, err := snapshot.NewManager(local, tablePath).LatestID(ctx); err != nil || !ok || latest != 4 {
		t.Errorf("LatestID = %d, %v, %v", latest, ok, err)
	}
}

// TestStaleDropAfterExpiry: as above for a snapshot that adds no files but
// deletes some (partition expiry's OVERWRITE): snapshot 3 still has a file
// b's snapshot-2 deleted, which proves it stale; b deletes it and drops the
// partition again on top of 3, instead of leaving a snapshot-2 below the
// retained ones whose base manifests expiry deletes.
func TestStaleDropAfterExpiry(t *testing.T) {
	local, a := writerA(t)
	ctx := context.Background()
	b := commit.New(overtake(t, local, local, a, "a2", "a3"), tablePath, commit.Options{CommitUser: "b"})
	s, err := b.Overwrite(ctx, 1, [][]byte{part(1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 4 || s.CommitKind != snapshot.CommitOverwrite {
		t.Errorf("b landed as snapshot %d (%s), want 4 (OVERWRITE)", s.ID, s.CommitKind)
	}
	if got := listIDs(t, local); !slices.Equal(got, []int64{3, 4}) {
		t.Errorf("snapshots %v, want [3 4] (the stale snapshot-2 deleted)", got)
	}
	if got := names(live(t, local)); len(got) != 0 {
		t.Errorf("live files %v, want none (the partition dropped)", got)
	}
}

// TestStaleSnapshotWhileExpiring: as above, but expiry also deleted
// snapshot 3, so the snapshot above b's stale snapshot-2 is 4 and b cannot
// prove what happened (its snapshot could also have been continued and be
// expiring). It deletes snapshot-2 and reports an unknown outcome; a
// recovery commit then lands it.
func TestStaleSnapshotWhileExpiring(t *testing.T) {
	local, a := writerA(t)
	ctx := context.Background()
	b := commit.New(overtake(t, local, local, a, "a2", "a3", "a4"), tablePath, commit.Options{CommitUser: "b"})
	msgs := []commit.Message{msg(1, file("b1", 1))}
	_, err := b.Commit(ctx, 1, msgs)
	if !errors.Is(err, commit.ErrStaleSnapshot) || !errors.Is(err, commit.ErrCommitAmbiguous) {
		t.Fatalf("commit: %v, want ErrStaleSnapshot and ErrCommitAmbiguous", err)
	}
	if got := listIDs(t, local); !slices.Equal(got, []int64{4}) {
		t.Errorf("snapshots %v, want [4] (the stale snapshot-2 deleted)", got)
	}
	s, err := b.CommitRecovered(ctx, 1, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 5 {
		t.Errorf("recovered commit landed as snapshot %d, want 5", s.ID)
	}
	if got := names(live(t, local)); strings.Join(got, ",") != "a1,a2,a3,a4,b1" {
		t.Errorf("live files %v", got)
	}
}

// TestFollowerIsNotStale: a snapshot that another writer continues at once
// (before the committer could check) is not taken for stale, whether the
// follower kept its delta manifests or merged them into a new manifest.
func TestFollowerIsNotStale(t *testing.T) {
	for _, merge := range []bool{false, true} {
		t.Run(fmt.Sprintf("merged=%v", merge), func(t *testing.T) {
			local := localFIO(t)
			createTable(t, local, nil)
			ctx := context.Background()
			ao := commit.Options{CommitUser: "a"}
			if merge {
				ao.ManifestMergeMinCount = 2
			}
			a := commit.New(local, tablePath, ao)
			if _, err := a.Commit(ctx, 1, []commit.Message{msg(1, file("a1", 1))}); err != nil {
				t.Fatal(err)
			}
			hook := &hookFIO{FileIO: local, match: func(op, p string) bool { return op == "create" && p == snapshotPath(2) }}
			hook.after = func() {
				if _, err := a.Commit(ctx, 2, []commit.Message{msg(1, file("a2", 1))}); err != nil {
					t.Fatal(err)
				}
			}
			b := commit.New(hook, tablePath, commit.Options{CommitUser: "b"})
			s, err := b.Commit(ctx, 1, []commit.Message{msg(1, file("b1", 1))})
			if err != nil {
				t.Fatal(err)
			}
			if s.ID != 2 {
				t.Errorf("b landed as snapshot %d, want 2", s.ID)
			}
			checkChain(t, local, map[string]int{"a": 2, "b": 1}, 3)
			// The follower merged b's delta manifest away (or kept it).
			sm := snapshot.NewManager(local, tablePath)
			s2, _ := sm.Get(ctx, 2)
			s3, _ := sm.Get(ctx, 3)
			delta, err := manifest.ReadFileMetas(ctx, local, tablePath, s2.DeltaManifestList)
			if err != nil {
				t.Fatal(err)
			}
			base, err := manifest.ReadFileMetas(ctx, local, tablePath, s3.BaseManifestList)
			if err != nil {
				t.Fatal(err)
			}
			kept := slices.ContainsFunc(base, func(m manifest.FileMeta) bool { return m.FileName == delta[0].FileName })
			if kept == merge {
				t.Errorf("snapshot 3 kept b's delta manifest: %v, want %v", kept, !merge)
			}
		})
	}
}

// TestCommitRetriesWhenBaseExpires: expiry deletes the manifest lists of
// the snapshot a commit builds on while the commit reads them (the newer
// snapshot keeps what it needs); the commit starts over from the latest
// snapshot instead of failing.
func TestCommitRetriesWhenBaseExpires(t *testing.T) {
	local := localFIO(t)
	createTable(t, local, nil)
	ctx := context.Background()
	a := commit.New(local, tablePath, commit.Options{CommitUser: "a"})
	s1, err := a.Commit(ctx, 1, []commit.Message{msg(1, file("a1", 1))})
	if err != nil {
		t.Fatal(err)
	}
	list := path.Join(tablePath, "manifest", s1.BaseManifestList)
	hook := &hookFIO{FileIO: local, match: func(op, p string) bool { return op == "read" && p == list }}
	hook.before = func() {
		if _, err := a.Commit(ctx, 2, []commit.Message{msg(1, file("a2", 1))}); err != nil {
			t.Fatal(err)
		}
		// Expiry of snapshot 1 in progress: its lists are gone, the
		// snapshot file not yet.
		for _, l := range []string{s1.BaseManifestList, s1.DeltaManifestList} {
			if err := local.Delete(ctx, path.Join(tablePath, "manifest", l)); err != nil {
				t.Fatal(err)
			}
		}
	}
	b := commit.New(hook, tablePath, commit.Options{CommitUser: "b"})
	s, err := b.Commit(ctx, 1, []commit.Message{msg(1, file("b1", 1))})
	if err != nil {
		t.Fatalf("commit failed instead of retrying: %v", err)
	}
	if s.ID != 3 {
		t.Errorf("b landed as snapshot %d, want 3", s.ID)
	}
	if got := names(live(t, local)); strings.Join(got, ",") != "a1,a2,b1" {
		t.Errorf("live files %v", got)
	}
}

// TestCommitRecoveredRefusesLandedFiles: committing again files that are
// already in the table fails with ErrDuplicateFile instead of adding them
// twice (which would make the snapshot unreadable).
func TestCommitRecoveredRefusesLandedFiles(t *testing.T) {
	local := localFIO(t)
	createTable(t, local, nil)
	ctx := context.Background()
	c := commit.New(local, tablePath, commit.Options{CommitUser: "u"})
	msgs := []commit.Message{msg(1, file("f1", 2)), msg(2, file("f2", 3))}
	if _, err := c.Commit(ctx, 1, msgs); err != nil {
		t.Fatal(err)
	}
	_, err := c.CommitRecovered(ctx, 1, msgs)
	if !errors.Is(err, manifest.ErrDuplicateFile) || !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("recovered commit of landed files: %v, want ErrDuplicateFile", err)
	}
	checkChain(t, local, map[string]int{"u": 1}, 5)
	// New files commit normally through the same call.
	if s, err := c.CommitRecovered(ctx, 2, []commit.Message{msg(1, file("f3", 1))}); err != nil || s.ID != 2 {
		t.Fatalf("recovered commit of new files: %+v, %v", s, err)
	}
}

// TestConfirmationReadFailures: the reads that confirm a new snapshot are
// retried, so a transient failure does not make a landed commit unknown;
// when they keep failing the outcome is unknown (not stale) and the commit
// user's look-up finds the snapshot.
func TestConfirmationReadFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		times int
	}{{"transient", 2}, {"persistent", 100}} {
		t.Run(c.name, func(t *testing.T) {
			local, fio, cm := faultyAfterOneCommit(t, commit.Options{CommitUser: "u"})
			ctx := context.Background()
			fio.Add(faultfs.Fault{Ops: faultfs.OpStat, Path: snapshotPath(3), Times: c.times})
			s, err := cm.Commit(ctx, 2, []commit.Message{msg(1, file("b", 1))})
			if c.times < 4 {
				if err != nil || s.ID != 2 {
					t.Fatalf("commit: %+v, %v", s, err)
				}
				checkChain(t, local, map[string]int{"u": 2}, 2)
				return
			}
			if !errors.Is(err, commit.ErrCommitAmbiguous) || errors.Is(err, commit.ErrStaleSnapshot) {
				t.Fatalf("commit: %v, want ErrCommitAmbiguous without ErrStaleSnapshot", err)
			}
			left, err := cm.FilterCommitted(ctx, []int64{2})
			if err != nil || len(left) != 0 {
				t.Fatalf("FilterCommitted = %v, %v; the snapshot landed", left, err)
			}
			checkChain(t, local, map[string]int{"u": 2}, 2)
		})
	}
}

// TestStaleSnapshotHintUnreadable: as TestStaleSnapshotWhileExpiring
// (snapshot-3 expired, so snapshot-(N+1) is absent and only the LATEST hint
// shows that the table went on), but the hint cannot be read. The
// confirmation used to take the failing read for a missing hint and accept
// b's stale snapshot-2, writing LATEST = 2 over the table's snapshot 4; the
// outcome must stay unknown instead.
func TestStaleSnapshotHintUnreadable(t *testing.T) {
	local, a := writerA(t)
	ctx := context.Background()
	faulty := faultfs.New(local, 1)
	hook := overtake(t, faulty, local, a, "a2", "a3", "a4")
	overtaken := hook.before
	hook.before = func() {
		overtaken()
		faulty.Add(faultfs.Fault{Ops: faultfs.OpReadFile, Path: tablePath + "/snapshot/LATEST", Times: 1 << 20})
	}
	b := commit.New(hook, tablePath, commit.Options{CommitUser: "b"})
	s, err := b.Commit(ctx, 1, []commit.Message{msg(1, file("b1", 1))})
	if !errors.Is(err, commit.ErrCommitAmbiguous) {
		t.Fatalf("commit: snapshot %+v, %v; want ErrCommitAmbiguous", s, err)
	}
	if latest, ok, err := snapshot.NewManager(local, tablePath).LatestID(ctx); err != nil || !ok || latest != 4 {
		t.Errorf("LatestID = %d, %v, %v; want 4", latest, ok, err)
	}
}

// TestDropFollowerIsNotStale: a partition drop (no files added) that
// another writer continues at once is not taken for stale: the files it
// deleted are not live in the follower, whether the follower kept its delta
// manifest or merged it away.
func TestDropFollowerIsNotStale(t *testing.T) {
	for _, merge := range []bool{false, true} {
		t.Run(fmt.Sprintf("merged=%v", merge), func(t *testing.T) {
			local := localFIO(t)
			createTable(t, local, nil)
			ctx := context.Background()
			ao := commit.Options{CommitUser: "a"}
			if merge {
				ao.ManifestMergeMinCount = 2
			}
			a := commit.New(local, tablePath, ao)
			if _, err := a.Commit(ctx, 1, []commit.Message{msg(1, file("a1", 1)), msg(2, file("a0", 1))}); err != nil {
				t.Fatal(err)
			}
			hook := &hookFIO{FileIO: local, match: func(op, p string) bool { return op == "create" && p == snapshotPath(2) }}
			hook.after = func() {
				if _, err := a.Commit(ctx, 2, []commit.Message{msg(2, file("a2", 1))}); err != nil {
					t.Fatal(err)
				}
			}
			b := commit.New(hook, tablePath, commit.Options{CommitUser: "b"})
			_, err := b.Overwrite(ctx, 1, [][]byte{part(1)}, nil)
			if errors.Is(err, commit.ErrStaleSnapshot) && !errors.Is(err, commit.ErrCommitAmbiguous) {
				t.Fatalf("the drop was taken for stale: %v", err)
			}
			if !merge && err != nil {
				t.Fatal(err)
			}
			if err != nil {
				t.Logf("the follower merged the drop's manifest away, so the outcome is unknown: %v", err)
			}
			if got := listIDs(t, local); !slices.Equal(got, []int64{1, 2, 3}) {
				t.Errorf("snapshots %v, want [1 2 3] (the drop kept)", got)
			}
			if got := names(live(t, local)); strings.Join(got, ",") != "a0,a2" {
				t.Errorf("live files %v, want a0,a2", got)
			}
		})
	}
}
