package reliability

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
)

// Streaming readers against snapshot expiry and restarts, through the
// paimon input. Each snapshot of the tables here holds 100 rows with ids
// (snapshot-1)*100 .. snapshot*100-1.

// expireHard expires every snapshot it may: retain 1, nothing too young.
func expireHard(t *testing.T, tbl *lakecore.Table) *maintain.Report {
	t.Helper()
	rep, err := tbl.ExpireSnapshots(context.Background(), maintain.ExpireSnapshotsOptions{
		RetainMin: 1, RetainMax: 1, OlderThan: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// appendSnapshots commits snapshots from..to (inclusive), each with the 100
// rows of its ids (see idsOf).
func appendSnapshots(t *testing.T, tbl *lakecore.Table, from, to int64) {
	t.Helper()
	for s := from; s <= to; s++ {
		appendRows(t, tbl, (s-1)*100, 100)
	}
}

func consumerPosition(t *testing.T, tbl *lakecore.Table, id string) int64 {
	t.Helper()
	c, ok, err := tbl.Consumers().Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return c.NextSnapshot
}

func snapshotIDs(t *testing.T, tbl *lakecore.Table) []int64 {
	t.Helper()
	ids, err := tbl.Snapshots().ListIDs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// idsOf returns the ids of snapshots from..to (inclusive).
func idsOf(from, to int64) []int64 {
	var out []int64
	for id := (from - 1) * 100; id < to*100; id++ {
		out = append(out, id)
	}
	return out
}

func sortedCopy(v []int64) []int64 {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// TestReaderConsumerPinsSnapshots: a reader with consumer_id holds back
// acks of snapshot 3 while a writer adds snapshots and expiry runs with
// retain 1 again and again; the consumer position (3) pins snapshots 3 and
// later, and the reader then reads every row once.
func TestReaderConsumerPinsSnapshots(t *testing.T) {
	skipShort(t)
	wh, tbl := newLocalTable(t, "pinned", nil)
	appendSnapshots(t, tbl, 1, 4)
	in := startInput(t, fmt.Sprintf(`
  warehouse: %s
  database: rel
  table: pinned
  consumer_id: pin
  scan_mode: from-snapshot
  scan_snapshot_id: 1
  discovery_interval: 50ms
  batch_size: 100
`, wh), 3)
	defer in.stop(5 * time.Second)
	if !waitFor(20*time.Second, func() bool { return consumerPosition(t, tbl, "pin") == 3 }) {
		t.Fatalf("consumer position %d, want 3 (snapshots 1 and 2 acked)", consumerPosition(t, tbl, "pin"))
	}
	expired := 0
	for s := int64(5); s <= 10; s++ {
		appendSnapshots(t, tbl, s, s)
		expired += expireHard(t, tbl).SnapshotsExpired
	}
	ids := snapshotIDs(t, tbl)
	if !slices.Equal(ids, []int64{3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Fatalf("snapshots after expiry %v, want 3..10 (pinned by the consumer at 3)", ids)
	}
	// Every retained snapshot still reads.
	for _, id := range ids {
		if _, err := tbl.ReadDelta(context.Background(), id); err != nil {
			t.Errorf("snapshot %d: %v", id, err)
		}
	}
	in.gate.Store(0)
	if !waitFor(30*time.Second, func() bool { return consumerPosition(t, tbl, "pin") == 11 }) {
		t.Fatalf("consumer position %d, want 11", consumerPosition(t, tbl, "pin"))
	}
	got := sortedCopy(in.received())
	if !slices.Equal(slices.Compact(slices.Clone(got)), idsOf(1, 10)) || len(got) != 1000 {
		t.Errorf("read %d rows, want ids 0..999 once each", len(got))
	}
	// Once the reader moved on, the pinned snapshots go.
	expireHard(t, tbl)
	if ids := snapshotIDs(t, tbl); !slices.Equal(ids, []int64{10}) {
		t.Errorf("snapshots after the reader caught up and expiry ran: %v, want [10]", ids)
	}
	figure(t, "consumer at 3 kept snapshots 3..10 through 6 expiry runs with retain 1 (%d snapshots expired: 1 and 2); 1000 rows read once", expired)
}

// TestReaderBehindExpiry: a reader without a consumer falls behind an
// expiry with retain 1. With on_expired: error it reports the expired
// snapshot with advice, again and again, and reads nothing past it; with
// on_expired: earliest it warns which snapshots it skipped and goes on.
func TestReaderBehindExpiry(t *testing.T) {
	skipShort(t)
	for _, mode := range []string{"error", "earliest"} {
		t.Run(mode, func(t *testing.T) {
			wh, tbl := newLocalTable(t, "behind", nil)
			appendSnapshots(t, tbl, 1, 3)
			in := startInput(t, fmt.Sprintf(`
  warehouse: %s
  database: rel
  table: behind
  scan_mode: from-snapshot
  scan_snapshot_id: 1
  on_expired: %s
  discovery_interval: 50ms
  batch_size: 100
`, wh, mode), 2)
			defer in.stop(5 * time.Second)
			if !waitFor(20*time.Second, func() bool { return len(in.received()) >= 100 }) {
				t.Fatal("the reader did not start")
			}
			appendSnapshots(t, tbl, 4, 12)
			expireHard(t, tbl) // keeps 12 only: the reader is far behind
			in.gate.Store(0)
			switch mode {
			case "error":
				want := "has expired"
				if !waitFor(20*time.Second, func() bool { return len(in.logs.grep(want)) >= 2 }) {
					t.Fatalf("no repeated error saying %q; logs:\n%s", want, strings.Join(firstN(in.logs.grep("level="), 20), "\n"))
				}
				line := in.logs.grep(want)[0]
				for _, w := range []string{"on_expired: earliest", "consumer", "snapshot.time-retained"} {
					if !strings.Contains(line, w) {
						t.Errorf("the error does not mention %q: %s", w, line)
					}
				}
				got := sortedCopy(in.received())
				if len(got) > 0 && got[len(got)-1] >= 1100 {
					t.Errorf("read rows of snapshot 12 (%d) past the expired gap", got[len(got)-1])
				}
				t.Logf("error: %s", truncate(line, 400))
				figure(t, "on_expired: error: %d rows read before the gap, then the error repeats (%d times so far)", len(got), len(in.logs.grep(want)))
			case "earliest":
				want := "expired before they were read and are skipped"
				if !waitFor(20*time.Second, func() bool { return len(in.logs.grep(want)) >= 1 }) {
					t.Fatalf("no warning saying %q", want)
				}
				if !waitFor(20*time.Second, func() bool { return slices.Contains(in.received(), 1199) }) {
					t.Fatal("the rows of snapshot 12 were not read")
				}
				t.Logf("warning: %s", truncate(in.logs.grep(want)[0], 300))
				figure(t, "on_expired: earliest: %d rows read, the gap reported", len(in.received()))
			}
		})
	}
}

// TestReaderRestartResumes: a reader with consumer_id acks snapshots 1 to
// 3, receives rows of snapshot 4 without acking them and is stopped hard
// (a crash, as far as acks go). Restarted, it reads snapshots 4 to 6: the
// only rows read twice are the unacknowledged ones of snapshot 4, nothing
// is skipped, and the position ends at 7.
func TestReaderRestartResumes(t *testing.T) {
	skipShort(t)
	wh, tbl := newLocalTable(t, "resume", nil)
	appendSnapshots(t, tbl, 1, 6)
	conf := fmt.Sprintf(`
  warehouse: %s
  database: rel
  table: resume
  consumer_id: restart
  scan_mode: from-snapshot
  scan_snapshot_id: 1
  bounded: true
  discovery_interval: 50ms
  batch_size: 25
`, wh)
	first := startInput(t, conf, 4)
	if !waitFor(20*time.Second, func() bool { return consumerPosition(t, tbl, "restart") == 4 }) {
		t.Fatalf("consumer position %d, want 4", consumerPosition(t, tbl, "restart"))
	}
	if !waitFor(20*time.Second, func() bool { return slices.ContainsFunc(first.received(), func(id int64) bool { return id >= 300 }) }) {
		t.Fatal("no row of snapshot 4 received")
	}
	first.kill()
	got1 := first.received()
	if pos := consumerPosition(t, tbl, "restart"); pos != 4 {
		t.Fatalf("after the crash the consumer is at %d, want 4 (snapshot 4 was not acked)", pos)
	}

	second := startInput(t, conf, 0)
	ended, err := second.ended(60 * time.Second)
	if !ended || err != nil {
		t.Fatalf("restarted bounded read did not end: %v, %v", ended, err)
	}
	got2 := sortedCopy(second.received())
	if !slices.Equal(got2, idsOf(4, 6)) {
		t.Errorf("the restart read %d rows (%v..), want exactly snapshots 4..6 (ids 300..599)", len(got2), firstN64(got2, 3))
	}
	if pos := consumerPosition(t, tbl, "restart"); pos != 7 {
		t.Errorf("final consumer position %d, want 7", pos)
	}
	all := sortedCopy(append(slices.Clone(got1), got2...))
	dups := 0
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dups++
			if all[i] < 300 || all[i] >= 400 {
				t.Errorf("id %d read twice, but only unacked rows of snapshot 4 may be", all[i])
			}
		}
	}
	if !slices.Equal(slices.Compact(all), idsOf(1, 6)) {
		t.Errorf("rows missing across the restart")
	}
	figure(t, "first run: %d rows (snapshots 1-3 acked, %d rows of snapshot 4 unacked); restart: %d rows; read twice: %d, all of snapshot 4", len(got1), len(got1)-300, len(got2), dups)
}

func firstN64(v []int64, n int) []int64 { return v[:min(n, len(v))] }
