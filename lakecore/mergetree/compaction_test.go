package mergetree

import (
	"slices"
	"testing"
)

func runs(levelSizes ...int64) []Run {
	var out []Run
	for i := 0; i < len(levelSizes); i += 2 {
		out = append(out, Run{Level: int32(levelSizes[i]), Files: []int{i / 2}, Size: levelSizes[i+1]})
	}
	return out
}

// TestUniversalFixtureTraces replays the compaction decisions of the two
// Java-written fixtures (paimon-pk.md Appendix B): deletion-vector tables,
// so ForceUpLevel0Compaction over UniversalCompaction.
func TestUniversalFixtureTraces(t *testing.T) {
	fx09 := Universal{MaxSizeAmp: 200, SizeRatio: 1, Trigger: 5, NumLevels: 6}
	fx20 := Universal{MaxSizeAmp: 200, SizeRatio: 1, Trigger: 2, NumLevels: 3}
	for _, c := range []struct {
		name  string
		u     Universal
		runs  []Run
		out   int32
		files []int
	}{
		{"FX09 snapshot 2", fx09, runs(0, 2190), 5, []int{0}},
		{"FX09 snapshot 4", fx09, runs(0, 2021, 5, 2190), 4, []int{0}},
		{"FX09 snapshot 6 bucket 0", fx09, runs(0, 1682, 4, 2021, 5, 2190), 3, []int{0}},
		{"FX09 snapshot 6 bucket 1", fx09, runs(0, 1539, 5, 1800), 4, []int{0}},
		{"FX09 snapshot 8", fx09, runs(0, 1553, 3, 1553, 4, 2021, 5, 2190), 5, []int{0, 1, 2, 3}},
		{"FX20 snapshot 2", fx20, runs(0, 1331), 2, []int{0}},
		{"FX20 snapshot 4", fx20, runs(0, 1332, 2, 1331), 2, []int{0, 1}},
		{"FX20 snapshot 6", fx20, runs(0, 1332, 2, 1412), 1, []int{0}},
	} {
		unit, ok := c.u.PickForceUpLevel0(c.runs, c.u.NumLevels)
		if !ok || unit.OutputLevel != c.out || !slices.Equal(unit.Files, c.files) {
			t.Errorf("%s: unit %+v (ok %v), want output level %d with files %v", c.name, unit, ok, c.out, c.files)
		}
	}
	// Plain universal compaction leaves the FX20 snapshot 6 runs alone.
	if unit, ok := fx20.Pick(runs(0, 1332, 2, 1412), 3); ok {
		t.Errorf("universal pick of FX20 snapshot 6: %+v, want none", unit)
	}
}

func TestUniversalPick(t *testing.T) {
	u := Universal{MaxSizeAmp: 200, SizeRatio: 1, Trigger: 5, NumLevels: 6}
	for _, c := range []struct {
		name  string
		runs  []Run
		ok    bool
		out   int32
		files []int
	}{
		{"below trigger", runs(0, 10, 0, 10, 0, 10, 5, 1000), false, 0, nil},
		// 5 runs, younger 40 > 200% of 10: everything to the top level.
		{"size amplification", runs(0, 10, 0, 10, 0, 10, 0, 10, 5, 10), true, 5, []int{0, 1, 2, 3, 4}},
		// Ratio: 10 vs 10 joins, 20 vs 10 joins, 30 vs 100 stops: output one below level 4.
		{"size ratio", runs(0, 10, 0, 10, 0, 10, 4, 100, 5, 1000), true, 3, []int{0, 1, 2}},
		// 7 runs, none mergeable by ratio: the oldest extra runs are taken.
		{"file count", runs(0, 1, 0, 3, 0, 9, 0, 27, 0, 81, 0, 243, 5, 100000), true, 0, nil},
	} {
		unit, ok := u.Pick(c.runs, 6)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v (%+v)", c.name, ok, c.ok, unit)
			continue
		}
		if ok && c.files != nil && (unit.OutputLevel != c.out || !slices.Equal(unit.Files, c.files)) {
			t.Errorf("%s: %+v, want output level %d with files %v", c.name, unit, c.out, c.files)
		}
		if ok && c.name == "file count" {
			// 7 runs, trigger 5: 3 runs at least; level 0 is never an output:
			// the unit takes every level-0 run and goes to level 5.
			if unit.OutputLevel != 5 || len(unit.Files) != 7 {
				t.Errorf("%s: %+v, want all 7 runs to level 5", c.name, unit)
			}
		}
	}
}
