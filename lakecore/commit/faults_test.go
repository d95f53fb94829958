package commit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
)

const snapshot2 = tablePath + "/snapshot/snapshot-2"

// TestAmbiguousSnapshotWrite makes the snapshot write of the second commit
// report an unknown outcome, once after landing and once without landing:
// either way the commit ends up in the table exactly once and the files
// it references survive.
func TestAmbiguousSnapshotWrite(t *testing.T) {
	for _, c := range []struct {
		name string
		mode faultfs.Mode
	}{
		{"applied then failed", faultfs.ApplyThenFail},
		{"failed without applying", faultfs.FailBefore},
	} {
		t.Run(c.name, func(t *testing.T) {
			local, fio, cm := faultyAfterOneCommit(t, commit.Options{CommitUser: "u", MinRetryWait: time.Millisecond})
			ctx := context.Background()
			fio.Add(faultfs.Fault{Ops: faultfs.OpWriteExclusive, Path: snapshot2, Mode: c.mode, Err: storage.ErrAmbiguous, Times: 1})
			s, err := cm.Commit(ctx, 2, []commit.Message{msg(1, file("b", 2))})
			if err != nil {
				t.Fatal(err)
			}
			if len(fio.Injected()) != 1 {
				t.Fatalf("injected %v", fio.Injected())
			}
			if s.ID != 2 || s.CommitIdentifier != 2 {
				t.Fatalf("commit returned snapshot %d (identifier %d), want 2", s.ID, s.CommitIdentifier)
			}
			checkChain(t, local, map[string]int{"u": 2}, 3)
			if got := names(live(t, local)); strings.Join(got, ",") != "a,b" {
				t.Fatalf("live %v", got)
			}
			// The next commit builds on it normally.
			if s, err := cm.Commit(ctx, 3, []commit.Message{msg(1, file("c", 1))}); err != nil || s.ID != 3 {
				t.Fatalf("commit after: %+v %v", s, err)
			}
			checkChain(t, local, map[string]int{"u": 3}, 4)
		})
	}
}

// TestAmbiguousThenCancelled gives up during the backoff after an unknown
// outcome: the error says the outcome is unknown and no file of the
// attempt is deleted.
func TestAmbiguousThenCancelled(t *testing.T) {
	local := localFIO(t)
	fio := faultfs.New(local, 1, faultfs.Fault{Ops: faultfs.OpWriteExclusive, Path: tablePath + "/snapshot/snapshot-1",
		Mode: faultfs.FailBefore, Err: storage.ErrAmbiguous})
	createTable(t, fio, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cm := commit.New(fio, tablePath, commit.Options{CommitUser: "u", MinRetryWait: time.Hour, MaxRetryWait: time.Hour})
	_, err := cm.Commit(ctx, 1, []commit.Message{msg(1, file("a", 1))})
	if !errors.Is(err, commit.ErrCommitAmbiguous) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want ErrCommitAmbiguous and the deadline", err)
	}
	files, _ := os.ReadDir(filepath.Join(local.Root(), tablePath, "manifest"))
	if len(files) != 3 { // delta manifest, delta list, base list
		t.Fatalf("%d manifest files left, want the 3 of the ambiguous attempt", len(files))
	}
	// FilterCommitted says it is not committed; committing again works.
	cm2 := commit.New(local, tablePath, commit.Options{CommitUser: "u"})
	if ids, err := cm2.FilterCommitted(context.Background(), []int64{1}); err != nil || len(ids) != 1 {
		t.Fatalf("filter committed: %v %v", ids, err)
	}
	if _, err := cm2.Commit(context.Background(), 1, []commit.Message{msg(1, file("a", 1))}); err != nil {
		t.Fatal(err)
	}
	checkChain(t, local, map[string]int{"u": 1}, 1)
}

// TestRetriesExhausted loses the snapshot id on every attempt: the commit
// gives up after commit.max-retries with ErrRetriesExhausted and deletes
// every file it wrote.
func TestRetriesExhausted(t *testing.T) {
	local := localFIO(t)
	fio := faultfs.New(local, 1, faultfs.Fault{Ops: faultfs.OpWriteExclusive, Path: tablePath + "/snapshot/snapshot-*",
		Mode: faultfs.FailBefore, Err: storage.ErrExist})
	createTable(t, fio, nil)
	cm := commit.New(fio, tablePath, commit.Options{CommitUser: "u", MaxRetries: 3, MinRetryWait: time.Millisecond})
	start := time.Now()
	_, err := cm.Commit(context.Background(), 1, []commit.Message{msg(1, file("a", 1))})
	if !errors.Is(err, commit.ErrRetriesExhausted) || errors.Is(err, commit.ErrCommitAmbiguous) || !errors.Is(err, snapshot.ErrSnapshotExists) {
		t.Fatalf("error %v, want ErrRetriesExhausted wrapping ErrSnapshotExists", err)
	}
	if n := len(fio.Injected()); n != 4 {
		t.Fatalf("%d snapshot writes, want 1 + 3 retries", n)
	}
	// Backoff: 1 + 2 + 4 ms at least.
	if d := time.Since(start); d < 7*time.Millisecond {
		t.Fatalf("gave up after %v, faster than the backoff", d)
	}
	if files, _ := os.ReadDir(filepath.Join(local.Root(), tablePath, "manifest")); len(files) != 0 {
		t.Fatalf("%d manifest files left behind", len(files))
	}

	// commit.timeout stops retrying too.
	cm = commit.New(fio, tablePath, commit.Options{CommitUser: "u", MaxRetries: 1000, MinRetryWait: 20 * time.Millisecond,
		MaxRetryWait: 20 * time.Millisecond, Timeout: 100 * time.Millisecond})
	start = time.Now()
	if _, err := cm.Commit(context.Background(), 1, nil); !errors.Is(err, commit.ErrRetriesExhausted) {
		t.Fatalf("with a timeout: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout of 100ms took %v", d)
	}
}

// TestPrepareFailureCleansUp fails writing the base manifest list: nothing
// is retried, nothing is committed, and the delta files are deleted.
func TestPrepareFailureCleansUp(t *testing.T) {
	local, fio, cm := faultyAfterOneCommit(t, commit.Options{CommitUser: "u"})
	ctx := context.Background()
	before, _ := os.ReadDir(filepath.Join(local.Root(), tablePath, "manifest"))
	// The third manifest write of a commit is the base list (delta
	// manifest, delta list, base list).
	fio.Add(faultfs.Fault{Ops: faultfs.OpWriteExclusive, Path: tablePath + "/manifest/*", Nth: 3, Times: 1, Mode: faultfs.FailBefore})
	_, err := cm.Commit(ctx, 2, []commit.Message{msg(1, file("b", 1))})
	if !errors.Is(err, faultfs.ErrInjected) || errors.Is(err, commit.ErrCommitAmbiguous) {
		t.Fatalf("error %v, want the injected failure", err)
	}
	after, _ := os.ReadDir(filepath.Join(local.Root(), tablePath, "manifest"))
	if len(after) != len(before) {
		t.Fatalf("%d manifest files before, %d after a failed commit", len(before), len(after))
	}
	checkChain(t, local, map[string]int{"u": 1}, 1)
}

// TestAmbiguousSnapshotWriteDanglingLatestHint: the snapshot write lands but
// reports an unknown outcome while the LATEST hint names a snapshot well
// above the last one (trusted while the next id is absent). The look-up for
// the landed attempt must see past the hint; it used to miss it, and the
// retry committed identifier 3 a second time as snapshot 4.
func TestAmbiguousSnapshotWriteDanglingLatestHint(t *testing.T) {
	local := localFIO(t)
	fio := faultfs.New(local, 1)
	createTable(t, fio, nil)
	ctx := context.Background()
	cm := commit.New(fio, tablePath, commit.Options{CommitUser: "u", MinRetryWait: time.Millisecond})
	for id := int64(1); id <= 2; id++ {
		if _, err := cm.Commit(ctx, id, []commit.Message{msg(1, file(fmt.Sprint("f", id), 1))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := local.WriteFile(ctx, tablePath+"/snapshot/LATEST", []byte("9")); err != nil {
		t.Fatal(err)
	}
	fio.Add(faultfs.Fault{Ops: faultfs.OpWriteExclusive, Path: tablePath + "/snapshot/snapshot-3",
		Mode: faultfs.ApplyThenFail, Err: storage.ErrAmbiguous, Times: 1})
	s, err := cm.Commit(ctx, 3, []commit.Message{msg(1, file("f3", 1))})
	if err != nil {
		t.Fatal(err)
	}
	if len(fio.Injected()) != 1 {
		t.Fatalf("injected %v", fio.Injected())
	}
	if s.ID != 3 || s.CommitIdentifier != 3 {
		t.Fatalf("commit returned snapshot %d (identifier %d), want 3", s.ID, s.CommitIdentifier)
	}
	checkChain(t, local, map[string]int{"u": 3}, 3)
}
