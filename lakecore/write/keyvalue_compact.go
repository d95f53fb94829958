package write

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
)

// compact runs one universal compaction of bucket b if its sorted runs
// call for it (MergeTreeCompactManager.triggerCompaction, then
// MergeTreeCompactTask): the unit's sections with more than one run, and
// the small files of single-run sections, are merged and rewritten at the
// output level; large files of single-run sections are upgraded (the same
// file at the new level). Deletes are dropped only when the output level
// is the bucket's highest non-empty level, where nothing older lies below.
// A table that needs lookup (changelog-producer lookup, first-row) always
// compacts level 0 up (ForceUpLevel0Compaction) and merges level-0 files
// through the lookup rewriter (rewriteChangelog). The result is recorded in
// b.compactBefore, b.compactAfter and b.compactChangelog and b.files is
// updated.
func (w *KeyValueWriter) compact(ctx context.Context, b *kvBucket) error {
	return w.compactBucket(ctx, b, false)
}

// CompactBucket compacts one bucket of the latest snapshot (restored as
// Write restores it) and returns the compaction as a message for
// commit.Committer.Compact, nil when there is nothing to do. Without full
// it is what Prepare does (universal compaction, if the sorted runs call
// for it); with full every run goes to the top level
// (CompactStrategy.pickFullCompaction; a bucket already in one run at the
// top level is left alone, or rewritten if its files hold deletes). On a
// lookup or first-row table level 0 is always compacted up and the
// message carries the compaction's changelog (CompactChangelog).
func (w *KeyValueWriter) CompactBucket(ctx context.Context, partition []byte, bucket int32, full bool) (*commit.Message, error) {
	b, err := w.compactionBucket(ctx, partition, bucket)
	if err != nil {
		return nil, err
	}
	if err := w.compactBucket(ctx, b, full); err != nil {
		return nil, w.fail(err)
	}
	if len(b.compactBefore) == 0 {
		return nil, nil
	}
	m := &commit.Message{Partition: b.partition, Bucket: b.bucket, TotalBuckets: int32(w.numBuckets),
		CompactBefore: b.compactBefore, CompactAfter: b.compactAfter, CompactChangelog: b.compactChangelog}
	if err := w.writeDVs(ctx, b, m); err != nil {
		return nil, w.fail(err)
	}
	b.compactBefore, b.compactAfter, b.compactChangelog = nil, nil, nil
	w.closed = nil
	return m, nil
}

// CompactionPlan is what CompactBucket would do to one bucket, planned
// from its files' metadata alone (PlanCompactBucket).
type CompactionPlan struct {
	// OutputLevel is the level every step's files go to.
	OutputLevel int32
	// Steps in the order the compaction runs them.
	Steps []CompactionStep
}

// CompactionStep is one step of a CompactionPlan.
type CompactionStep struct {
	// Files are the step's inputs, in the order they are read: exactly
	// the files the compaction's commit deletes (an upgraded file comes
	// back under the same name at OutputLevel).
	Files []manifest.DataFileMeta
	// Rewrite: the files' records are merged by key and written as new
	// files at OutputLevel. Otherwise the step is one file moved there
	// unchanged (an upgrade); on a lookup table it is read first for its
	// changelog.
	Rewrite bool
}

// PlanCompactBucket returns what CompactBucket(ctx, partition, bucket,
// full) would do now, nil when it would do nothing. It reads the bucket's
// file metadata and writes nothing; the writer stays usable.
func (w *KeyValueWriter) PlanCompactBucket(ctx context.Context, partition []byte, bucket int32, full bool) (*CompactionPlan, error) {
	b, err := w.compactionBucket(ctx, partition, bucket)
	if err != nil {
		return nil, err
	}
	p, err := w.planCompaction(b, full)
	if err != nil || p == nil {
		return nil, err
	}
	plan := &CompactionPlan{OutputLevel: p.out}
	for _, st := range p.steps {
		cs := CompactionStep{Rewrite: st.kind == stepMerge || (st.kind == stepLookupUpgrade && st.rewriteFile)}
		for _, fi := range st.files() {
			cs.Files = append(cs.Files, b.files[fi])
		}
		plan.Steps = append(plan.Steps, cs)
	}
	return plan, nil
}

// compactionBucket returns the bucket CompactBucket works on, setting up
// the universal compaction's options on first use.
func (w *KeyValueWriter) compactionBucket(ctx context.Context, partition []byte, bucket int32) (*kvBucket, error) {
	if w.compaction == nil {
		u, err := mergetree.UniversalFromOptions(w.schema.Options)
		if err != nil {
			return nil, err
		}
		w.compaction = &u
	}
	return w.bucketOf(ctx, partition, bucket)
}

// stepKind is what a compactStep does.
type stepKind int

const (
	// stepMerge merges the candidate's sections and rewrites them at the
	// output level (rewrite, or rewriteChangelog for a lookup table whose
	// candidate holds a level-0 file).
	stepMerge stepKind = iota
	// stepUpgrade moves one file to the output level unchanged.
	stepUpgrade
	// stepLookupUpgrade reads one level-0 file of a lookup table for its
	// changelog and moves it up, rewritten when rewriteFile.
	stepLookupUpgrade
)

// compactStep is one step of a bucket's compaction plan.
type compactStep struct {
	kind stepKind
	// candidate holds the sorted runs of a stepMerge, by section.
	candidate [][]mergetree.SortedRun
	// file is the index in the bucket's files of an upgraded file.
	file        int
	rewriteFile bool
}

// files returns the indexes of the step's input files, in read order.
func (s compactStep) files() []int {
	if s.kind != stepMerge {
		return []int{s.file}
	}
	var out []int
	for _, section := range s.candidate {
		for _, run := range section {
			for _, f := range run {
				out = append(out, f.Index)
			}
		}
	}
	return out
}

// bucketPlan is a bucket's compaction: its steps, their output level and
// whether deletes are dropped.
type bucketPlan struct {
	out        int32
	dropDelete bool
	steps      []compactStep
}

// planCompaction picks what to compact in bucket b and how
// (MergeTreeCompactManager.triggerCompaction, then MergeTreeCompactTask's
// partitioning into upgrades and rewrites), from the files' metadata
// alone; nil when nothing is to be done. compactBucket runs the plan and
// PlanCompactBucket reports it, so that a dry run lists exactly what the
// compaction does.
func (w *KeyValueWriter) planCompaction(b *kvBucket, full bool) (*bucketPlan, error) {
	u := w.compaction
	numLevels := u.NumLevels
	highest := int32(0)
	for i := range b.files {
		numLevels = max(numLevels, int(b.files[i].Level)+1)
		highest = max(highest, b.files[i].Level)
	}
	maxLevel := int32(numLevels - 1)
	runs := mergetree.SortedRuns(b.files)
	var unit mergetree.Unit
	ok := false
	if full {
		if len(runs) > 1 || (len(runs) == 1 && runs[0].Level != maxLevel) {
			unit, ok = mergetree.Unit{OutputLevel: maxLevel}, true
		} else if len(runs) == 1 {
			for _, i := range runs[0].Files {
				if hasDeletes(&b.files[i]) {
					unit, ok = mergetree.Unit{OutputLevel: maxLevel}, true
				}
			}
		}
		if ok {
			for _, r := range runs {
				unit.Files = append(unit.Files, r.Files...)
			}
		}
	} else if w.forceUpLevel0 {
		unit, ok = u.PickForceUpLevel0(runs, numLevels)
	} else {
		unit, ok = u.Pick(runs, numLevels)
	}
	if !ok || len(unit.Files) == 0 || (!full && len(unit.Files) == 1 && b.files[unit.Files[0]].Level == unit.OutputLevel) {
		return nil, nil
	}
	out := unit.OutputLevel
	// MergeTreeCompactManager.triggerCompaction: with deletion vectors
	// deletes are always dropped above level 0 (the rows they delete are
	// marked in the vectors instead).
	p := &bucketPlan{out: out, dropDelete: out != 0 && (out >= highest || w.dv)}
	files := make([]mergetree.File, len(unit.Files))
	for i, fi := range unit.Files {
		f := &b.files[fi]
		lo, err := binrow.Deserialize(w.keyTypes, f.MinKey)
		if err == nil {
			files[i].MaxKey, err = binrow.Deserialize(w.keyTypes, f.MaxKey)
		}
		if err != nil {
			return nil, fmt.Errorf("compact bucket %d of %s: data file %s: key range: %w", b.bucket, b.dir, f.FileName, err)
		}
		files[i].MinKey, files[i].Index = lo, fi
	}
	minFileSize := w.o.TargetFileSize / 10 * 7 // CoreOptions.compactionFileSize
	merge := func(candidate [][]mergetree.SortedRun) {
		p.steps = append(p.steps, compactStep{kind: stepMerge, candidate: candidate})
	}
	upgrade := func(fi int) {
		f := &b.files[fi]
		if out == maxLevel && hasDeletes(f) {
			merge([][]mergetree.SortedRun{{{mergetree.File{Index: fi}}}})
			return
		}
		if f.Level == out {
			return
		}
		if w.needLookup && f.Level == 0 {
			// LookupMergeTreeCompactRewriter.upgradeStrategy: a level-0
			// file is read for its changelog, and rewritten unless it goes
			// to the top level or the engine keeps the latest record
			// anyway (deduplicate without sequence.field; not first-row,
			// which drops keys found above); deletes are kept
			// (forceDropDelete is for deletion vectors only).
			// With deletion vectors a file holding deletes is rewritten
			// without them (forceDropDelete).
			rewriteFile := out != maxLevel && !(w.engine.Name == mergetree.EngineDeduplicate && len(w.engine.Order.Sequence.Fields) == 0)
			if w.dv && hasDeletes(f) {
				rewriteFile = true
			}
			p.steps = append(p.steps, compactStep{kind: stepLookupUpgrade, file: fi, rewriteFile: rewriteFile})
			return
		}
		p.steps = append(p.steps, compactStep{kind: stepUpgrade, file: fi})
	}
	var candidate [][]mergetree.SortedRun
	flushCandidate := func() {
		switch {
		case len(candidate) == 0:
		case len(candidate) == 1 && len(candidate[0]) == 1:
			for _, f := range candidate[0][0] {
				upgrade(f.Index)
			}
		default:
			merge(candidate)
		}
		candidate = nil
	}
	for _, section := range mergetree.IntervalPartition(files) {
		if len(section) > 1 {
			candidate = append(candidate, section)
			continue
		}
		for _, f := range section[0] {
			if b.files[f.Index].FileSize < minFileSize {
				candidate = append(candidate, []mergetree.SortedRun{{f}})
				continue
			}
			flushCandidate()
			upgrade(f.Index)
		}
	}
	flushCandidate()
	return p, nil
}

// hasDeletes reports whether f may hold retracts (unknown counts as yes).
func hasDeletes(f *manifest.DataFileMeta) bool {
	return f.DeleteRowCount == nil || *f.DeleteRowCount > 0
}

// compactBucket runs the compaction planCompaction plans for b.
func (w *KeyValueWriter) compactBucket(ctx context.Context, b *kvBucket, full bool) error {
	p, err := w.planCompaction(b, full)
	if err != nil || p == nil {
		return err
	}
	out := p.out
	var before, after, changelog []manifest.DataFileMeta
	for _, st := range p.steps {
		var err error
		switch st.kind {
		case stepMerge:
			// MergeTreeCompactRewriter.rewrite, or for a lookup table whose
			// candidate holds a level-0 file ChangelogMergeTreeRewriter's
			// rewriteOrProduceChangelog (rewriteLookupChangelog).
			if w.needLookup && out != 0 && hasLevel0(b.files, st.candidate) {
				err = w.rewriteChangelog(ctx, b, st.candidate, out, p.dropDelete, true, &before, &after, &changelog)
			} else {
				err = w.rewrite(ctx, b, st.candidate, out, p.dropDelete, &before, &after)
			}
		case stepLookupUpgrade:
			single := [][]mergetree.SortedRun{{{mergetree.File{Index: st.file}}}}
			err = w.rewriteChangelog(ctx, b, single, out, w.dv, st.rewriteFile, &before, &after, &changelog)
		case stepUpgrade:
			up := b.files[st.file]
			up.Level = out
			before, after = append(before, b.files[st.file]), append(after, up)
		}
		if err != nil {
			return err
		}
	}
	// The bucket's files after the compaction.
	gone := map[string]bool{}
	for _, f := range before {
		gone[f.FileName] = true
	}
	if b.dvs != nil {
		// notifyRewriteCompactBefore: a rewritten file takes its vector
		// along; an upgraded one (same name in after) keeps it.
		stays := map[string]bool{}
		for _, f := range after {
			stays[f.FileName] = true
		}
		for name := range gone {
			if !stays[name] {
				b.dvs.remove(name)
			}
		}
	}
	kept := b.files[:0:0]
	for _, f := range b.files {
		if !gone[f.FileName] {
			kept = append(kept, f)
		}
	}
	b.files = append(kept, after...)
	b.compactBefore, b.compactAfter, b.compactChangelog = before, after, changelog
	w.forgetDropped(b)
	return nil
}

// hasLevel0 reports whether a candidate holds a level-0 file.
func hasLevel0(files []manifest.DataFileMeta, candidate [][]mergetree.SortedRun) bool {
	for _, section := range candidate {
		for _, run := range section {
			for _, f := range run {
				if files[f.Index].Level == 0 {
					return true
				}
			}
		}
	}
	return false
}

// rewrite merges the sections of candidate one after another and writes
// the records at level out as COMPACT files (MergeTreeCompactRewriter),
// keeping each record's sequence number and row kind; with dropDelete the
// retracts are dropped (DropDeleteReader).
func (w *KeyValueWriter) rewrite(ctx context.Context, b *kvBucket, candidate [][]mergetree.SortedRun, out int32, dropDelete bool, before, after *[]manifest.DataFileMeta) error {
	files := w.rolling(b, w.o.FilePrefix, out, 1, after)
	abort := func(err error) error {
		files.abort()
		return err
	}
	for _, section := range candidate {
		readers, err := w.openSection(ctx, b, section, before)
		if err != nil {
			return abort(err)
		}
		fn, err := w.engine.NewMergeFunction()
		if err != nil {
			return abort(err)
		}
		m := mergetree.NewSortMergeReader(&w.engine.Order, fn, readers)
		for {
			rec, err := m.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = m.Close()
				return abort(fmt.Errorf("compact bucket %d of %s: %w", b.bucket, b.dir, err))
			}
			if dropDelete && rec.Kind.IsRetract() {
				continue
			}
			if err := files.add(ctx, rec); err != nil {
				_ = m.Close()
				return abort(err)
			}
		}
		if err := m.Close(); err != nil {
			return abort(err)
		}
	}
	return files.close()
}

// openSection opens one reader per sorted run of a section and appends the
// section's files to before.
func (w *KeyValueWriter) openSection(ctx context.Context, b *kvBucket, section []mergetree.SortedRun, before *[]manifest.DataFileMeta) ([]mergetree.RecordReader, error) {
	readers := make([]mergetree.RecordReader, 0, len(section))
	for _, run := range section {
		split, err := w.bucketSplit(b)
		if err != nil {
			return nil, err
		}
		for _, x := range run {
			split.Files = append(split.Files, b.files[x.Index])
			*before = append(*before, b.files[x.Index])
		}
		if b.dvs != nil {
			if split.DeletionVectors, err = b.dvs.vectors(split.Files); err != nil {
				for _, rr := range readers {
					_ = rr.Close()
				}
				return nil, fmt.Errorf("compact bucket %d of %s: %w", b.bucket, b.dir, err)
			}
		}
		r, err := w.reader.OpenRun(ctx, split)
		if err != nil {
			for _, rr := range readers {
				_ = rr.Close()
			}
			return nil, fmt.Errorf("compact bucket %d of %s: %w", b.bucket, b.dir, err)
		}
		readers = append(readers, r)
	}
	return readers, nil
}

// bucketSplit returns an empty split of b, making the run reader on first
// use.
func (w *KeyValueWriter) bucketSplit(b *kvBucket) (scan.Split, error) {
	if w.reader == nil {
		r, err := read.NewTableRead(w.fio, w.tablePath, w.schema, nil)
		if err != nil {
			return scan.Split{}, err
		}
		w.reader = r
	}
	split := scan.Split{Partition: b.partition, Bucket: b.bucket, TotalBuckets: int32(w.numBuckets)}
	if len(w.partFields) > 0 {
		vals, err := binrow.Deserialize(w.partTypes, b.partition)
		if err != nil {
			return scan.Split{}, fmt.Errorf("compact bucket %d of %s: partition: %w", b.bucket, b.dir, err)
		}
		split.PartitionValues = vals
	}
	return split, nil
}
