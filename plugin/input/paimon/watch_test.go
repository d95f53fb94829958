package paimon

import (
	"context"
	"runtime"
	"testing"
)

// TestSnapshotWatchWakesReader: a reader that caught up on a local table
// sees a new snapshot as soon as it is committed, not a discovery_interval
// (here ten minutes) later.
func TestSnapshotWatchWakesReader(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("directory watches are Linux only; other systems poll")
	}
	tt := newTestTable(t, nil, nil)
	tt.appendRows(row("2024-01-01", "eu", 1))
	in := newInput(t, tt.yaml("scan_mode: latest-full\ndiscovery_interval: 10m\n"))
	ctx := context.Background()
	if err := in.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	if got := readN(t, in, 1); len(got) != 1 {
		t.Fatalf("first snapshot: %v", got)
	}
	// The reader is waiting now (its plan found nothing new). readN fails
	// after 20 s, far below the 10 minute interval.
	tt.appendRows(row("2024-01-01", "eu", 2))
	if got := readN(t, in, 1); len(got) != 1 || got[0].Snapshot != 2 {
		t.Fatalf("second snapshot: %v", got)
	}
	tt.appendRows(row("2024-01-01", "eu", 3))
	if got := readN(t, in, 1); len(got) != 1 || got[0].Snapshot != 3 {
		t.Fatalf("third snapshot: %v", got)
	}
}
