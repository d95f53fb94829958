// Package maintain keeps Paimon append tables healthy, with Java Paimon's
// rules so that a table maintained by lakecore and read by Java (or the
// other way round) stays correct:
//
//   - ExpireSnapshots deletes old snapshots and the files only they used
//     (apache/paimon: paimon-core/.../table/ExpireSnapshotsImpl.java,
//     operation/SnapshotDeletion.java, operation/FileDeletionBase.java);
//   - ExpirePartitions drops partitions whose time, read from their values,
//     is older than partition.expiration-time, as one OVERWRITE snapshot
//     (operation/PartitionExpire.java,
//     partition/PartitionValuesTimeExpireStrategy.java,
//     partition/PartitionTimeExtractor.java);
//   - Compact rewrites small data files into larger ones and commits them as
//     a COMPACT snapshot (append/AppendCompactCoordinator.java for
//     unaware-bucket tables, append/BucketedAppendCompactManager.java for
//     fixed-bucket tables);
//   - RemoveOrphanFiles deletes files no snapshot, tag or changelog refers to
//     (operation/OrphanFilesClean.java, LocalOrphanFilesClean.java).
//
// Every operation returns a Report (files and bytes removed or rewritten,
// snapshots expired, partitions dropped or skipped) whose Summary is a one-
// line result for command output, and accepts a Progress callback for long
// work. Options structs carry the overrides of Paimon's procedures
// (retain_max, retain_min, older_than, max_deletes, dry_run); zero fields
// take the table's options.
//
// The operations are safe to run while other processes append to the
// table: they follow the commit protocol and never delete a file a retained
// snapshot, a tag or a consumer's snapshot still uses. Two maintenance runs
// of the same kind on one table at the same time are not coordinated, as in
// Java; run one at a time.
package maintain

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Operation names a maintenance operation as Paimon's actions name it.
type Operation string

// The operations.
const (
	OpExpireSnapshots   Operation = "expire-snapshots"
	OpExpirePartitions  Operation = "expire-partitions"
	OpCompact           Operation = "compact"
	OpRemoveOrphanFiles Operation = "remove-orphan-files"
	OpDeleteTag         Operation = "delete-tag"
)

// Counts is a number of files and their total size in bytes.
type Counts struct {
	Files, Bytes int64
}

func (c *Counts) add(size int64) {
	c.Files++
	if size > 0 {
		c.Bytes += size
	}
}

func (c Counts) String() string {
	return fmt.Sprintf("%d %s (%s)", c.Files, plural(c.Files, "file", "files"), FormatBytes(c.Bytes))
}

// SkippedPartition is a partition that partition expiration left alone,
// with the reason (its values are NULL or do not parse as a time).
type SkippedPartition struct {
	// Partition is "k1=v1/k2=v2" with unescaped values.
	Partition string
	Reason    string
}

// DroppedPartition is one partition that partition expiration drops (or
// in a dry run would drop), with its live data files and their rows.
type DroppedPartition struct {
	// Partition is "k1=v1/k2=v2" with unescaped values.
	Partition string
	Files     Counts
	Rows      int64
}

// PlannedTask is one compaction task of a dry run: the files of one
// partition and bucket that would be rewritten together.
type PlannedTask struct {
	// Partition is "k1=v1/k2=v2" with unescaped values, "" when the table
	// is not partitioned.
	Partition string
	Bucket    int32
	// Files are the input file names, in the order they would be read.
	Files []string
	In    Counts
	Rows  int64
	// ExpectedOut is the number of files the rewrite would write: the
	// inputs' bytes over target-file-size, rounded up (the new files are
	// rolled at that size; compression may make them fewer, and merging
	// a primary-key table's records by key too), plus the files a
	// primary-key compaction moves up unchanged.
	ExpectedOut int
	// OutputLevel is the LSM level a primary-key table's compaction
	// writes to (0 for an append table).
	OutputLevel int32
	// Inputs detail Files for a primary-key table, in the same order; nil
	// for an append table, whose files are all rewritten at level 0.
	Inputs []PlannedFile
}

// PlannedFile is one input of a primary-key table's planned compaction.
type PlannedFile struct {
	Name  string
	Level int32
	Bytes int64
	Rows  int64
	// Rewrite: the file's records are merged with the other rewritten
	// files' and written anew at the output level; otherwise the file is
	// moved there unchanged (an upgrade, which commits it again under the
	// same name).
	Rewrite bool
}

// PartitionFiles describes the live data files of one partition before and
// after a compaction.
type PartitionFiles struct {
	// Partition is "k1=v1/k2=v2" with unescaped values, "" when the table is
	// not partitioned.
	Partition     string
	Before, After Counts
}

// Event is one progress notification of a long operation: Done of Total
// units of Phase are finished (Total 0 when unknown).
type Event struct {
	Operation   Operation
	Phase       string
	Done, Total int
}

// Progress receives Events. It is called from the goroutine that called the
// operation or from its workers, one call at a time.
type Progress func(Event)

// Report is the outcome of one maintenance operation. Fields that do not
// apply to the operation stay zero.
type Report struct {
	Operation Operation
	// Table is the table path relative to the warehouse ("db.db/t").
	Table string
	// DryRun reports what would have been done; nothing was changed.
	DryRun   bool
	Duration time.Duration

	// SnapshotsExpired is the number of snapshot files deleted, the
	// snapshots [ExpiredFrom, ExpiredUntil).
	SnapshotsExpired          int
	ExpiredFrom, ExpiredUntil int64
	// ChangelogsExpired is the number of long-lived changelogs
	// (changelog/changelog-<id>) deleted, for a table whose changelog
	// outlives its snapshots.
	ChangelogsExpired int

	// RemovedData counts data files (with their extra files and changelog
	// files) physically deleted; RemovedMeta counts manifests, manifest
	// lists, index manifests, index and statistics files, snapshot files and
	// stray files of the snapshot directory.
	RemovedData, RemovedMeta Counts
	// Removed lists the deleted files, relative to the warehouse root, in
	// sorted order.
	Removed []string
	// FailedDeletes counts files that could not be deleted (left as
	// orphans); FirstFailure describes the first.
	FailedDeletes int
	FirstFailure  string

	// PartitionsDropped are the expired partitions ("k=v/k2=v2"), in the
	// order Java picks them; DroppedFiles counts their files, deleted
	// logically by the OVERWRITE snapshot and physically once that
	// snapshot's predecessors expire.
	PartitionsDropped []string
	DroppedFiles      Counts
	// DroppedPartitions details PartitionsDropped, in the same order.
	DroppedPartitions []DroppedPartition
	// Skipped are partitions that could not be judged.
	Skipped []SkippedPartition

	// Rewritten counts the compaction inputs, Written the files written in
	// their place (in a dry run an estimate: the expected files, as large
	// as their inputs); Tasks is the number of compaction units (bins or
	// windows) committed, Conflicts the attempts lost to a concurrent
	// change of the same files, Partitions the per-partition file counts
	// (compaction only) before and after.
	Rewritten, Written Counts
	Tasks              int
	Conflicts          int
	Partitions         []PartitionFiles
	// Planned are the tasks a compaction dry run would run.
	Planned []PlannedTask

	// Snapshots are the ids of the snapshots committed (OVERWRITE for
	// partition expiration, COMPACT for compaction).
	Snapshots []int64

	mu sync.Mutex
}

func newReport(op Operation, table string, dryRun bool) *Report {
	return &Report{Operation: op, Table: table, DryRun: dryRun}
}

func (r *Report) removed(p string, size int64, data bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if data {
		r.RemovedData.add(size)
	} else {
		r.RemovedMeta.add(size)
	}
	r.Removed = append(r.Removed, p)
}

func (r *Report) failed(p string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.FailedDeletes++
	if r.FirstFailure == "" {
		r.FirstFailure = fmt.Sprintf("%s: %v", p, err)
	}
}

func (r *Report) finish(start time.Time) {
	sort.Strings(r.Removed)
	r.Duration = time.Since(start)
}

// incomplete returns an error wrapping ErrIncomplete when deletes failed.
func (r *Report) incomplete() error {
	if r.FailedDeletes == 0 {
		return nil
	}
	return fmt.Errorf("%s %s: %w: %d left as orphans, first: %s", r.Operation, r.Table, ErrIncomplete, r.FailedDeletes, r.FirstFailure)
}

// Summary is a one-line result for command output, such as
// "expire-snapshots db.db/t: expired 12 snapshots [1, 13), removed 40 data
// files (12.3 MiB) and 57 metadata files (1.1 MiB) in 1.2s".
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", r.Operation, r.Table)
	verb := "removed"
	if r.DryRun {
		b.WriteString("dry run, ")
		verb = "would remove"
	}
	switch r.Operation {
	case OpExpireSnapshots:
		if r.SnapshotsExpired == 0 && r.ChangelogsExpired == 0 {
			b.WriteString("nothing to expire")
		} else if r.SnapshotsExpired == 0 {
			fmt.Fprintf(&b, "no snapshot to expire, %s %s and %s", verb, r.RemovedData.described("data"), r.RemovedMeta.described("metadata"))
		} else {
			e := "expired"
			if r.DryRun {
				e = "would expire"
			}
			fmt.Fprintf(&b, "%s %d %s [%d, %d), %s %s and %s", e, r.SnapshotsExpired, plural(int64(r.SnapshotsExpired), "snapshot", "snapshots"),
				r.ExpiredFrom, r.ExpiredUntil, verb, r.RemovedData.described("data"), r.RemovedMeta.described("metadata"))
		}
		if r.ChangelogsExpired > 0 {
			fmt.Fprintf(&b, ", %d long-lived %s", r.ChangelogsExpired, plural(int64(r.ChangelogsExpired), "changelog", "changelogs"))
		}
	case OpExpirePartitions:
		d := "dropped"
		if r.DryRun {
			d = "would drop"
		}
		fmt.Fprintf(&b, "%s %d %s (%s)", d, len(r.PartitionsDropped), plural(int64(len(r.PartitionsDropped)), "partition", "partitions"), r.DroppedFiles)
		if len(r.Snapshots) > 0 {
			fmt.Fprintf(&b, " in %s %s", plural(int64(len(r.Snapshots)), "snapshot", "snapshots"), joinIDs(r.Snapshots))
		}
		if len(r.Skipped) > 0 {
			fmt.Fprintf(&b, ", skipped %d", len(r.Skipped))
		}
	case OpCompact:
		w := "rewrote"
		if r.DryRun {
			w = "would rewrite"
		}
		fmt.Fprintf(&b, "%s %s into %s in %d %s", w, r.Rewritten, r.Written, r.Tasks, plural(int64(r.Tasks), "task", "tasks"))
		if len(r.Snapshots) > 0 {
			fmt.Fprintf(&b, ", %s %s", plural(int64(len(r.Snapshots)), "snapshot", "snapshots"), joinIDs(r.Snapshots))
		}
		if r.Conflicts > 0 {
			fmt.Fprintf(&b, ", %d %s", r.Conflicts, plural(int64(r.Conflicts), "conflict", "conflicts"))
		}
	case OpDeleteTag:
		fmt.Fprintf(&b, "%s %s and %s", verb, r.RemovedData.described("data"), r.RemovedMeta.described("metadata"))
	case OpRemoveOrphanFiles:
		total := Counts{Files: r.RemovedData.Files + r.RemovedMeta.Files, Bytes: r.RemovedData.Bytes + r.RemovedMeta.Bytes}
		fmt.Fprintf(&b, "%s %s", verb, total)
	}
	if r.FailedDeletes > 0 {
		fmt.Fprintf(&b, ", %d %s failed", r.FailedDeletes, plural(int64(r.FailedDeletes), "delete", "deletes"))
	}
	fmt.Fprintf(&b, " in %s", r.Duration.Round(time.Millisecond))
	return b.String()
}

// String is Summary followed by the details: skipped partitions with their
// reasons, the per-partition file counts of a compaction, and in a dry run
// the files that would be removed, one per line.
func (r *Report) String() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	for _, p := range r.DroppedPartitions {
		d := "drop"
		if r.DryRun {
			d = "would drop"
		}
		fmt.Fprintf(&b, "\n  %s %s: %s, %d %s", d, p.Partition, p.Files, p.Rows, plural(p.Rows, "row", "rows"))
	}
	for i, tk := range r.Planned {
		name := tk.Partition
		if name == "" {
			name = "(table)"
		}
		level := ""
		if tk.Inputs != nil {
			level = fmt.Sprintf(" at level %d", tk.OutputLevel)
		}
		fmt.Fprintf(&b, "\n  task %d: %s bucket %d: %s, %d %s -> %d %s%s: %s", i+1, name, tk.Bucket, tk.In, tk.Rows, plural(tk.Rows, "row", "rows"),
			tk.ExpectedOut, plural(int64(tk.ExpectedOut), "file", "files"), level, strings.Join(tk.Files, " "))
		for _, f := range tk.Inputs {
			what := "moved up unchanged"
			if f.Rewrite {
				what = "merged and rewritten"
			}
			fmt.Fprintf(&b, "\n    %s: level %d, %s, %d %s, %s", f.Name, f.Level, FormatBytes(f.Bytes), f.Rows, plural(f.Rows, "row", "rows"), what)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "\n  skipped %s: %s", s.Partition, s.Reason)
	}
	for _, p := range r.Partitions {
		name := p.Partition
		if name == "" {
			name = "(table)"
		}
		fmt.Fprintf(&b, "\n  %s: %s -> %s", name, p.Before, p.After)
	}
	if r.DryRun {
		for _, f := range r.Removed {
			fmt.Fprintf(&b, "\n  %s", f)
		}
	}
	if r.FirstFailure != "" {
		fmt.Fprintf(&b, "\n  first failed delete: %s", r.FirstFailure)
	}
	return b.String()
}

func (c Counts) described(what string) string {
	return fmt.Sprintf("%d %s %s (%s)", c.Files, what, plural(c.Files, "file", "files"), FormatBytes(c.Bytes))
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

// FormatBytes renders n in binary units as the reports do: "512 B",
// "1.5 KiB", "12.3 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
