package scan_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan/scantest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// step is what one StreamScanner.Next returned, in short: "F4:8" is the full
// plan of snapshot 4 with 8 rows, "D2:4" the delta of snapshot 2 with 4
// rows, "-" no snapshot yet, "END" ErrEndOfScan.
func step(t *testing.T, s *scan.StreamScanner) string {
	t.Helper()
	p, err := s.Next(bg)
	switch {
	case errors.Is(err, scan.ErrEndOfScan):
		return "END"
	case err != nil:
		return "ERR " + err.Error()
	case p == nil:
		return "-"
	}
	if p.NextSnapshot != p.Snapshot.ID+1 {
		t.Errorf("plan of snapshot %d has NextSnapshot %d", p.Snapshot.ID, p.NextSnapshot)
	}
	kind := "D"
	if p.Full {
		kind = "F"
	}
	var rows int64
	for i := range p.Splits {
		rows += p.Splits[i].RowCount()
	}
	out := fmt.Sprintf("%s%d:%d", kind, p.Snapshot.ID, rows)
	if p.ExpiredFrom > 0 {
		out += fmt.Sprintf("(expired from %d)", p.ExpiredFrom)
	}
	return out
}

func steps(t *testing.T, s *scan.StreamScanner, n int) string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = step(t, s)
	}
	return strings.Join(out, " ")
}

// TestStreamModesFixture runs every startup mode over the 1.1 fixed-bucket
// fixture: APPEND 1 (3 rows), 2 (4), 3 (1), COMPACT 4.
func TestStreamModesFixture(t *testing.T) {
	fio := fixtureFIO(t, fixedBucketFixture)
	sm := snapshot.NewManager(fio, fixedBucketTable)
	time := func(id int64) int64 {
		s, err := sm.Get(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		return s.TimeMillis
	}
	for _, c := range []struct {
		name string
		o    scan.StreamOptions
		want string
	}{
		{"default is latest-full", scan.StreamOptions{}, "F4:8 - -"},
		{"latest-full", scan.StreamOptions{Mode: scan.ModeLatestFull}, "F4:8 -"},
		{"full alias", scan.StreamOptions{Mode: scan.ModeFull}, "F4:8 -"},
		{"latest", scan.StreamOptions{Mode: scan.ModeLatest}, "- -"},
		{"from-snapshot 2 (COMPACT 4 skipped)", scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 2}, "D2:4 D3:1 D4:0 -"},
		{"from-snapshot 1", scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1}, "D1:3 D2:4 D3:1 D4:0 -"},
		{"from-snapshot-full 2", scan.StreamOptions{Mode: scan.ModeFromSnapshotFull, SnapshotID: 2}, "F2:7 D3:1 D4:0 -"},
		{"from-snapshot-full 4", scan.StreamOptions{Mode: scan.ModeFromSnapshotFull, SnapshotID: 4}, "F4:8 -"},
		{"from-timestamp at snapshot 2", scan.StreamOptions{Mode: scan.ModeFromTimestamp, TimestampMillis: time(2)}, "D2:4 D3:1 D4:0 -"},
		{"from-timestamp just after 2", scan.StreamOptions{Mode: scan.ModeFromTimestamp, TimestampMillis: time(2) + 1}, "D3:1 D4:0 -"},
		{"from-timestamp before all", scan.StreamOptions{Mode: scan.ModeFromTimestamp, TimestampMillis: time(1) - 1000}, "D1:3 D2:4 D3:1 D4:0 -"},
		{"from-timestamp after all", scan.StreamOptions{Mode: scan.ModeFromTimestamp, TimestampMillis: time(4) + 1}, "- -"},
		{"consumer position overrides the mode", scan.StreamOptions{Mode: scan.ModeLatestFull, NextSnapshot: 3}, "D3:1 D4:0 -"},
		{"consumer position at the end", scan.StreamOptions{NextSnapshot: 5}, "- -"},
		{"consumer position of a recreated table", scan.StreamOptions{NextSnapshot: 7}, "ERR"},
		{"bounded latest-full", scan.StreamOptions{Bounded: true}, "F4:8 END END"},
		{"bounded from-snapshot", scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 3, Bounded: true}, "D3:1 D4:0 END"},
		{"bounded latest", scan.StreamOptions{Mode: scan.ModeLatest, Bounded: true}, "END"},
		{"filter f1=20", scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1,
			Filter: partitionIn(t, fio, fixedBucketTable, map[string][]any{"f1": {int32(20)}})}, "D1:1 D2:1 D3:0 D4:0 -"},
		{"filter on a full plan", scan.StreamOptions{Filter: partitionIn(t, fio, fixedBucketTable, map[string][]any{"f1": {int32(10)}})}, "F4:6 -"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := scan.NewStreamScanner(fio, fixedBucketTable, c.o)
			got := steps(t, s, len(strings.Fields(c.want)))
			if strings.HasPrefix(c.want, "ERR") {
				if !strings.HasPrefix(got, "ERR") || !strings.Contains(got, "too big") {
					t.Errorf("got %q, want the too-big error", got)
				}
				return
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	for name, o := range map[string]scan.StreamOptions{
		"unknown mode":             {Mode: "compacted-full"},
		"from-snapshot without id": {Mode: scan.ModeFromSnapshot},
		"from-snapshot-full ahead": {Mode: scan.ModeFromSnapshotFull, SnapshotID: 9},
		"bad OnExpired":            {OnExpired: "skip"},
		"negative position":        {NextSnapshot: -1},
	} {
		if _, err := scan.NewStreamScanner(fio, fixedBucketTable, o).Next(bg); !errors.Is(err, scan.ErrInvalidOptions) {
			t.Errorf("%s: %v, want ErrInvalidOptions", name, err)
		}
	}
}

// TestStreamFollowsNewSnapshots: a stream over a table that starts empty
// sees each commit once, in order, with OVERWRITE and ANALYZE handled as
// Paimon does.
func TestStreamFollowsNewSnapshots(t *testing.T) {
	for _, c := range []struct {
		name string
		o    scan.StreamOptions
		want string
	}{
		{"latest-full on an empty table", scan.StreamOptions{}, "- D1:2 D2:3 - D3:0 D4:0 D5:1 -"},
		{"latest on an empty table", scan.StreamOptions{Mode: scan.ModeLatest}, "- D1:2 D2:3 - D3:0 D4:0 D5:1 -"},
		{"from-timestamp on an empty table", scan.StreamOptions{Mode: scan.ModeFromTimestamp, TimestampMillis: 1}, "- D1:2 D2:3 - D3:0 D4:0 D5:1 -"},
		{"read overwrite", scan.StreamOptions{ReadOverwrite: true}, "- D1:2 D2:3 - D3:4 D4:0 D5:1 -"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fio := tempFIO(t)
			tb := newPartitioned(t, fio, nil)
			s := scan.NewStreamScanner(fio, tb.Path, c.o)
			var got []string
			got = append(got, step(t, s))
			a := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 0, 2))
			tb.Commit(snapshot.CommitAppend, a)
			got = append(got, step(t, s))
			tb.Append([]any{"b"}, rowsOf("b", 0, 3)...)
			got = append(got, step(t, s), step(t, s))
			// INSERT OVERWRITE of partition a, then an ANALYZE, then an append.
			a2 := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 10, 4))
			tb.Commit(snapshot.CommitOverwrite, scantest.Delete(a), a2)
			tb.Commit(snapshot.CommitAnalyze)
			tb.Append([]any{"c"}, rowsOf("c", 0, 1)...)
			got = append(got, step(t, s), step(t, s), step(t, s), step(t, s))
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("got %q, want %q", g, c.want)
			}
		})
	}
}

// TestStreamExpired: a stream that falls behind snapshot expiration fails
// with Paimon's message, or jumps to the earliest snapshot when told to.
func TestStreamExpired(t *testing.T) {
	build := func(t *testing.T) (storage.FileIO, *scantest.Table) {
		fio := tempFIO(t)
		tb := newPartitioned(t, fio, nil)
		for i := range 5 {
			tb.Append([]any{"a"}, rowsOf("a", i*10, i+1)...)
		}
		return fio, tb
	}
	expire := func(t *testing.T, tb *scantest.Table, upTo int64) {
		for id := int64(1); id <= upTo; id++ {
			if err := tb.Snapshots().Delete(bg, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := tb.Snapshots().WriteEarliestHint(bg, upTo+1); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("error", func(t *testing.T) {
		fio, tb := build(t)
		s := scan.NewStreamScanner(fio, tb.Path, scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1})
		if got := step(t, s); got != "D1:1" {
			t.Fatalf("first step %q", got)
		}
		expire(t, tb, 3)
		_, err := s.Next(bg)
		if !errors.Is(err, scan.ErrSnapshotExpired) || !strings.Contains(err.Error(), "snapshot with id 2 has expired") ||
			!strings.Contains(err.Error(), "use consumer-id") {
			t.Fatalf("got %v", err)
		}
		// The position is kept: the error repeats.
		if _, err := s.Next(bg); !errors.Is(err, scan.ErrSnapshotExpired) {
			t.Errorf("second Next: %v", err)
		}
	})
	t.Run("earliest", func(t *testing.T) {
		fio, tb := build(t)
		s := scan.NewStreamScanner(fio, tb.Path, scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1, OnExpired: scan.OnExpiredEarliest})
		if got := step(t, s); got != "D1:1" {
			t.Fatalf("first step %q", got)
		}
		expire(t, tb, 3)
		if got := steps(t, s, 3); got != "D4:4(expired from 2) D5:5 -" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("start clamps to earliest", func(t *testing.T) {
		fio, tb := build(t)
		expire(t, tb, 2)
		for _, o := range []scan.StreamOptions{
			{Mode: scan.ModeFromSnapshot, SnapshotID: 1},
			{NextSnapshot: 2},
		} {
			if got := steps(t, scan.NewStreamScanner(fio, tb.Path, o), 4); got != "D3:3 D4:4 D5:5 -" {
				t.Errorf("%+v: got %q", o, got)
			}
		}
		if got := steps(t, scan.NewStreamScanner(fio, tb.Path, scan.StreamOptions{Mode: scan.ModeFromSnapshotFull, SnapshotID: 1}), 3); got != "F3:6 D4:4 D5:5" {
			t.Errorf("from-snapshot-full of an expired id: got %q", got)
		}
	})
	t.Run("bounded ignores later commits", func(t *testing.T) {
		fio, tb := build(t)
		s := scan.NewStreamScanner(fio, tb.Path, scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 4, Bounded: true})
		if got := step(t, s); got != "D4:4" {
			t.Fatalf("got %q", got)
		}
		tb.Append([]any{"a"}, rowsOf("a", 0, 1)...)
		if got := steps(t, s, 2); got != "D5:5 END" {
			t.Errorf("got %q", got)
		}
	})
}

// TestStreamNextSnapshotID: NextSnapshotID is 0 until the mode is resolved
// and while an initial full plan is pending, then the id the next delta
// reads, over the 1.1 fixture (snapshots 1 to 4).
func TestStreamNextSnapshotID(t *testing.T) {
	fio := fixtureFIO(t, fixedBucketFixture)
	for _, c := range []struct {
		name  string
		o     scan.StreamOptions
		steps int
		want  []int64 // before the first Next, then after each
	}{
		{"latest-full", scan.StreamOptions{Mode: scan.ModeLatestFull}, 2, []int64{0, 5, 5}},
		{"latest", scan.StreamOptions{Mode: scan.ModeLatest}, 1, []int64{0, 5}},
		{"from-snapshot 2", scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 2}, 4, []int64{0, 3, 4, 5, 5}},
		{"from-snapshot-full 2", scan.StreamOptions{Mode: scan.ModeFromSnapshotFull, SnapshotID: 2}, 2, []int64{0, 3, 4}},
		{"consumer position at the end", scan.StreamOptions{NextSnapshot: 5}, 1, []int64{0, 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := scan.NewStreamScanner(fio, fixedBucketTable, c.o)
			got := []int64{s.NextSnapshotID()}
			for range c.steps {
				step(t, s)
				got = append(got, s.NextSnapshotID())
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("NextSnapshotID: %v, want %v", got, c.want)
			}
		})
	}
}
