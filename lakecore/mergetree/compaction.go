package mergetree

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

// Run is one sorted run of a bucket as compaction sees it: a level-0 file
// on its own, or all files of a level above 0 (Levels.levelSortedRuns).
type Run struct {
	Level int32
	// Files index the caller's file list.
	Files []int
	Size  int64
}

// SortedRuns returns the sorted runs of a bucket's live files in Java's
// order (Levels.java): each level-0 file is its own run, newest first
// (largest max sequence number, then smallest min sequence number, then
// creation time, then file name), followed by each non-empty level in
// ascending order.
func SortedRuns(files []manifest.DataFileMeta) []Run {
	var l0 []int
	byLevel := map[int32][]int{}
	for i := range files {
		if files[i].Level == 0 {
			l0 = append(l0, i)
		} else {
			byLevel[files[i].Level] = append(byLevel[files[i].Level], i)
		}
	}
	created := func(f *manifest.DataFileMeta) int64 {
		if f.CreationTimeMillis == nil {
			return 0
		}
		return *f.CreationTimeMillis
	}
	slices.SortFunc(l0, func(a, b int) int {
		fa, fb := &files[a], &files[b]
		return cmp.Or(cmp.Compare(fb.MaxSequenceNumber, fa.MaxSequenceNumber), cmp.Compare(fa.MinSequenceNumber, fb.MinSequenceNumber),
			cmp.Compare(created(fa), created(fb)), cmp.Compare(fa.FileName, fb.FileName))
	})
	runs := make([]Run, 0, len(l0)+len(byLevel))
	for _, i := range l0 {
		runs = append(runs, Run{Level: 0, Files: []int{i}, Size: files[i].FileSize})
	}
	levels := make([]int32, 0, len(byLevel))
	for l := range byLevel {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	for _, l := range levels {
		r := Run{Level: l, Files: byLevel[l]}
		for _, i := range r.Files {
			r.Size += files[i].FileSize
		}
		runs = append(runs, r)
	}
	return runs
}

// Unit is what one compaction rewrites: the files of some leading runs
// and the level their output goes to (CompactUnit).
type Unit struct {
	OutputLevel int32
	Files       []int
}

// Universal is UniversalCompaction with its options.
type Universal struct {
	// MaxSizeAmp is compaction.max-size-amplification-percent (200).
	MaxSizeAmp int64
	// SizeRatio is compaction.size-ratio in percent (1).
	SizeRatio int64
	// Trigger is num-sorted-run.compaction-trigger (5).
	Trigger int
	// NumLevels is num-levels (Trigger + 1).
	NumLevels int
}

// UniversalFromOptions reads the compaction options of a table.
func UniversalFromOptions(opts map[string]string) (Universal, error) {
	u := Universal{MaxSizeAmp: 200, SizeRatio: 1, Trigger: 5}
	intOpt := func(key string, dst *int64) error {
		if v, ok := opts[key]; ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return fmt.Errorf("%w: %s = %q is not an integer", schema.ErrInvalidOption, key, v)
			}
			*dst = n
		}
		return nil
	}
	trigger, levels := int64(5), int64(-1)
	for key, dst := range map[string]*int64{
		"compaction.max-size-amplification-percent": &u.MaxSizeAmp, "compaction.size-ratio": &u.SizeRatio,
		"num-sorted-run.compaction-trigger": &trigger, "num-levels": &levels,
	} {
		if err := intOpt(key, dst); err != nil {
			return u, err
		}
	}
	if trigger < 1 {
		return u, fmt.Errorf("%w: num-sorted-run.compaction-trigger = %d must be at least 1", schema.ErrInvalidOption, trigger)
	}
	u.Trigger = int(trigger)
	u.NumLevels = int(trigger) + 1
	if levels > 0 {
		u.NumLevels = int(levels)
	}
	if u.NumLevels < 2 {
		return u, fmt.Errorf("%w: num-levels = %d must be at least 2", schema.ErrInvalidOption, u.NumLevels)
	}
	return u, nil
}

// MaxLevel is the highest level.
func (u Universal) MaxLevel() int32 { return int32(u.NumLevels - 1) }

// Pick chooses what to compact among runs (SortedRuns' order), as
// UniversalCompaction.pick does: size amplification first (every run to
// the top level), then the size ratio from the newest run, then the run
// count; ok is false when nothing needs compacting. numLevels is at least
// u.NumLevels and more if restored files sit higher (Levels.java).
func (u Universal) Pick(runs []Run, numLevels int) (Unit, bool) {
	maxLevel := int32(max(numLevels, u.NumLevels) - 1)
	n := len(runs)
	if n >= u.Trigger {
		var younger int64
		for _, r := range runs[:n-1] {
			younger += r.Size
		}
		if younger*100 > u.MaxSizeAmp*runs[n-1].Size {
			return u.unit(runs, maxLevel, n), true
		}
		if unit, ok := u.sizeRatio(runs, maxLevel, 1, false); ok {
			return unit, true
		}
	}
	if n > u.Trigger {
		return u.sizeRatio(runs, maxLevel, n-u.Trigger+1, false)
	}
	return Unit{}, false
}

func (u Universal) sizeRatio(runs []Run, maxLevel int32, count int, force bool) (Unit, bool) {
	var cand int64
	for _, r := range runs[:count] {
		cand += r.Size
	}
	for i := count; i < len(runs); i++ {
		if float64(cand)*float64(100+u.SizeRatio)/100.0 < float64(runs[i].Size) {
			break
		}
		cand += runs[i].Size
		count++
	}
	if force || count > 1 {
		return u.unit(runs, maxLevel, count), true
	}
	return Unit{}, false
}

// unit is UniversalCompaction.createUnit: the output level is one below
// the next untouched run (never 0), or the top level when every run is in.
func (u Universal) unit(runs []Run, maxLevel int32, count int) Unit {
	var out int32
	if count == len(runs) {
		out = maxLevel
	} else {
		out = max(0, runs[count].Level-1)
	}
	if out == 0 {
		for i := count; i < len(runs); i++ {
			count++
			if runs[i].Level != 0 {
				out = runs[i].Level
				break
			}
		}
	}
	if count == len(runs) {
		out = maxLevel
	}
	var files []int
	for _, r := range runs[:count] {
		files = append(files, r.Files...)
	}
	return Unit{OutputLevel: out, Files: files}
}

// PickForceUpLevel0 is ForceUpLevel0Compaction (lookup, deletion-vector
// and first-row tables, or compaction.force-up-level-0): Pick, and failing
// that the leading level-0 runs with as many of the next runs as the size
// ratio takes, so that level 0 is always compacted up.
func (u Universal) PickForceUpLevel0(runs []Run, numLevels int) (Unit, bool) {
	if unit, ok := u.Pick(runs, numLevels); ok {
		return unit, true
	}
	c := 0
	for c < len(runs) && runs[c].Level == 0 {
		c++
	}
	if c == 0 {
		return Unit{}, false
	}
	return u.sizeRatio(runs, int32(max(numLevels, u.NumLevels)-1), c, true)
}
