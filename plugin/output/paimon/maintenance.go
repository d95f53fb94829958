package paimon

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// maintainer runs the table's automatic maintenance off the commit path,
// as Java's writers do after their commits (TableCommitImpl.expire:
// consumer expiry, snapshot expiry, partition expiry, in that order; and
// compaction in the writer unless write-only): a commit triggers a run, at
// most one runs at a time, and runs start at least Maintenance.Interval
// apart; triggers in between coalesce into one. Failures are logged and
// retried on the next run; they never fail a batch.
//
// With write-only set on the table only consumer expiry runs, as in Java,
// whose AbstractFileStoreTable.newCommit drops snapshot expiry, partition
// expiry and tag creation for write-only tables but keeps
// consumer.expiration-time.
//
// Partition expiry and compaction commit snapshots of their own under the
// commit user "<commit_user>-maintenance" with Java's batch identifier
// (Long.MAX_VALUE), so that they never disturb the identifiers the output
// resolves its own commits by.
//
// After each run, and once when it starts, it also publishes the table
// metrics (maintenance.table_metrics) from the latest snapshot, whatever
// write-only says: they describe the table, not work done on it.
//
// Compaction of a table whose compactions look keys up (changelog-producer
// lookup, deletion vectors, first-row) keeps one lookup cache for the life
// of the maintainer, so that each run reads only the upper-level files
// the last runs did not (data files never change); its local lookup files
// are under the system temp directory and removed by close.
type maintainer struct {
	tbl  *lakecore.Table
	conf Maintenance
	user string
	log  *service.Logger
	slog *slog.Logger
	met  *outputMetrics

	trig chan struct{}
	stop chan struct{}
	done chan struct{}
	// ctx is cancelled by close, cutting a running operation short; the
	// operations are safe to interrupt (they follow the commit protocol).
	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once

	lastPartitionCheck time.Time // zero: the first run checks

	// lookups is the lookup cache of the compactions, made for the schema
	// lookupsSchema from its options, re-made when the schema changes;
	// nil until the first compaction of a primary-key table.
	lookupsMu     sync.Mutex
	lookups       *write.LookupCache
	lookupsSchema int64

	// now is the clock (time.Now; tests move it); ran, when set, is called
	// after every run of the background goroutine.
	now func() time.Time
	ran func()
}

func newMaintainer(tbl *lakecore.Table, c Config, log *service.Logger, met *outputMetrics) *maintainer {
	ctx, cancel := context.WithCancel(context.Background())
	return &maintainer{
		tbl: tbl, conf: c.Maintenance, user: c.CommitUser + "-maintenance", log: log, met: met,
		slog: slog.New(serviceLogHandler{log: log}),
		trig: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		ctx: ctx, cancel: cancel, now: time.Now,
	}
}

// trigger asks for a run after a commit; it never blocks.
func (m *maintainer) trigger(*snapshot.Snapshot) {
	select {
	case m.trig <- struct{}{}:
	default:
	}
}

func (m *maintainer) run() {
	defer close(m.done)
	// The table metrics describe the table from the start, before this
	// output's first commit.
	m.publishTableMetrics(m.ctx)
	var last time.Time
	for {
		select {
		case <-m.trig:
		case <-m.stop:
			return
		}
		if wait := m.conf.Interval - time.Since(last); !last.IsZero() && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-m.stop:
				t.Stop()
				return
			}
		}
		m.runOnce(m.ctx)
		last = time.Now()
		if m.ran != nil {
			m.ran()
		}
	}
}

// close stops the goroutine, interrupting a run, and waits for it; then
// it removes the compactions' local lookup files.
func (m *maintainer) close() {
	m.closeOnce.Do(func() {
		close(m.stop)
		m.cancel()
	})
	<-m.done
	m.lookupsMu.Lock()
	defer m.lookupsMu.Unlock()
	m.closeLookups()
}

// closeLookups closes the lookup cache, if any, removing its local files;
// m.lookupsMu is held.
func (m *maintainer) closeLookups() {
	if m.lookups == nil {
		return
	}
	if err := m.lookups.Close(); err != nil {
		m.log.Warnf("Local lookup files of table %s: %v", m.tbl.Path(), err)
	}
	m.lookups = nil
}

// lookupCache returns the lookup cache for compactions of the table's
// current schema s: the one of the last runs, or a new one (closing the
// old) when the schema changed. nil for a table without primary keys or
// lookup options that do not parse (the compaction then reports them).
func (m *maintainer) lookupCache(s *schema.TableSchema) *write.LookupCache {
	if len(s.PrimaryKeys) == 0 {
		return nil
	}
	m.lookupsMu.Lock()
	defer m.lookupsMu.Unlock()
	if m.lookups != nil && m.lookupsSchema == s.ID {
		return m.lookups
	}
	m.closeLookups()
	o, err := write.LookupCacheOptionsFromSchema(s)
	if err != nil {
		return nil
	}
	m.lookups, m.lookupsSchema = write.NewLookupCache(o), s.ID
	return m.lookups
}

// runOnce does what the table's options and the config ask for, then
// publishes the table metrics.
func (m *maintainer) runOnce(ctx context.Context) {
	if err := m.tbl.Refresh(ctx); err != nil {
		if ctx.Err() == nil {
			m.met.maintenance.failures.Incr(1)
			m.log.Warnf("Maintenance of table %s skipped: %v", m.tbl.Path(), err)
		}
		return
	}
	m.maintain(ctx)
	m.publishTableMetrics(ctx)
}

// maintain runs the expiries and compaction.
func (m *maintainer) maintain(ctx context.Context) {
	opts := m.tbl.Schema().Opts()
	if m.conf.Enabled {
		// Consumers first, so that an abandoned reader's position no longer
		// holds back the snapshot expiry that follows.
		m.expireConsumers(ctx, opts)
	}
	if wo, err := opts.WriteOnly(); err == nil && wo {
		m.log.Debugf("Maintenance of table %s skipped: write-only is set (a dedicated job maintains it)", m.tbl.Path())
		return
	}
	if m.conf.Enabled {
		rep, err := m.tbl.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{Now: m.now, Logger: m.slog})
		m.report("snapshot expiry", rep, err, rep != nil && rep.SnapshotsExpired > 0)

		now := m.now()
		due, err := maintain.PartitionExpiryDue(opts, m.lastPartitionCheck, now)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			m.log.Warnf("Partition expiry of table %s: %v", m.tbl.Path(), err)
		} else if due {
			m.lastPartitionCheck = now
			rep, err := m.tbl.ExpirePartitions(ctx, maintain.ExpirePartitionsOptions{CommitUser: m.user, Now: m.now, Logger: m.slog})
			m.report("partition expiry", rep, err, rep != nil && len(rep.PartitionsDropped) > 0)
		}
	}
	if m.conf.Compaction {
		rep, err := m.tbl.Compact(ctx, maintain.CompactOptions{CommitUser: m.user, Logger: m.slog, LookupCache: m.lookupCache(m.tbl.Schema())})
		m.report("compaction", rep, err, rep != nil && rep.Tasks > 0)
	}
}

// publishTableMetrics reads what the latest snapshot holds into the table
// metrics, when they are on. A failure is logged; the gauges keep their
// values until the next run.
func (m *maintainer) publishTableMetrics(ctx context.Context) {
	if m.met.table == nil {
		return
	}
	snap, err := m.tbl.Snapshots().Latest(ctx)
	var stats []lakecore.PartitionStats
	if err == nil && snap != nil {
		stats, err = m.tbl.PartitionStats(ctx, snap)
	}
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		m.met.maintenance.failures.Incr(1)
		m.log.Warnf("Table metrics of %s not updated (retried after the next commit): %v", m.tbl.Path(), err)
	default:
		m.met.table.publish(stats, len(m.tbl.Schema().PartitionKeys) > 0)
	}
}

// expireConsumers deletes the consumers not updated for
// consumer.expiration-time, as Java's writers do before expiring snapshots
// (TableCommitImpl.expire: "expire consumer first to avoid preventing
// snapshot expiration"; ConsumerManager.expire compares the consumer
// file's modification time).
func (m *maintainer) expireConsumers(ctx context.Context, opts schema.Options) {
	d, set, err := opts.ConsumerExpirationTime()
	switch {
	case err != nil:
		m.log.Warnf("Consumer expiry of table %s: %v", m.tbl.Path(), err)
		return
	case !set:
		return
	}
	ids, err := m.tbl.Consumers().ExpireBefore(ctx, m.now().Add(-d))
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		m.met.maintenance.failures.Incr(1)
		m.log.Warnf("Automatic consumer expiry of table %s failed (retried after the next commit): %v", m.tbl.Path(), err)
	case len(ids) > 0:
		m.log.Infof("Automatic consumer expiry of table %s: removed consumers %s, not updated for %v (consumer.expiration-time)",
			m.tbl.Path(), strings.Join(ids, ", "), d)
	}
}

// report logs and counts the outcome of one operation.
func (m *maintainer) report(what string, rep *maintain.Report, err error, changed bool) {
	if err == nil {
		m.met.maintenance.record(rep)
	}
	switch {
	case err != nil && m.ctx.Err() != nil:
		m.log.Debugf("%s of table %s interrupted by shutdown: %v", what, m.tbl.Path(), err)
	case err != nil:
		m.met.maintenance.failures.Incr(1)
		m.log.Warnf("Automatic %s of table %s failed (retried after the next commit): %v", what, m.tbl.Path(), err)
	case changed:
		m.log.Infof("Automatic %s of table %s: %s", what, m.tbl.Path(), summary(rep))
	case rep != nil:
		m.log.Debugf("Automatic %s of table %s: %s", what, m.tbl.Path(), rep.Summary())
	}
}

// summary is rep's one-line summary, naming the partitions a partition
// expiry dropped with their files and rows, so that the log says what
// data left the table.
func summary(rep *maintain.Report) string {
	s := rep.Summary()
	if len(rep.DroppedPartitions) == 0 {
		return s
	}
	parts := make([]string, len(rep.DroppedPartitions))
	for i, p := range rep.DroppedPartitions {
		rows := "rows"
		if p.Rows == 1 {
			rows = "row"
		}
		parts[i] = fmt.Sprintf("%s (%s, %d %s)", p.Partition, p.Files, p.Rows, rows)
	}
	return s + "; dropped " + strings.Join(parts, ", ")
}

// maintenanceMetrics count what the output's automatic maintenance did,
// and its failures (any operation, or the table metrics, that failed for
// another reason than shutdown).
type maintenanceMetrics struct {
	snapshotsExpired, partitionsExpired                     *service.MetricCounter
	compactions, compactedFiles, compactedBytes, compactOut *service.MetricCounter
	failures                                                *service.MetricCounter
}

// record counts what a successful operation's report says it did.
func (mm *maintenanceMetrics) record(rep *maintain.Report) {
	if rep == nil || rep.DryRun {
		return
	}
	switch rep.Operation {
	case maintain.OpExpireSnapshots:
		mm.snapshotsExpired.Incr(int64(rep.SnapshotsExpired))
	case maintain.OpExpirePartitions:
		mm.partitionsExpired.Incr(int64(len(rep.PartitionsDropped)))
	case maintain.OpCompact:
		mm.compactions.Incr(int64(len(rep.Snapshots)))
		mm.compactedFiles.Incr(rep.Rewritten.Files)
		mm.compactedBytes.Incr(rep.Rewritten.Bytes)
		mm.compactOut.Incr(rep.Written.Files)
	}
}

// serviceLogHandler forwards the maintain package's slog records to the
// Benthos logger.
type serviceLogHandler struct {
	log   *service.Logger
	attrs []slog.Attr
}

func (h serviceLogHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h serviceLogHandler) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	add := func(a slog.Attr) bool {
		msg += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	switch {
	case r.Level >= slog.LevelError:
		h.log.Error(msg)
	case r.Level >= slog.LevelWarn:
		h.log.Warn(msg)
	case r.Level >= slog.LevelInfo:
		h.log.Info(msg)
	default:
		h.log.Debug(msg)
	}
	return nil
}

func (h serviceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return serviceLogHandler{log: h.log, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h serviceLogHandler) WithGroup(string) slog.Handler { return h }
