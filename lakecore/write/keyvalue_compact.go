package write

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
)

// compact runs one universal compaction of bucket b if its sorted runs
// call for it (MergeTreeCompactManager.triggerCompaction, then
// MergeTreeCompactTask): the unit's sections with more than one run, and
// the small files of single-run sections, are merged and rewritten at the
// output level; large files of single-run sections are upgraded (the same
// file at the new level). Deletes are dropped only when the output level
// is the bucket's highest non-empty level, where nothing older lies below.
// The result is recorded in b.compactBefore and b.compactAfter and b.files
// is updated.
func (w *KeyValueWriter) compact(ctx context.Context, b *kvBucket) error {
	u := w.compaction
	numLevels := u.NumLevels
	highest := int32(0)
	for i := range b.files {
		numLevels = max(numLevels, int(b.files[i].Level)+1)
		highest = max(highest, b.files[i].Level)
	}
	runs := mergetree.SortedRuns(b.files)
	unit, ok := u.Pick(runs, numLevels)
	if !ok || len(unit.Files) == 0 || (len(unit.Files) == 1 && b.files[unit.Files[0]].Level == unit.OutputLevel) {
		return nil
	}
	maxLevel := int32(numLevels - 1)
	out := unit.OutputLevel
	dropDelete := out != 0 && out >= highest
	files := make([]mergetree.File, len(unit.Files))
	for i, fi := range unit.Files {
		f := &b.files[fi]
		lo, err := binrow.Deserialize(w.keyTypes, f.MinKey)
		if err == nil {
			files[i].MaxKey, err = binrow.Deserialize(w.keyTypes, f.MaxKey)
		}
		if err != nil {
			return fmt.Errorf("compact bucket %d of %s: data file %s: key range: %w", b.bucket, b.dir, f.FileName, err)
		}
		files[i].MinKey, files[i].Index = lo, fi
	}
	minFileSize := w.o.TargetFileSize / 10 * 7 // CoreOptions.compactionFileSize
	var before, after []manifest.DataFileMeta
	upgrade := func(f *manifest.DataFileMeta) error {
		if out == maxLevel && (f.DeleteRowCount == nil || *f.DeleteRowCount > 0) {
			return w.rewrite(ctx, b, [][]mergetree.SortedRun{{{mergetree.File{Index: slices.IndexFunc(b.files, func(x manifest.DataFileMeta) bool { return x.FileName == f.FileName })}}}}, out, dropDelete, &before, &after)
		}
		if f.Level != out {
			up := *f
			up.Level = out
			before, after = append(before, *f), append(after, up)
		}
		return nil
	}
	var candidate [][]mergetree.SortedRun
	flushCandidate := func() error {
		defer func() { candidate = nil }()
		switch {
		case len(candidate) == 0:
			return nil
		case len(candidate) == 1 && len(candidate[0]) == 1:
			for _, f := range candidate[0][0] {
				if err := upgrade(&b.files[f.Index]); err != nil {
					return err
				}
			}
			return nil
		}
		return w.rewrite(ctx, b, candidate, out, dropDelete, &before, &after)
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
			if err := flushCandidate(); err != nil {
				return err
			}
			if err := upgrade(&b.files[f.Index]); err != nil {
				return err
			}
		}
	}
	if err := flushCandidate(); err != nil {
		return err
	}
	// The bucket's files after the compaction.
	gone := map[string]bool{}
	for _, f := range before {
		gone[f.FileName] = true
	}
	kept := b.files[:0:0]
	for _, f := range b.files {
		if !gone[f.FileName] {
			kept = append(kept, f)
		}
	}
	b.files = append(kept, after...)
	b.compactBefore, b.compactAfter = before, after
	return nil
}

// rewrite merges the sections of candidate one after another and writes
// the records at level out as COMPACT files (MergeTreeCompactRewriter),
// keeping each record's sequence number and row kind; with dropDelete the
// retracts are dropped (DropDeleteReader).
func (w *KeyValueWriter) rewrite(ctx context.Context, b *kvBucket, candidate [][]mergetree.SortedRun, out int32, dropDelete bool, before, after *[]manifest.DataFileMeta) error {
	var f *kvFile
	abort := func(err error) error {
		if f != nil {
			_ = f.out.Abort()
		}
		return err
	}
	for _, section := range candidate {
		readers := make([]mergetree.RecordReader, 0, len(section))
		for _, run := range section {
			split := scan.Split{Partition: b.partition, Bucket: b.bucket, TotalBuckets: int32(w.numBuckets)}
			for _, x := range run {
				split.Files = append(split.Files, b.files[x.Index])
				*before = append(*before, b.files[x.Index])
			}
			if len(w.partFields) > 0 {
				vals, err := binrow.Deserialize(w.partTypes, b.partition)
				if err != nil {
					return abort(err)
				}
				split.PartitionValues = vals
			}
			r, err := w.reader.OpenRun(ctx, split)
			if err != nil {
				for _, rr := range readers {
					_ = rr.Close()
				}
				return abort(fmt.Errorf("compact bucket %d of %s: %w", b.bucket, b.dir, err))
			}
			readers = append(readers, r)
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
			if f == nil {
				if f, err = w.openFile(ctx, b, out, 1); err != nil {
					_ = m.Close()
					return err
				}
			}
			if err := f.write(w, rec); err != nil {
				_ = m.Close()
				return abort(err)
			}
			if f.rows%rollCheckRows == 0 && f.w.EstimatedSize() >= w.o.TargetFileSize {
				meta, err := w.closeFile(f)
				f = nil
				if err != nil {
					_ = m.Close()
					return err
				}
				*after = append(*after, meta)
			}
		}
		if err := m.Close(); err != nil {
			return abort(err)
		}
	}
	if f != nil {
		meta, err := w.closeFile(f)
		if err != nil {
			return err
		}
		*after = append(*after, meta)
	}
	return nil
}
