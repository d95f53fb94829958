package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

func compactCommand() *cli.Command {
	return &cli.Command{
		Name:  "compact",
		Usage: "Rewrite small data files into larger ones, committed as a COMPACT snapshot (Paimon's compact action)",
		Description: "Unaware-bucket tables (bucket = -1): per partition, files under 0.7 x target-file-size are packed\n" +
			"into bins (AppendCompactCoordinator); a bin is rewritten once it reaches 2 x target-file-size, and what\n" +
			"remains if it has at least compaction.min.file-num files. Fixed-bucket tables: per bucket, windows of\n" +
			"consecutive small files in sequence order, or with --full every file from the first small one on.\n" +
			"Primary-key tables: per bucket, Paimon's universal compaction of the sorted runs (size amplification,\n" +
			"size ratio, num-sorted-run.compaction-trigger; level 0 always goes up on lookup, first-row and\n" +
			"deletion-vector tables), or with --full every run merged into the top level; files are merged by key,\n" +
			"or moved up a level unchanged when nothing overlaps them. --dry-run lists, per partition and bucket,\n" +
			"each input file (level, size, rows, merged or moved up) and the output level.\n" +
			"Appends committed meanwhile by other writers are never touched; the rewritten files are deleted when\n" +
			"snapshot expiry removes the last snapshot that uses them.",
		Flags: append(tableFlags(),
			partitionFlag("compact only partitions matching k=v[,k2=v2] (repeatable: any of them)"),
			&cli.BoolFlag{Name: "full", Usage: "fixed-bucket and primary-key tables: full compaction of each bucket (what Paimon's batch compact job does)"},
			&cli.StringFlag{Name: "target-file-size", Usage: "append tables: override the table's target-file-size (e.g. 128mb)"},
			&cli.IntFlag{Name: "min-file-num", DefaultText: "the table's option", Usage: "append tables: override the table's compaction.min.file-num"},
			&cli.BoolFlag{Name: flagDryRun, Usage: "plan and report without writing anything"},
		),
		Action: paimonAction(runCompact),
	}
}

func expireSnapshotsCommand() *cli.Command {
	return &cli.Command{
		Name:  "expire-snapshots",
		Usage: "Delete old snapshots and the files only they use (Paimon's expire_snapshots)",
		Description: "Keeps at least --retain-min and at most --retain-max snapshots; snapshots between the two expire once\n" +
			"older than --older-than (default: the table's snapshot.time-retained, 1 h). Never expires a snapshot a\n" +
			"consumer still has to read or a tag refers to. Flags left out take the table's snapshot.* options.\n" +
			"When --retain-max is below the table's snapshot.num-retained.min and --retain-min is not given,\n" +
			"--retain-min is lowered to --retain-max (Java's procedure refuses instead).",
		Flags: append(tableFlags(),
			&cli.IntFlag{Name: "retain-max", DefaultText: "the table's option", Usage: "the most snapshots to keep (snapshot.num-retained.max)"},
			&cli.IntFlag{Name: "retain-min", DefaultText: "the table's option", Usage: "the fewest snapshots to keep (snapshot.num-retained.min)"},
			&cli.StringFlag{Name: flagOlderThan, Usage: "expire only snapshots older than this: a duration (2h, 1 d) or a time (2024-05-30 12:00:00, local time)"},
			&cli.IntFlag{Name: "max-deletes", DefaultText: "the table's option", Usage: "the most snapshots to expire in this run (snapshot.expire.limit)"},
			&cli.BoolFlag{Name: flagDryRun, Usage: "report what would be deleted without deleting it"},
			verboseFlag(),
		),
		Action: paimonAction(runExpireSnapshots),
	}
}

func expirePartitionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "expire-partitions",
		Usage: "Drop partitions whose time is older than the expiration time, as an OVERWRITE snapshot (Paimon's expire_partitions)",
		Description: "The time of a partition is read from its values (strategy values-time): the first partition key, or\n" +
			"--timestamp-pattern such as '$dt $hour:00:00', parsed leniently as yyyy-M-d[ H:m:s] or with\n" +
			"--timestamp-formatter such as yyyyMMdd. Partitions whose values do not parse are left alone and listed.\n" +
			"Dropped files are deleted physically when the snapshots before the OVERWRITE expire.",
		Flags: append(tableFlags(),
			&cli.StringFlag{Name: "expiration-time", Usage: "drop partitions older than this (partition.expiration-time), e.g. 7d; default: the table's option"},
			&cli.StringFlag{Name: "timestamp-formatter", Usage: "partition.timestamp-formatter, a Java DateTimeFormatter pattern such as yyyyMMdd"},
			&cli.StringFlag{Name: "timestamp-pattern", Usage: "partition.timestamp-pattern, such as '$dt $hour:00:00'"},
			&cli.StringFlag{Name: "expire-strategy", Usage: "partition.expiration-strategy; only values-time is supported"},
			&cli.IntFlag{Name: "max-expires", DefaultText: "the table's option", Usage: "the most partitions to drop in this run (partition.expiration-max-num, default 100)"},
			&cli.BoolFlag{Name: flagDryRun, Usage: "list the partitions that would be dropped without committing"},
		),
		Action: paimonAction(runExpirePartitions),
	}
}

func removeOrphanFilesCommand() *cli.Command {
	return &cli.Command{
		Name:  "remove-orphan-files",
		Usage: "Delete files no snapshot, tag or consumer refers to, older than --older-than (Paimon's remove_orphan_files)",
		Description: "Orphans are data and metadata files of failed or interrupted writes, and leftover temporary files.\n" +
			"Only files older than --older-than (default 1 day, as Paimon) are deleted, so files that running\n" +
			"writers have not committed yet stay; keep it well above any writer's batch-to-commit time.",
		Flags: append(tableFlags(),
			&cli.StringFlag{Name: flagOlderThan, Value: "1d", Usage: "delete only files last modified before this: a duration (1d, 12h) or a time (2024-05-30 12:00:00, local time)"},
			&cli.BoolFlag{Name: flagDryRun, Usage: "list the files that would be deleted without deleting them"},
			verboseFlag(),
		),
		Action: paimonAction(runRemoveOrphanFiles),
	}
}

func runCompact(s *session, c *cli.Context) error {
	o := maintain.CompactOptions{
		Full: c.Bool("full"), MinFileNum: c.Int("min-file-num"), DryRun: c.Bool(flagDryRun),
		Progress: newProgress(s), Logger: s.logger(),
	}
	if v := c.String("target-file-size"); v != "" {
		n, err := schema.ParseMemorySize(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("--target-file-size %q is not a size such as 128mb", v)
		}
		o.TargetFileSize = n
	}
	if c.IsSet("min-file-num") && o.MinFileNum < 1 {
		return fmt.Errorf("--min-file-num must be at least 1")
	}
	specs, err := partitionSpecs(s, c)
	if err != nil {
		return err
	}
	filters, err := compactFilters(s, specs)
	if err != nil {
		return err
	}
	if filters != nil && len(filters) == 0 {
		fmt.Fprintf(s.out, "compact %s: no partition matches --%s %s; nothing to compact\n",
			s.tbl.Path(), flagPartition, strings.Join(partitionValues(c), " --"+flagPartition+" "))
		return nil
	}
	if filters == nil {
		filters = []*partition.Predicate{nil}
	}
	total := &maintain.Report{Operation: maintain.OpCompact, Table: s.tbl.Path(), DryRun: o.DryRun}
	for _, f := range filters {
		o.Filter = f
		rep, err := s.tbl.Compact(s.ctx, o)
		if len(filters) > 1 {
			if err == nil {
				printReportDetails(s.out, rep)
			}
			mergeCompactReports(total, rep)
			if err != nil {
				printReport(s.out, total, false)
				return err
			}
			continue
		}
		return maintenanceResult(s, rep, err, false)
	}
	fmt.Fprintln(s.out, total.Summary())
	return nil
}

func mergeCompactReports(total, rep *maintain.Report) {
	if rep == nil {
		return
	}
	total.Rewritten.Files += rep.Rewritten.Files
	total.Rewritten.Bytes += rep.Rewritten.Bytes
	total.Written.Files += rep.Written.Files
	total.Written.Bytes += rep.Written.Bytes
	total.Tasks += rep.Tasks
	total.Conflicts += rep.Conflicts
	total.Snapshots = append(total.Snapshots, rep.Snapshots...)
	total.Partitions = append(total.Partitions, rep.Partitions...)
	total.Duration += rep.Duration
}

// compactFilters turns --partition specs into partition predicates for
// Compact: nil without specs (the whole table), an empty slice when no
// live partition matches. The specs are matched against the string values
// of the latest snapshot's partitions (bindSpecs) and the predicates take
// those partitions' typed values. One predicate when the matched
// partitions are exactly a product of per-key value sets (the usual case:
// one key, or one spec), else one per partition, each compacted in its own
// snapshot.
func compactFilters(s *session, specs partition.Filter) ([]*partition.Predicate, error) {
	if specs.IsEmpty() {
		return nil, nil
	}
	sch := s.tbl.Schema()
	keys := sch.PartitionFields()
	snap, err := s.tbl.Snapshots().Latest(s.ctx)
	if err != nil || snap == nil {
		return []*partition.Predicate{}, err
	}
	entries, err := s.tbl.Planner().LiveEntries(s.ctx, snap, nil)
	if err != nil {
		return nil, err
	}
	namer, err := newPartitionNamer(sch)
	if err != nil {
		return nil, err
	}
	all, err := livePartitions(namer, entries)
	if err != nil {
		return nil, err
	}
	match, err := bindSpecs(specs, keys, all)
	if err != nil {
		return nil, err
	}
	var matched []*binrow.Partition
	for _, p := range all {
		if match.Match(p.Values) {
			matched = append(matched, p)
		}
	}
	if len(matched) == 0 {
		return []*partition.Predicate{}, nil
	}
	exact := func(ps []*binrow.Partition) (*partition.Predicate, error) {
		allowed := map[string][]any{}
		for i, k := range keys {
			have := map[string]bool{}
			for _, p := range ps {
				if !have[p.Strings[i]] {
					have[p.Strings[i]] = true
					allowed[k.Name] = append(allowed[k.Name], p.Values[i])
				}
			}
		}
		return partition.In(keys, allowed)
	}
	// The product predicate is exact when it admits no live partition
	// beyond the matched ones.
	allowed := make([]map[string]bool, len(keys))
	for i := range keys {
		allowed[i] = map[string]bool{}
		for _, p := range matched {
			allowed[i][p.Strings[i]] = true
		}
	}
	admitted := 0
	for _, p := range all {
		ok := true
		for i := range keys {
			ok = ok && allowed[i][p.Strings[i]]
		}
		if ok {
			admitted++
		}
	}
	if admitted == len(matched) {
		f, err := exact(matched)
		return []*partition.Predicate{f}, err
	}
	filters := make([]*partition.Predicate, len(matched))
	for i, p := range matched {
		if filters[i], err = exact([]*binrow.Partition{p}); err != nil {
			return nil, err
		}
	}
	return filters, nil
}

func runExpireSnapshots(s *session, c *cli.Context) error {
	o := maintain.ExpireSnapshotsOptions{
		RetainMax: c.Int("retain-max"), RetainMin: c.Int("retain-min"), MaxDeletes: c.Int("max-deletes"),
		DryRun: c.Bool(flagDryRun), Progress: newProgress(s), Logger: s.logger(),
	}
	for _, f := range []string{"retain-max", "retain-min", "max-deletes"} {
		if c.IsSet(f) && c.Int(f) < 1 {
			return fmt.Errorf("--%s must be at least 1, not %d", f, c.Int(f))
		}
	}
	if c.IsSet("retain-max") && !c.IsSet("retain-min") {
		tableMin, err := s.tbl.Schema().Opts().SnapshotNumRetainedMin()
		if err != nil {
			return err
		}
		if o.RetainMax < tableMin {
			o.RetainMin = o.RetainMax
			fmt.Fprintf(s.errOut, "note: --retain-min lowered to %d (the table's snapshot.num-retained.min is %d)\n", o.RetainMax, tableMin)
		}
	}
	var err error
	if o.OlderThan, err = parseOlderThan(c.String(flagOlderThan), time.Now()); err != nil {
		return err
	}
	rep, err := s.tbl.ExpireSnapshots(s.ctx, o)
	return maintenanceResult(s, rep, err, c.Bool(flagVerbose))
}

func runExpirePartitions(s *session, c *cli.Context) error {
	o := maintain.ExpirePartitionsOptions{
		TimestampFormatter: c.String("timestamp-formatter"), TimestampPattern: c.String("timestamp-pattern"),
		ExpireStrategy: c.String("expire-strategy"), MaxExpires: c.Int("max-expires"), DryRun: c.Bool(flagDryRun),
		// No Logger: the partitions it would warn about are in the
		// report's "skipped" lines.
		Progress: newProgress(s),
	}
	if c.IsSet("max-expires") && o.MaxExpires < 1 {
		return fmt.Errorf("--max-expires must be at least 1, not %d", o.MaxExpires)
	}
	if v := c.String("expiration-time"); v != "" {
		d, err := parseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("--expiration-time %q is not a positive duration such as 7d or 12h", v)
		}
		o.ExpirationTime = d
	} else if _, set, err := s.tbl.Schema().Opts().PartitionExpirationTime(); err != nil {
		return err
	} else if !set {
		return fmt.Errorf("give --expiration-time (the table has no partition.expiration-time)")
	}
	rep, err := s.tbl.ExpirePartitions(s.ctx, o)
	return maintenanceResult(s, rep, err, false)
}

func runRemoveOrphanFiles(s *session, c *cli.Context) error {
	o := maintain.RemoveOrphanFilesOptions{DryRun: c.Bool(flagDryRun), Progress: newProgress(s), Logger: s.logger()}
	var err error
	if o.OlderThan, err = parseOlderThan(c.String(flagOlderThan), time.Now()); err != nil {
		return err
	}
	rep, err := s.tbl.RemoveOrphanFiles(s.ctx, o)
	return maintenanceResult(s, rep, err, c.Bool(flagVerbose))
}
