package commit

import (
	"context"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// checkConflicts is ConflictDetection.checkConflicts for append tables
// (apache/paimon: paimon-core/src/main/java/org/apache/paimon/operation/commit/ConflictDetection.java):
// against the live files of the changed partitions in the latest snapshot
// it checks that the total bucket count of a partition does not change
// (except for OVERWRITE), that the delta does not add and delete the same
// file, and that every file the delta deletes is still live. Java skips the
// check when the table has no snapshot yet; here deleting from an empty
// table conflicts too. Errors wrap ErrConflict.
func (c *Committer) checkConflicts(ctx context.Context, latest *snapshot.Snapshot, delta []manifest.Entry, kind snapshot.CommitKind) error {
	changed := make(map[string]bool)
	for i := range delta {
		changed[string(delta[i].Partition)] = true
	}
	var base []manifest.Entry
	if latest != nil {
		var err error
		base, err = c.liveEntries(ctx, latest, func(p []byte) bool { return changed[string(p)] })
		if err != nil {
			return fmt.Errorf("read live files for conflict detection: %w", err)
		}
	}
	latestID := int64(0)
	if latest != nil {
		latestID = latest.ID
	}
	conflict := func(format string, args ...any) error {
		return fmt.Errorf("%w: latest snapshot %d: %s; give up committing", ErrConflict, latestID, fmt.Sprintf(format, args...))
	}
	all := make([]manifest.Entry, 0, len(base)+len(delta))
	all = append(all, base...)
	all = append(all, delta...)

	if kind != snapshot.CommitOverwrite { // checkBucketKeepSame
		buckets := map[string]int32{}
		for i := range all {
			e := &all[i]
			if e.TotalBuckets <= 0 {
				continue
			}
			old, ok := buckets[string(e.Partition)]
			if !ok {
				buckets[string(e.Partition)] = e.TotalBuckets
				continue
			}
			if old != e.TotalBuckets {
				return conflict("total buckets of partition %x changed from %d to %d without overwrite", e.Partition, old, e.TotalBuckets)
			}
		}
	}
	if _, err := manifest.MergeEntries(delta); err != nil {
		return conflict("the commit adds and deletes the same file: %v", err)
	}
	merged, err := manifest.MergeEntries(all)
	if err != nil {
		// Wrapped, so that a recovery commit can tell a file that is
		// already in the table (manifest.ErrDuplicateFile).
		return fmt.Errorf("%w: latest snapshot %d: %w; give up committing", ErrConflict, latestID, err)
	}
	for i := range merged {
		if merged[i].Kind == manifest.FileKindDelete {
			return conflict("trying to delete file %s (bucket %d) which is not previously added", merged[i].File.FileName, merged[i].Bucket)
		}
	}
	return nil
}
