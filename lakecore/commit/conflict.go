package commit

import (
	"context"
	"fmt"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"

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
// table conflicts too. Every data file a new deletion vector of the commit
// belongs to (dvFiles) must be live after it, as Java checks for
// unaware-bucket tables (buildDeltaEntriesWithDV: "Trying to create
// deletion vector on file which is not previously added"): a vector of a
// file another writer compacted away would leave the row it deletes live
// in the file's successor. Errors wrap ErrConflict.
func (c *Committer) checkConflicts(ctx context.Context, latest *snapshot.Snapshot, delta []manifest.Entry, kind snapshot.CommitKind,
	dvFiles map[dvBucket][]string) error {
	changed := make(map[string]bool)
	for i := range delta {
		changed[string(delta[i].Partition)] = true
	}
	for b := range dvFiles {
		changed[b.partition] = true
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
	if len(dvFiles) > 0 {
		live := make(map[dvBucket]map[string]bool)
		for i := range merged {
			b := dvBucket{string(merged[i].Partition), merged[i].Bucket}
			if live[b] == nil {
				live[b] = map[string]bool{}
			}
			live[b][merged[i].File.FileName] = true
		}
		for b, files := range dvFiles {
			for _, f := range files {
				if !live[b][f] {
					return conflict("trying to create a deletion vector of file %s (bucket %d) which is not live", f, b.bucket)
				}
			}
		}
	}
	if c.o.PrimaryKey {
		if kind != snapshot.CommitCompact {
			if err := checkSequences(base, delta); err != nil {
				return fmt.Errorf("%w: latest snapshot %d: %w; give up committing", ErrSequenceConflict, latestID, err)
			}
		}
		if err := c.checkKeyRanges(merged); err != nil {
			return conflict("%v", err)
		}
	}
	return nil
}

// checkSequences refuses new files of a primary-key bucket whose sequence
// numbers do not all exceed those of the bucket's live files: another
// writer committed to the bucket after this one restored it. Compaction
// outputs keep old numbers; COMPACT commits are not checked.
func checkSequences(base, delta []manifest.Entry) error {
	type bucket struct {
		partition string
		bucket    int32
	}
	minNew := map[bucket]*manifest.Entry{}
	for i := range delta {
		e := &delta[i]
		if e.Kind != manifest.FileKindAdd || e.File.Level != 0 {
			continue
		}
		k := bucket{string(e.Partition), e.Bucket}
		if cur, ok := minNew[k]; !ok || e.File.MinSequenceNumber < cur.File.MinSequenceNumber {
			minNew[k] = e
		}
	}
	if len(minNew) == 0 {
		return nil
	}
	for i := range base {
		e := &base[i]
		n, ok := minNew[bucket{string(e.Partition), e.Bucket}]
		if ok && e.File.MaxSequenceNumber >= n.File.MinSequenceNumber {
			return fmt.Errorf("bucket %d: live file %s holds sequence numbers up to %d, the new file %s starts at %d",
				e.Bucket, e.File.FileName, e.File.MaxSequenceNumber, n.File.FileName, n.File.MinSequenceNumber)
		}
	}
	return nil
}

// checkKeyRanges is ConflictDetection.checkKeyRange: in every level above
// 0 of a bucket the files sorted by min key must not overlap ("LSM
// conflicts detected").
func (c *Committer) checkKeyRanges(merged []manifest.Entry) error {
	type level struct {
		partition string
		bucket    int32
		level     int32
	}
	byLevel := map[level][]*manifest.DataFileMeta{}
	for i := range merged {
		e := &merged[i]
		if e.Kind == manifest.FileKindAdd && e.File.Level > 0 {
			k := level{string(e.Partition), e.Bucket, e.File.Level}
			byLevel[k] = append(byLevel[k], &e.File)
		}
	}
	for k, files := range byLevel {
		if len(files) < 2 {
			continue
		}
		ranges, err := c.keyRanges(files)
		if err != nil {
			return err
		}
		slices.SortFunc(ranges, func(a, b [2][]any) int { return kv.CompareKeys(a[0], b[0]) })
		for i := 1; i < len(ranges); i++ {
			if kv.CompareKeys(ranges[i-1][1], ranges[i][0]) >= 0 {
				return fmt.Errorf("LSM conflicts detected: files of bucket %d, level %d overlap", k.bucket, k.level)
			}
		}
	}
	return nil
}
