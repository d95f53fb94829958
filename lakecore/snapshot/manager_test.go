package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

const table = "db.db/t"

func newFIO(t testing.TB) storage.FileIO {
	t.Helper()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return fio
}

func snap(id int64, user string, ident int64, kind snapshot.CommitKind, timeMillis int64) *snapshot.Snapshot {
	return &snapshot.Snapshot{
		ID: id, SchemaID: 0, BaseManifestList: fmt.Sprintf("manifest-list-%d-0", id), BaseManifestListSize: ptr(int64(1)),
		DeltaManifestList: fmt.Sprintf("manifest-list-%d-1", id), DeltaManifestListSize: ptr(int64(2)),
		CommitUser: user, CommitIdentifier: ident, CommitKind: kind, TimeMillis: timeMillis,
		TotalRecordCount: ptr(id * 10), DeltaRecordCount: ptr(int64(10)),
	}
}

// commitRange commits snapshots first..last with times 1000*id.
func commitRange(t *testing.T, m *snapshot.Manager, first, last int64) {
	t.Helper()
	for id := first; id <= last; id++ {
		if err := m.Commit(context.Background(), snap(id, "u", id, snapshot.CommitAppend, 1000*id)); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, fio storage.FileIO, p, content string) {
	t.Helper()
	if err := fio.WriteFile(context.Background(), table+"/snapshot/"+p, []byte(content)); err != nil {
		t.Fatal(err)
	}
}

func TestEmptyTable(t *testing.T) {
	ctx := context.Background()
	m := snapshot.NewManager(newFIO(t), table)
	for name, f := range map[string]func() (int64, bool, error){"LatestID": func() (int64, bool, error) { return m.LatestID(ctx) }, "EarliestID": func() (int64, bool, error) { return m.EarliestID(ctx) }} {
		if id, ok, err := f(); ok || err != nil || id != 0 {
			t.Errorf("%s on an empty table = %d, %v, %v", name, id, ok, err)
		}
	}
	if s, err := m.Latest(ctx); s != nil || err != nil {
		t.Errorf("Latest = %v, %v", s, err)
	}
	if _, err := m.Get(ctx, 1); !errors.Is(err, snapshot.ErrSnapshotNotFound) {
		t.Errorf("Get = %v, want ErrSnapshotNotFound", err)
	}
	for name, f := range map[string]func() (*snapshot.Snapshot, error){
		"FindCommit":       func() (*snapshot.Snapshot, error) { return m.FindCommit(ctx, "u", 1, snapshot.CommitAppend, 0) },
		"LatestOfUser":     func() (*snapshot.Snapshot, error) { return m.LatestOfUser(ctx, "u") },
		"EarlierThan":      func() (*snapshot.Snapshot, error) { return m.EarlierThan(ctx, 5) },
		"LatestAtOrBefore": func() (*snapshot.Snapshot, error) { return m.LatestAtOrBefore(ctx, 5) },
	} {
		if s, err := f(); s != nil || err != nil {
			t.Errorf("%s on an empty table = %v, %v", name, s, err)
		}
	}
}

func TestCommitAndGet(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	m := snapshot.NewManager(fio, table)
	s := snap(1, "u", 7, snapshot.CommitAppend, 1234)
	if err := m.Commit(ctx, s); err != nil {
		t.Fatal(err)
	}
	hint, err := fio.ReadFile(ctx, table+"/snapshot/LATEST")
	if err != nil || string(hint) != "1" {
		t.Errorf("LATEST = %q, %v; want \"1\"", hint, err)
	}
	got, err := m.Get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.CommitIdentifier != 7 || got.TimeMillis != 1234 || *got.DeltaManifestListSize != 2 || got.Version != 3 {
		t.Errorf("Get = %+v", got)
	}
	err = m.Commit(ctx, snap(1, "other", 8, snapshot.CommitAppend, 1))
	if !errors.Is(err, snapshot.ErrSnapshotExists) || !errors.Is(err, storage.ErrExist) {
		t.Errorf("Commit of a taken id = %v, want ErrSnapshotExists and storage.ErrExist", err)
	}
	if again, _ := m.Get(ctx, 1); again.CommitUser != "u" {
		t.Error("a failed Commit replaced the snapshot")
	}
	for name, bad := range map[string]*snapshot.Snapshot{
		"id 0":    snap(0, "u", 1, snapshot.CommitAppend, 1),
		"no user": snap(2, "", 1, snapshot.CommitAppend, 1),
		"kind":    snap(2, "u", 1, "MERGE", 1),
		"no base list": func() *snapshot.Snapshot {
			s := snap(2, "u", 1, snapshot.CommitAppend, 1)
			s.BaseManifestList = ""
			return s
		}(),
	} {
		if err := m.Commit(ctx, bad); !errors.Is(err, snapshot.ErrInvalidSnapshot) {
			t.Errorf("Commit(%s) = %v, want ErrInvalidSnapshot", name, err)
		}
	}
	// A file that holds another id, and one that is not a snapshot.
	data, _ := snap(9, "u", 1, snapshot.CommitAppend, 1).Marshal()
	write(t, fio, "snapshot-3", string(data))
	write(t, fio, "snapshot-4", "{}")
	for id := int64(3); id <= 4; id++ {
		_, err := m.Get(ctx, id)
		if !errors.Is(err, snapshot.ErrInvalidSnapshot) || !strings.Contains(err.Error(), fmt.Sprintf("snapshot/snapshot-%d", id)) {
			t.Errorf("Get(%d) = %v, want ErrInvalidSnapshot naming the file", id, err)
		}
	}
	if err := m.Delete(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, 4); err != nil {
		t.Errorf("second Delete = %v", err)
	}
	ids, err := m.ListIDs(ctx)
	if err != nil || fmt.Sprint(ids) != "[1 3]" {
		t.Errorf("ListIDs = %v, %v", ids, err)
	}
}

// TestHints covers Java's hint semantics (HintFileUtils.findLatest and
// findEarliest) for right, stale, missing, garbage and out-of-range hints.
func TestHints(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name             string
		latest, earliest string // "" = no hint file
		deleteFirst      int64  // expire snapshots 1..deleteFirst
		wantLatest       int64
		wantEarliest     int64
	}{
		{name: "right", latest: "5", earliest: "1", wantLatest: 5, wantEarliest: 1},
		{name: "missing", wantLatest: 5, wantEarliest: 1},
		{name: "stale LATEST", latest: "3", wantLatest: 5, wantEarliest: 1},
		{name: "garbage", latest: "five", earliest: "one", wantLatest: 5, wantEarliest: 1},
		{name: "newline", latest: "5\n", earliest: " 1", wantLatest: 5, wantEarliest: 1},
		{name: "zero and negative", latest: "0", earliest: "-1", wantLatest: 5, wantEarliest: 1},
		{name: "empty files", latest: "", earliest: "", wantLatest: 5, wantEarliest: 1},
		{name: "EARLIEST of an expired snapshot", earliest: "1", deleteFirst: 2, wantLatest: 5, wantEarliest: 3},
		{name: "EARLIEST after expiry", earliest: "3", deleteFirst: 2, wantLatest: 5, wantEarliest: 3},
		{name: "stale EARLIEST that exists", earliest: "2", wantLatest: 5, wantEarliest: 2},
		// Java trusts LATEST=N whenever snapshot-(N+1) is absent, even when
		// snapshot-N is absent too.
		{name: "LATEST past the end", latest: "9", wantLatest: 9, wantEarliest: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fio := newFIO(t)
			m := snapshot.NewManager(fio, table)
			commitRange(t, m, 1, 5)
			for id := int64(1); id <= tc.deleteFirst; id++ {
				if err := m.Delete(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			_ = fio.Delete(ctx, table+"/snapshot/LATEST")
			if tc.latest != "" || tc.name == "empty files" {
				write(t, fio, "LATEST", tc.latest)
			}
			if tc.earliest != "" || tc.name == "empty files" {
				write(t, fio, "EARLIEST", tc.earliest)
			}
			if id, ok, err := m.LatestID(ctx); err != nil || !ok || id != tc.wantLatest {
				t.Errorf("LatestID = %d, %v, %v; want %d", id, ok, err, tc.wantLatest)
			}
			if id, ok, err := m.EarliestID(ctx); err != nil || !ok || id != tc.wantEarliest {
				t.Errorf("EarliestID = %d, %v, %v; want %d", id, ok, err, tc.wantEarliest)
			}
		})
	}
}

func TestListIgnoresOtherNames(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	m := snapshot.NewManager(fio, table)
	commitRange(t, m, 1, 2)
	for _, name := range []string{".snapshot-3.5f0c.tmp", "snapshot-", "snapshot-x", "snapshot-+4", "snapshot--1", "snapshot-7.json", "EARLIEST", "other"} {
		write(t, fio, name, "garbage")
	}
	if err := fio.WriteFile(ctx, table+"/snapshot/snapshot-8/nested", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ids, err := m.ListIDs(ctx)
	if err != nil || fmt.Sprint(ids) != "[1 2]" {
		t.Fatalf("ListIDs = %v, %v; want [1 2]", ids, err)
	}
	_ = fio.Delete(ctx, table+"/snapshot/LATEST")
	if id, _, err := m.LatestID(ctx); id != 2 || err != nil {
		t.Errorf("LatestID = %d, %v", id, err)
	}
	if id, _, err := m.EarliestID(ctx); id != 1 || err != nil {
		t.Errorf("EarliestID = %d, %v", id, err)
	}
}

// TestConcurrentCommit races 8 goroutines to create the same snapshot id:
// exactly one wins, the others get ErrSnapshotExists, and the winner's
// content is what is on disk.
func TestConcurrentCommit(t *testing.T) {
	ctx := context.Background()
	for round := 0; round < 10; round++ {
		m := snapshot.NewManager(newFIO(t), table)
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = m.Commit(ctx, snap(1, fmt.Sprintf("user-%d", i), int64(i), snapshot.CommitAppend, 1))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: goroutines %d and %d both committed", round, winner, i)
				}
				winner = i
			case !errors.Is(err, snapshot.ErrSnapshotExists):
				t.Fatalf("round %d: goroutine %d: %v, want ErrSnapshotExists", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody committed", round)
		}
		got, err := m.Get(ctx, 1)
		if err != nil || got.CommitUser != fmt.Sprintf("user-%d", winner) {
			t.Fatalf("round %d: snapshot-1 = %+v, %v; winner %d", round, got, err, winner)
		}
	}
}

// ambiguousFIO reports every exclusive create as ambiguous after doing it.
type ambiguousFIO struct{ storage.FileIO }

func (a ambiguousFIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if err := a.FileIO.WriteExclusive(ctx, p, data); err != nil {
		return err
	}
	return fmt.Errorf("put %s: %w: connection reset", p, storage.ErrAmbiguous)
}

func TestCommitAmbiguous(t *testing.T) {
	ctx := context.Background()
	fio := ambiguousFIO{newFIO(t)}
	m := snapshot.NewManager(fio, table)
	s := snap(1, "u", 42, snapshot.CommitAppend, 1)
	err := m.Commit(ctx, s)
	if !errors.Is(err, storage.ErrAmbiguous) || errors.Is(err, snapshot.ErrSnapshotExists) {
		t.Fatalf("Commit = %v, want storage.ErrAmbiguous passed through", err)
	}
	// The committer resolves the ambiguity by looking for its commit.
	found, err := m.FindCommit(ctx, "u", 42, snapshot.CommitAppend, 0)
	if err != nil || found == nil || found.ID != 1 {
		t.Fatalf("FindCommit = %+v, %v", found, err)
	}
	if _, err := fio.Stat(ctx, table+"/snapshot/LATEST"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("LATEST written after an ambiguous commit: %v", err)
	}
}

func TestFindCommitAndLatestOfUser(t *testing.T) {
	ctx := context.Background()
	m := snapshot.NewManager(newFIO(t), table)
	commits := []struct {
		user  string
		ident int64
		kind  snapshot.CommitKind
	}{
		{"a", 1, snapshot.CommitAppend}, {"b", 1, snapshot.CommitAppend}, {"a", 2, snapshot.CommitAppend},
		{"a", 2, snapshot.CommitCompact}, {"b", 2, snapshot.CommitAppend}, {"c", math.MaxInt64, snapshot.CommitAppend},
	}
	for i, c := range commits {
		if err := m.Commit(ctx, snap(int64(i+1), c.user, c.ident, c.kind, int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		user  string
		ident int64
		kind  snapshot.CommitKind
		after int64
		want  int64 // 0 = none
	}{
		{"a", 2, snapshot.CommitAppend, 0, 3},
		{"a", 2, snapshot.CommitCompact, 0, 4},
		{"a", 2, snapshot.CommitAppend, 3, 0}, // (3, 6] only
		{"a", 2, snapshot.CommitAppend, 2, 3},
		{"b", 1, snapshot.CommitAppend, 0, 2},
		{"a", 3, snapshot.CommitAppend, 0, 0},
		{"c", math.MaxInt64, snapshot.CommitAppend, 5, 6},
		{"c", math.MaxInt64, snapshot.CommitOverwrite, 0, 0},
	} {
		got, err := m.FindCommit(ctx, tc.user, tc.ident, tc.kind, tc.after)
		if err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (tc.want == 0) || (got != nil && got.ID != tc.want) {
			t.Errorf("FindCommit(%s, %d, %s, after %d) = %+v, want %d", tc.user, tc.ident, tc.kind, tc.after, got, tc.want)
		}
	}
	for user, want := range map[string]int64{"a": 4, "b": 5, "c": 6, "z": 0} {
		got, err := m.LatestOfUser(ctx, user)
		if err != nil || (got == nil) != (want == 0) || (got != nil && got.ID != want) {
			t.Errorf("LatestOfUser(%s) = %+v, %v; want %d", user, got, err, want)
		}
	}
	// After snapshot 5 expires, the walk back from 6 stops there: "a" is
	// no longer found although snapshot 4 still exists (Java's rule).
	if err := m.Delete(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if got, err := m.LatestOfUser(ctx, "a"); got != nil || err != nil {
		t.Errorf("LatestOfUser(a) across an expired snapshot = %+v, %v; want nil", got, err)
	}
	if got, err := m.LatestOfUser(ctx, "c"); err != nil || got == nil || got.ID != 6 {
		t.Errorf("LatestOfUser(c) = %+v, %v", got, err)
	}
	if got, err := m.FindCommit(ctx, "a", 2, snapshot.CommitCompact, 0); got != nil || err != nil {
		t.Errorf("FindCommit across an expired snapshot = %+v, %v; want nil", got, err)
	}
}

func TestTimeLookups(t *testing.T) {
	ctx := context.Background()
	m := snapshot.NewManager(newFIO(t), table)
	// Snapshots 3..9 retained with times 3000..9000, and a duplicate time.
	times := map[int64]int64{3: 3000, 4: 4000, 5: 5000, 6: 5000, 7: 7000, 8: 8000, 9: 9000}
	for id := int64(3); id <= 9; id++ {
		if err := m.Commit(ctx, snap(id, "u", id, snapshot.CommitAppend, times[id])); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.WriteEarliestHint(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ts               int64
		earlier, atOrBef int64 // 0 = nil
	}{
		{2999, 0, 0},
		{3000, 0, 3},
		{3001, 3, 3},
		{5000, 4, 6},
		{5001, 6, 6},
		{6999, 6, 6},
		{7000, 6, 7},
		{9000, 8, 9},
		{1 << 60, 9, 9},
	} {
		got, err := m.EarlierThan(ctx, tc.ts)
		if err != nil || (got == nil) != (tc.earlier == 0) || (got != nil && got.ID != tc.earlier) {
			t.Errorf("EarlierThan(%d) = %+v, %v; want %d", tc.ts, got, err, tc.earlier)
		}
		got, err = m.LatestAtOrBefore(ctx, tc.ts)
		if err != nil || (got == nil) != (tc.atOrBef == 0) || (got != nil && got.ID != tc.atOrBef) {
			t.Errorf("LatestAtOrBefore(%d) = %+v, %v; want %d", tc.ts, got, err, tc.atOrBef)
		}
	}
	// A stale EARLIEST whose snapshot expired falls back to listing.
	if err := m.WriteEarliestHint(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got, err := m.EarlierThan(ctx, 4500); err != nil || got == nil || got.ID != 4 {
		t.Errorf("EarlierThan with a stale EARLIEST = %+v, %v", got, err)
	}
}

func TestLatest(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	m := snapshot.NewManager(fio, table)
	commitRange(t, m, 1, 3)
	s, err := m.Latest(ctx)
	if err != nil || s == nil || s.ID != 3 {
		t.Fatalf("Latest = %+v, %v", s, err)
	}
	// A second manager's commit is visible through the hint check even if
	// its LATEST write was lost.
	other := snapshot.NewManager(fio, table)
	if err := other.Commit(ctx, snap(4, "o", 1, snapshot.CommitAppend, 4)); err != nil {
		t.Fatal(err)
	}
	write(t, fio, "LATEST", "3")
	if id, _, err := m.LatestID(ctx); id != 4 || err != nil {
		t.Errorf("LatestID = %d, %v; want 4", id, err)
	}
}
