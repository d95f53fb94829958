package lakecore

import (
	"context"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
)

// ExpireSnapshots expires old snapshots of the table and deletes the files
// only they used, with Java's rules (maintain.ExpireSnapshots): zero fields
// of o take the table's snapshot.num-retained.min/max,
// snapshot.time-retained and snapshot.expire.limit. Consumers' positions
// and tags are respected. The Report's Summary is a one-line result.
// Primary-key tables are expired too, their changelog and index files
// included; when the changelog outlives the snapshots
// (changelog.num-retained.* or changelog.time-retained above the snapshot
// retention) expired snapshots are kept as changelog/changelog-<id> and
// expired by the changelog retention, as Java's writers do.
func (t *Table) ExpireSnapshots(ctx context.Context, o maintain.ExpireSnapshotsOptions) (*maintain.Report, error) {
	return maintain.ExpireSnapshots(ctx, t.fio, t.path, o)
}

// ExpirePartitions drops the partitions whose time, read from their values,
// is older than partition.expiration-time, as one OVERWRITE snapshot
// (maintain.ExpirePartitions). Partitions whose values are NULL or do not
// parse are left alone and listed in Report.Skipped. On a primary-key
// table the snapshot drops every level's files and the partitions' index
// entries, as Java's dropPartitions does.
func (t *Table) ExpirePartitions(ctx context.Context, o maintain.ExpirePartitionsOptions) (*maintain.Report, error) {
	return maintain.ExpirePartitions(ctx, t.fio, t.path, o)
}

// Compact rewrites small data files into larger ones and commits them as a
// COMPACT snapshot (maintain.Compact). Concurrent appends are never lost;
// a conflict with another compaction or overwrite is retried from a fresh
// plan. A primary-key table's buckets get universal compaction, or with
// o.Full a full compaction into the top level (compactKeyValue); of o's
// fields only Filter, Full, MaxAttempts, DryRun, LookupCache and the
// committer's apply.
func (t *Table) Compact(ctx context.Context, o maintain.CompactOptions) (*maintain.Report, error) {
	if t.HasPrimaryKey() {
		return t.compactKeyValue(ctx, o)
	}
	return maintain.Compact(ctx, t.fio, t.path, o)
}

// RemoveOrphanFiles deletes files no snapshot, tag or changelog refers to
// that are older than o.OlderThan (default one day), or lists them with
// o.DryRun (maintain.RemoveOrphanFiles). A primary-key table's changelog
// files and index files count as referenced through the changelog
// manifests and index manifests of its snapshots.
func (t *Table) RemoveOrphanFiles(ctx context.Context, o maintain.RemoveOrphanFilesOptions) (*maintain.Report, error) {
	return maintain.RemoveOrphanFiles(ctx, t.fio, t.path, o)
}

// HasPrimaryKey reports whether the table has primary keys: its rows are
// merged by key when read.
func (t *Table) HasPrimaryKey() bool { return len(t.Schema().PrimaryKeys) > 0 }

// appendOnly refuses op on a primary-key table, which lakecore reads,
// writes (NewKeyValueWriter), compacts and maintains, but not through the
// append writer.
func (t *Table) appendOnly(op string) error {
	if s := t.Schema(); len(s.PrimaryKeys) > 0 {
		return fmt.Errorf("%s %s.%s: %w: the table has primary keys %v; write its changes with NewKeyValueWriter",
			op, t.db, t.name, ErrPrimaryKeyTable, s.PrimaryKeys)
	}
	return nil
}
