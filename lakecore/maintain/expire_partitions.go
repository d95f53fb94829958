package maintain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// ExpirePartitionsOptions are the arguments of Paimon's expire_partitions
// procedure; a zero field takes the table option named in its comment.
type ExpirePartitionsOptions struct {
	// ExpirationTime is partition.expiration-time: a partition whose time
	// is older than now minus this expires. Required here or in the table.
	ExpirationTime time.Duration
	// TimestampFormatter is partition.timestamp-formatter, a Java
	// DateTimeFormatter pattern such as "yyyyMMdd"; "" with the table
	// option unset means the lenient yyyy-M-d[ H:m:s[.fraction]].
	TimestampFormatter string
	// TimestampPattern is partition.timestamp-pattern, such as
	// "$dt $hour:00:00"; "" with the table option unset means the first
	// partition value.
	TimestampPattern string
	// ExpireStrategy is partition.expiration-strategy; only "values-time"
	// (the default) is supported.
	ExpireStrategy string
	// MaxExpires is partition.expiration-max-num (default 100): the most
	// partitions dropped in one run.
	MaxExpires int
	// BatchSize is partition.expiration-batch-size: drop at most this many
	// partitions per OVERWRITE snapshot; 0 means all in one.
	BatchSize int
	// DryRun reports the partitions that would be dropped without
	// committing anything.
	DryRun bool

	// Committer commits the OVERWRITE snapshots; nil means a committer with
	// the table's options and CommitUser (a random one when empty).
	Committer  *commit.Committer
	CommitUser string
	// CommitIdentifier of the snapshots; 0 means math.MaxInt64, what Java's
	// batch jobs and procedures use, and is refused with a Committer given:
	// automatic expiry with a writer's committer passes the identifier of
	// the commit that triggered it, as Java does, or FilterCommitted would
	// later take every identifier of that user for committed.
	CommitIdentifier int64

	// Now is the clock (time.Now when nil) and Location the time zone of
	// its wall clock (time.Local when nil): Java compares partition times
	// with LocalDateTime.now() of the JVM's default zone.
	Now      func() time.Time
	Location *time.Location
	Progress Progress
	// Logger receives a warning per partition that cannot be judged (as
	// Java logs it); nil discards them. They are in Report.Skipped either
	// way.
	Logger *slog.Logger
}

// PartitionExpiryDue reports whether automatic partition expiration should
// run now, given when it last ran: partition.expiration-time must be set,
// and partition.expiration-check-interval (default 1 h) must have passed
// since lastCheck, or be 0 (PartitionExpire.expire). Java starts lastCheck
// at a random point of the first interval so that short jobs also expire;
// callers that start at process start may do the same.
func PartitionExpiryDue(o schema.Options, lastCheck, now time.Time) (bool, error) {
	_, set, err := o.PartitionExpirationTime()
	if err != nil || !set {
		return false, err
	}
	interval, err := o.PartitionExpirationCheckInterval()
	if err != nil {
		return false, err
	}
	return interval == 0 || now.After(lastCheck.Add(interval)), nil
}

// ExpirePartitions drops the partitions of the table at tablePath whose
// time, read from their values, is before now minus the expiration time,
// as Java's PartitionExpire with the values-time strategy does
// (apache/paimon 1.4: paimon-core/.../operation/PartitionExpire.java,
// partition/PartitionValuesTimeExpireStrategy.java,
// partition/PartitionTimeExtractor.java):
//
//   - the live partitions of the latest snapshot are judged by the time
//     PartitionTimeExtractor reads from their values (see
//     ExpirePartitionsOptions); partitions with a NULL value or a value
//     that does not parse are left alone and listed in Report.Skipped;
//   - the expired ones are sorted by their comma-joined values, at most
//     MaxExpires are taken, and they are dropped as one OVERWRITE snapshot
//     per BatchSize (FileStoreCommit.dropPartitions): DELETE entries for
//     every file of those partitions, no new files. Files appended to them
//     concurrently are dropped too, as in Java. The files are physically
//     deleted when snapshot expiry removes the snapshots before it.
//
// Primary-key tables are dropped the same way, as Java's dropPartitions
// does for them (CommitScanner.readOverwriteChanges): every data file of
// every level, and the partitions' index entries (deletion vectors,
// dynamic-bucket hash indexes) leave the index manifest; a postpone-bucket
// table (bucket = -2) also loses its bucket -2 files. The OVERWRITE
// snapshot has no changelog, so streaming readers of a changelog-producer
// table see no deletes for the dropped rows, as with Java.
//
// A table without partition keys or without an expiration time wraps
// ErrInvalidOptions; the update-time strategy wraps ErrUnsupported.
// Commit errors are those of commit.Committer.Overwrite.
func ExpirePartitions(ctx context.Context, fio storage.FileIO, tablePath string, o ExpirePartitionsOptions) (*Report, error) {
	start := time.Now()
	rep := newReport(OpExpirePartitions, tablePath, o.DryRun)
	defer rep.finish(start)
	t, err := loadTable(ctx, fio, tablePath, o.Logger)
	if err != nil {
		return rep, fmt.Errorf("expire partitions: %w", err)
	}
	rep.Table = t.path
	if err := expirePartitions(ctx, t, o, rep); err != nil {
		return rep, fmt.Errorf("expire partitions of %s: %w", t.path, err)
	}
	return rep, nil
}

// partitionInfo is one live partition.
type partitionInfo struct {
	bytes  []byte
	values []any
	files  Counts
	rows   int64
}

func expirePartitions(ctx context.Context, t *table, o ExpirePartitionsOptions, rep *Report) error {
	if len(t.partFields) == 0 {
		return fmt.Errorf("%w: the table has no partition keys", ErrInvalidOptions)
	}
	strategy := strings.ToLower(o.ExpireStrategy)
	if strategy == "" {
		strategy = t.opts.PartitionExpirationStrategy()
	}
	if strategy != "values-time" {
		return fmt.Errorf("%w: partition.expiration-strategy %q (only values-time)", ErrUnsupported, strategy)
	}
	expiration := o.ExpirationTime
	if expiration == 0 {
		d, set, err := t.opts.PartitionExpirationTime()
		if err != nil {
			return err
		}
		if !set {
			return fmt.Errorf("%w: partition.expiration-time is not set", ErrInvalidOptions)
		}
		expiration = d
	}
	if expiration < 0 {
		return fmt.Errorf("%w: expiration time %s is negative", ErrInvalidOptions, expiration)
	}
	maxNum := o.MaxExpires
	if maxNum == 0 {
		n, err := t.opts.PartitionExpirationMaxNum()
		if err != nil {
			return err
		}
		maxNum = n
	}
	if o.Committer != nil && o.CommitIdentifier == 0 {
		return fmt.Errorf("%w: a Committer needs its CommitIdentifier", ErrInvalidOptions)
	}
	batch := o.BatchSize
	if batch == 0 {
		if v, ok := t.opts.Get("partition.expiration-batch-size"); ok {
			n, err := parseInt(v)
			if err != nil {
				return fmt.Errorf("%w: partition.expiration-batch-size=%q", ErrInvalidOptions, v)
			}
			batch = n
		}
	}
	formatter, pattern := o.TimestampFormatter, o.TimestampPattern
	if formatter == "" {
		formatter = t.opts.PartitionTimestampFormatter()
	}
	if pattern == "" {
		pattern = t.opts.PartitionTimestampPattern()
	}
	extractor, err := newTimeExtractor(pattern, formatter)
	if err != nil {
		return err
	}

	now := orNow(o.Now)
	loc := o.Location
	if loc == nil {
		loc = time.Local
	}
	wall := now().In(loc)
	expireAt := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), time.UTC).Add(-expiration)

	latest, err := t.snapshots.Latest(ctx)
	if err != nil || latest == nil {
		return err
	}
	entries, err := scan.NewPlanner(t.fio, t.path).LiveEntries(ctx, latest, nil)
	if err != nil {
		return err
	}
	parts := map[string]*partitionInfo{}
	for i := range entries {
		e := &entries[i]
		p := parts[string(e.Partition)]
		if p == nil {
			vals, err := t.decodePartition(e.Partition)
			if err != nil {
				return err
			}
			p = &partitionInfo{bytes: e.Partition, values: vals}
			parts[string(e.Partition)] = p
		}
		p.files.add(e.File.FileSize)
		p.rows += e.File.RowCount
	}

	keys := make([]string, len(t.partFields))
	for i, f := range t.partFields {
		keys[i] = f.Name
	}
	type expired struct {
		info   *partitionInfo
		sortBy string
	}
	var candidates []expired
	def := t.opts.PartitionDefaultName()
	for _, p := range parts {
		strs := make([]*string, len(p.values))
		sortVals := make([]string, len(p.values))
		var convErr error
		for i, v := range p.values {
			if v == nil {
				sortVals[i] = def
				continue
			}
			s, err := javaToString(t.partFields[i], v)
			if err != nil {
				convErr = err
				break
			}
			strs[i], sortVals[i] = &s, s
		}
		name := t.partitionName(p.bytes)
		if convErr != nil {
			rep.Skipped = append(rep.Skipped, SkippedPartition{Partition: name, Reason: convErr.Error()})
			continue
		}
		partTime, err := extractor.extract(keys, strs)
		if err != nil {
			reason := "its time " + err.Error()
			if errors.Is(err, errNullValue) {
				reason = "it contains a NULL value; drop it manually"
			} else if errors.Is(err, errUnparseable) {
				reason = fmt.Sprintf("its time %v with %s", err, describeFormatter(formatter))
			}
			t.log.Warn("cannot extract a time from partition; it is not expired", "table", t.path, "partition", name, "reason", reason)
			rep.Skipped = append(rep.Skipped, SkippedPartition{Partition: name, Reason: reason})
			continue
		}
		if expireAt.After(partTime) {
			candidates = append(candidates, expired{info: p, sortBy: strings.Join(sortVals, ",")})
		}
	}
	sort.Slice(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Partition < rep.Skipped[j].Partition })
	sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].sortBy < candidates[j].sortBy })
	if len(candidates) > maxNum {
		candidates = candidates[:max(maxNum, 0)]
	}
	var drop [][]byte
	for _, c := range candidates {
		rep.PartitionsDropped = append(rep.PartitionsDropped, t.partitionName(c.info.bytes))
		rep.DroppedPartitions = append(rep.DroppedPartitions, DroppedPartition{
			Partition: t.partitionName(c.info.bytes), Files: c.info.files, Rows: c.info.rows})
		rep.DroppedFiles.Files += c.info.files.Files
		rep.DroppedFiles.Bytes += c.info.files.Bytes
		drop = append(drop, c.info.bytes)
	}
	if len(drop) == 0 || rep.DryRun {
		return nil
	}

	committer := o.Committer
	if committer == nil {
		user := o.CommitUser
		if user == "" {
			user = "expire-partitions-" + uuid.NewString()
		}
		committer = commit.New(t.fio, t.path, commit.OptionsFromSchema(t.schema, user))
	}
	ident := o.CommitIdentifier
	if ident == 0 {
		ident = math.MaxInt64
	}
	if batch <= 0 || batch > len(drop) {
		batch = len(drop)
	}
	for i := 0; i < len(drop); i += batch {
		s, err := committer.Overwrite(ctx, ident, drop[i:min(i+batch, len(drop))], nil)
		if err != nil {
			return err
		}
		if s != nil {
			rep.Snapshots = append(rep.Snapshots, s.ID)
		}
		if o.Progress != nil {
			o.Progress(Event{Operation: OpExpirePartitions, Phase: "drop partitions", Done: min(i+batch, len(drop)), Total: len(drop)})
		}
	}
	return nil
}

func describeFormatter(f string) string {
	if f == "" {
		return "the default formatter yyyy-M-d[ H:m:s[.fraction]] (set partition.timestamp-formatter)"
	}
	return "partition.timestamp-formatter " + f
}

// javaToString is Java's toString of a partition value's internal object,
// what PartitionExpireStrategy hands to the time extractor: strings as they
// are, numbers in decimal, a DATE as its epoch day, a TIMESTAMP as
// LocalDateTime.toString.
func javaToString(f types.DataField, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	strs, err := binrow.PartitionValues([]types.DataField{f}, []any{v}, binrow.PartitionOptions{LegacyName: true})
	if err != nil {
		return "", err
	}
	return strs[0], nil
}
