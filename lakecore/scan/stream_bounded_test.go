package scan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// TestBoundedStreamLatestHintPointingAtNothing: a bounded stream takes its
// end from the LATEST hint, which is trusted while the next id is absent.
// A hint naming a snapshot that does not exist must fail clearly, naming
// it, instead of waiting forever for snapshots that never come; once the
// hint is right again the stream reads to the real end. Found by the
// reliability suite (a bounded paimon input never ended, without an error).
func TestBoundedStreamLatestHintPointingAtNothing(t *testing.T) {
	fio := tempFIO(t)
	tb := newPartitioned(t, fio, nil)
	for i := range 3 {
		tb.Append([]any{"a"}, rowsOf("a", i*10, 2)...)
	}
	if err := tb.Snapshots().WriteLatestHint(bg, 9); err != nil {
		t.Fatal(err)
	}
	s := scan.NewStreamScanner(fio, tb.Path, scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1, Bounded: true})
	for range 2 { // the error repeats on retry
		_, err := s.Next(bg)
		if !errors.Is(err, snapshot.ErrSnapshotNotFound) || !strings.Contains(err.Error(), "snapshot-9") {
			t.Fatalf("Next: %v, want ErrSnapshotNotFound naming snapshot-9", err)
		}
	}
	if err := tb.Snapshots().WriteLatestHint(bg, 3); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		p, err := s.Next(bg)
		if errors.Is(err, scan.ErrEndOfScan) {
			break
		}
		if err != nil || p == nil {
			t.Fatalf("Next: %v, %v", p, err)
		}
		got = append(got, p.Snapshot.CommitUser)
	}
	if len(got) != 3 {
		t.Errorf("read %d snapshots after the repair, want 3", len(got))
	}
}
