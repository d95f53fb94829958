package e2e

import (
	"context"
	"testing"
	"time"
)

// TestOutputMaintenance: with maintenance after every commit, old snapshots
// expire as the table's options ask, and with compaction on, small files
// are compacted in COMPACT snapshots of the maintenance user; every row is
// still there exactly once.
func TestOutputMaintenance(t *testing.T) {
	const n = 20_000
	wh := t.TempDir()
	sb := eventsStream(t, n, eventsOutput(wh, `
      options:
        snapshot.num-retained.min: 2
        snapshot.num-retained.max: 4
        compaction.min.file-num: 3
    maintenance:
      interval: 0s
    compaction:
      enabled: true
    max_in_flight: 1
    batching:
      count: 500
      period: 100ms
`))
	// Maintenance runs off the hot path and shutdown cuts a run short: a
	// stream that ends within a fraction of a second on a loaded machine
	// could end before any run finished (one CI run saw no expiry at all),
	// so the input is paced to take about two seconds.
	if err := sb.AddProcessorYAML("sleep: { duration: 100us }"); err != nil {
		t.Fatal(err)
	}
	runStream(t, sb, 2*time.Minute)

	tbl, rows := readTable(t, wh, "default", "events")
	checkEvents(t, tbl, rows, n)
	ctx := context.Background()
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Commits made after the last maintenance run (which shutdown may cut
	// short) are not expired yet, so only require that expiry happened.
	if ids[0] <= 2 {
		t.Errorf("snapshots %v left, want the first ones expired", ids)
	}
	compacts := 0
	for id := ids[0]; id <= ids[len(ids)-1]; id++ {
		s, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.CommitKind == "COMPACT" {
			compacts++
			if s.CommitUser != "benthos-paimon-default.events-maintenance" {
				t.Errorf("COMPACT snapshot %d by %s", id, s.CommitUser)
			}
		}
	}
	live := liveEntries(t, tbl)
	// 40 batches of 500 rows over 5 days would leave about 45 files.
	if len(live) >= 40 {
		t.Errorf("%d live files after compaction (%d COMPACT snapshots retained)", len(live), compacts)
	}
}
