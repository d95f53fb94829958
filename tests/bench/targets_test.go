package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
)

// TestTargetsAtTheirSize: a target stated at a size is judged only from a
// run at that size, and every measured figure says its size.
func TestTargetsAtTheirSize(t *testing.T) {
	for _, c := range []struct {
		files, ms float64
		met       string
		unmet     int
	}{
		{5_000, 2000, "not judged: measured at 5,000 live files, the target is at 100,000", 0},
		{100_000, 2000, "no (wall), no (CPU)", 1},
		{120_000, 300, "yes (wall), yes (CPU)", 0},
	} {
		s := &Section{Name: "planning", Figures: map[string]float64{"plan_ms": c.ms, "plan_cpu_ms": c.ms, "plan_files": c.files}}
		r := &Report{Sections: []*Section{s}}
		rows := r.targets().Rows
		if len(rows) != 1 {
			t.Fatalf("rows %v", rows)
		}
		if got := rows[0][3]; got != c.met {
			t.Errorf("%v files, %v ms: met %q, want %q", c.files, c.ms, got, c.met)
		}
		if !strings.HasSuffix(rows[0][2], " at "+fInt(c.files)+" live files") {
			t.Errorf("measured %q does not say the size", rows[0][2])
		}
		if got := len(unmet(s)); got != c.unmet {
			t.Errorf("%v files, %v ms: %d unmet, want %d", c.files, c.ms, got, c.unmet)
		}
	}
	// A target without a stated size is judged at any size, and says it.
	s := &Section{Name: "tail", Figures: map[string]float64{"ratio_input_parquet": 0.5, "rows": 20_000}}
	rows := (&Report{Sections: []*Section{s}}).targets().Rows
	judged := 0
	for _, r := range rows {
		switch {
		case strings.Contains(r[1], "parquet-go reading the same files"):
			if r[2] != "0.50 at 20,000 rows" || r[3] != "no" {
				t.Errorf("tail target %v", r)
			}
			judged++
		case r[2] != "not measured": // a figure the section did not give
			t.Errorf("tail target %v, want not measured", r)
		}
	}
	if judged != 2 { // #6's goal and #19's
		t.Errorf("tail targets %v: %d judged, want 2", rows, judged)
	}
}

// TestSmallFilesNotes: the notes follow the figures, not a fixed story.
func TestSmallFilesNotes(t *testing.T) {
	reps := [2]*maintain.Report{
		{Duration: time.Second},
		{Duration: time.Second},
	}
	reps[0].Rewritten.Files, reps[0].Written.Files = 600, 5
	reps[1].Rewritten.Files, reps[1].Written.Files = 5, 1
	base := [3]smallFilesState{
		{files: 600, bytes: 1 << 20, planMs: 10, snapshot: 600, kind: "APPEND", adds: 600, onDisk: 600},
		{files: 5, bytes: 1 << 20, planMs: 10, snapshot: 601, kind: "COMPACT", adds: 605, delete: 600, onDisk: 605},
		{files: 1, bytes: 1 << 20, planMs: 10, snapshot: 602, kind: "COMPACT", adds: 606, delete: 605, onDisk: 606},
	}
	for _, c := range []struct {
		name           string
		planAfter      float64
		want, wantNot  []string
		secondSnapshot int64
	}{
		{"slower", 20, []string{"is slower than before it (10.0 ms, 600 files; 2.00×)", "reads the DELETE entries", "Each pass committed one COMPACT snapshot (601 and 602)", "All 606 data files", "One pass left 5 files, where files of target-file-size (256.0 MiB) would need 1 file", "second pass went on to 1 file:"}, nil, 602},
		{"faster", 5, []string{"is faster than before it"}, []string{"slower", "reads the DELETE entries"}, 602},
		{"same", 10.5, []string{"is about as fast as before it"}, []string{"slower", "faster"}, 602},
		{"no second snapshot", 10, []string{"The passes left snapshot 601 (COMPACT) and 601 (COMPACT) after 600"}, []string{"Each pass committed"}, 601},
	} {
		st := base
		st[1].planMs = c.planAfter
		st[2].snapshot = c.secondSnapshot
		got := strings.Join(smallFilesNotes(st, reps), "\n")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: notes lack %q:\n%s", c.name, w, got)
			}
		}
		for _, w := range c.wantNot {
			if strings.Contains(got, w) {
				t.Errorf("%s: notes say %q:\n%s", c.name, w, got)
			}
		}
	}
}
