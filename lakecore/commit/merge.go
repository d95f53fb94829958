package commit

import (
	"context"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// mergeManifests is ManifestFileMerger.merge of Paimon 1.4.2 (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/operation/ManifestFileMerger.java):
// it first tries a full compaction and otherwise a minor one, so that the
// base manifest list of every snapshot stays small however long the history.
// It returns the manifests of the new base list and the names of the
// manifests it wrote; on error those are deleted.
func (c *Committer) mergeManifests(ctx context.Context, input []manifest.FileMeta, schemaID int64) ([]manifest.FileMeta, []string, error) {
	var created []string
	out, ok, err := c.tryFullCompaction(ctx, input, schemaID, &created)
	if err == nil && !ok {
		out, err = c.tryMinorCompaction(ctx, input, schemaID, &created)
	}
	if err != nil {
		c.deleteManifests(context.WithoutCancel(ctx), created)
		return nil, nil, fmt.Errorf("merge manifests: %w", err)
	}
	return out, created, nil
}

// tryMinorCompaction merges runs of small manifests: candidates accumulate
// until their total size reaches the target size, then they are merged into
// new files; the last run is merged only when it holds at least
// manifest.merge-min-count files.
func (c *Committer) tryMinorCompaction(ctx context.Context, input []manifest.FileMeta, schemaID int64, created *[]string) ([]manifest.FileMeta, error) {
	var result, candidates []manifest.FileMeta
	var total int64
	for _, m := range input {
		total += m.FileSize
		candidates = append(candidates, m)
		if total >= c.o.ManifestTargetFileSize {
			merged, err := c.mergeCandidates(ctx, candidates, schemaID, created)
			if err != nil {
				return nil, err
			}
			result = append(result, merged...)
			candidates, total = nil, 0
		}
	}
	if len(candidates) >= c.o.ManifestMergeMinCount {
		merged, err := c.mergeCandidates(ctx, candidates, schemaID, created)
		if err != nil {
			return nil, err
		}
		return append(result, merged...), nil
	}
	return append(result, candidates...), nil
}

// mergeCandidates merges the entries of candidates by file identity
// (FileEntry.mergeEntries: an ADD and its DELETE cancel, a DELETE whose ADD
// is in an earlier manifest stays) and writes the rest as new manifests.
func (c *Committer) mergeCandidates(ctx context.Context, candidates []manifest.FileMeta, schemaID int64, created *[]string) ([]manifest.FileMeta, error) {
	if len(candidates) == 1 {
		return candidates, nil
	}
	var all []manifest.Entry
	for i := range candidates {
		e, err := c.readEntries(ctx, &candidates[i])
		if err != nil {
			return nil, err
		}
		all = append(all, e...)
	}
	merged, err := manifest.MergeEntries(all)
	if err != nil {
		return nil, err
	}
	if len(merged) == 0 {
		return nil, nil
	}
	metas, err := c.writeManifests(ctx, merged, schemaID)
	if err != nil {
		return nil, err
	}
	*created = append(*created, fileNames(metas)...)
	return metas, nil
}

// tryFullCompaction rewrites, when the manifests that must change (with
// DELETE entries, or smaller than the target size) reach
// manifest.full-compaction-threshold-size together, every manifest that
// holds a deleted file or must change, dropping the DELETE entries and the
// files they delete. Manifests whose partition stats exclude every
// partition with a deletion are kept as they are. ok is false when no full
// compaction was done.
func (c *Committer) tryFullCompaction(ctx context.Context, input []manifest.FileMeta, schemaID int64, created *[]string) (out []manifest.FileMeta, ok bool, err error) {
	target := c.o.ManifestTargetFileSize
	mustChange := func(m *manifest.FileMeta) bool { return m.NumDeletedFiles > 0 || m.FileSize < target }
	var deltaSize int64
	for i := range input {
		if mustChange(&input[i]) {
			deltaSize += input[i].FileSize
		}
	}
	if deltaSize < c.o.ManifestFullCompactionThreshold {
		return nil, false, nil
	}

	// FileEntry.readDeletedEntries: the identifiers of every DELETE entry.
	deleted := map[string]bool{}
	deletedParts := map[string][]byte{}
	for i := range input {
		if input[i].NumDeletedFiles == 0 {
			continue
		}
		entries, err := c.readEntries(ctx, &input[i])
		if err != nil {
			return nil, false, err
		}
		for j := range entries {
			if entries[j].Kind == manifest.FileKindDelete {
				deleted[entries[j].Identifier()] = true
				deletedParts[string(entries[j].Partition)] = entries[j].Partition
			}
		}
	}

	// Keep the manifests that need no change and cannot hold a deleted
	// partition (PartitionPredicate: ALWAYS_FALSE without deletions,
	// ALWAYS_TRUE for an unpartitioned table, else fromMultiple).
	var pred func(*manifest.FileMeta) bool
	switch {
	case len(deleted) == 0:
		pred = func(*manifest.FileMeta) bool { return false }
	case len(c.partTypes) == 0:
		pred = func(*manifest.FileMeta) bool { return true }
	default:
		p, err := newPartitionRange(c.partTypes, deletedParts)
		if err != nil {
			return nil, false, err
		}
		pred = p.mayContain
	}
	var toMerge []manifest.FileMeta
	for i := range input {
		if !mustChange(&input[i]) && !pred(&input[i]) {
			out = append(out, input[i])
			continue
		}
		toMerge = append(toMerge, input[i])
	}
	if len(toMerge) <= 1 {
		return nil, false, nil
	}

	var rewrite []manifest.Entry
	for i := range toMerge {
		entries, err := c.readEntries(ctx, &toMerge[i])
		if err != nil {
			return nil, false, err
		}
		change := mustChange(&toMerge[i])
		kept := make([]manifest.Entry, 0, len(entries))
		for j := range entries {
			if entries[j].Kind == manifest.FileKindDelete {
				continue
			}
			if deleted[entries[j].Identifier()] {
				change = true
				continue
			}
			kept = append(kept, entries[j])
		}
		if change {
			rewrite = append(rewrite, kept...)
		} else {
			out = append(out, toMerge[i])
		}
	}
	metas, err := c.writeManifests(ctx, rewrite, schemaID)
	if err != nil {
		return nil, false, err
	}
	*created = append(*created, fileNames(metas)...)
	return append(out, metas...), true, nil
}

// partitionRange is PartitionPredicate.fromMultiple tested against a
// manifest's partition stats: per partition field, the range [min, max] of
// the deleted partitions' values (with IS NULL when some are null) must
// overlap the manifest's range.
type partitionRange struct {
	types   []types.DataType
	lo, hi  []any
	nulls   []int // deleted partitions with a null value, per field
	nParts  int
	invalid bool // values Java cannot order: keep every manifest in the merge
}

func newPartitionRange(partTypes []types.DataType, parts map[string][]byte) (*partitionRange, error) {
	n := len(partTypes)
	r := &partitionRange{types: partTypes, lo: make([]any, n), hi: make([]any, n), nulls: make([]int, n), nParts: len(parts)}
	for _, p := range parts {
		vals, err := binrow.Deserialize(partTypes, p)
		if err != nil {
			return nil, fmt.Errorf("partition of a deleted file: %w", err)
		}
		for i, v := range vals {
			if v == nil {
				r.nulls[i]++
				continue
			}
			if !types.Comparable(v) {
				r.invalid = true
				continue
			}
			// One field's values share a Go type: Compare is ok once
			// lo and hi are set.
			if lo, _ := types.Compare(v, r.lo[i]); r.lo[i] == nil || lo < 0 {
				r.lo[i] = v
			}
			if hi, _ := types.Compare(v, r.hi[i]); r.hi[i] == nil || hi > 0 {
				r.hi[i] = v
			}
		}
	}
	return r, nil
}

// mayContain is MultiplePartitionPredicate.test(rowCount, min, max,
// nullCounts) with LeafPredicate's handling of unknown and all-null stats.
func (r *partitionRange) mayContain(m *manifest.FileMeta) bool {
	if r.invalid {
		return true
	}
	mins, maxs, nullCounts, err := m.PartitionStats.Decode(r.types)
	if err != nil || nullCounts == nil {
		return true // unreadable stats never exclude a manifest
	}
	rowCount := m.NumAddedFiles + m.NumDeletedFiles
	for i := range r.types {
		nc := nullCounts[i]
		// LeafPredicate.test: unknown stats (a null min or max while not
		// every value is null) match anything.
		if (nc == nil || *nc != rowCount) && (mins[i] == nil || maxs[i] == nil) {
			continue
		}
		isNull := nc == nil || *nc > 0
		if r.nulls[i] == r.nParts {
			if !isNull {
				return false
			}
			continue
		}
		var ge, le bool // max >= lowest deleted value, min <= highest deleted value
		if allNull := nc != nil && *nc == rowCount; !allNull {
			lo, ok1 := types.Compare(r.lo[i], maxs[i])
			hi, ok2 := types.Compare(r.hi[i], mins[i])
			if !ok1 || !ok2 {
				continue // stats of another type than the partitions' match anything
			}
			ge, le = lo <= 0, hi >= 0
		}
		if r.nulls[i] > 0 {
			ge, le = ge || isNull, le || isNull
		}
		if !ge || !le {
			return false
		}
	}
	return true
}
