package paimon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/internal/fatal"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

// Name is the component name the input registers under.
const Name = "paimon"

func init() {
	if err := Register(service.GlobalEnvironment()); err != nil {
		panic(fmt.Sprintf("register the %s input: %v", Name, err))
	}
}

// Register registers the paimon batch input in env, wrapped with
// service.AutoRetryNacksBatchedToggled (auto_replay_nacks). The package's
// init registers it in the global environment.
func Register(env *service.Environment) error {
	return env.RegisterBatchInput(Name, ConfigSpec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
		c, err := ParseConfig(conf)
		if err != nil {
			return nil, err
		}
		return service.AutoRetryNacksBatchedToggled(conf, New(c, mgr))
	})
}

// Metric names of the input (beside Benthos' input_received and
// input_latency_ns).
const (
	// MetricRows counts the rows (messages) handed to the pipeline.
	MetricRows = "paimon_input_rows"
	// MetricFiles counts the data files read to the end.
	MetricFiles = "paimon_input_files"
	// MetricSnapshots counts the snapshots consumed: every message of the
	// snapshot (and of all before it) acknowledged, skipped snapshots
	// (COMPACT, OVERWRITE without read_overwrite) included.
	MetricSnapshots = "paimon_input_snapshots"
	// MetricLag is now minus the commit time of the snapshot whose rows are
	// being emitted, in milliseconds; 0 once the input has caught up.
	MetricLag = "paimon_input_lag_ms"
	// MetricFreshness is a timer of now minus the commit time of the
	// snapshot, observed once per batch as the batch leaves the input: how
	// long after its commit a row reaches the pipeline (exported as the
	// histogram paimon_input_freshness_seconds).
	MetricFreshness = "paimon_input_freshness_ns"
	// MetricScanDuration is a timer of each snapshot's scan: reading the
	// snapshot and planning its files from the manifests (Paimon's
	// scanDuration; exported as paimon_input_scan_duration_seconds).
	MetricScanDuration = "paimon_input_scan_duration_ns"
	// MetricConsumerPosition is the consumer position last saved (the
	// next snapshot to read after a restart).
	MetricConsumerPosition = "paimon_input_consumer_next_snapshot"
	// MetricConsumerErrors counts consumer writes that failed after retries.
	MetricConsumerErrors = "paimon_input_consumer_errors"
	// MetricRowsDropped counts rows nacked with auto_replay_nacks off,
	// which the input drops as Benthos' contract says.
	MetricRowsDropped = "paimon_input_rows_dropped"
	// MetricSnapshotsExpired counts snapshots skipped because they expired
	// before they were read (on_expired: earliest).
	MetricSnapshotsExpired = "paimon_input_snapshots_expired"
)

type inputMetrics struct {
	rows, files, snapshots  *service.MetricCounter
	consumerErrors          *service.MetricCounter
	rowsDropped, expired    *service.MetricCounter
	lag, consumerPosition   *service.MetricGauge
	freshness, scanDuration *service.MetricTimer
}

func newInputMetrics(m *service.Metrics) *inputMetrics {
	return &inputMetrics{
		rows:             m.NewCounter(MetricRows),
		files:            m.NewCounter(MetricFiles),
		snapshots:        m.NewCounter(MetricSnapshots),
		consumerErrors:   m.NewCounter(MetricConsumerErrors),
		rowsDropped:      m.NewCounter(MetricRowsDropped),
		expired:          m.NewCounter(MetricSnapshotsExpired),
		lag:              m.NewGauge(MetricLag),
		consumerPosition: m.NewGauge(MetricConsumerPosition),
		freshness:        m.NewTimer(MetricFreshness),
		scanDuration:     m.NewTimer(MetricScanDuration),
	}
}

// Input is the paimon batch input (service.BatchInput). Benthos drives it:
// Connect (retried with backoff until it succeeds), ReadBatch in a loop
// without waiting for acknowledgements, then Close once the pending acks
// are resolved.
//
// A background reader, started by Connect and stopped by Close, plans
// snapshot after snapshot and renders their rows into message batches of at
// most batch_size rows (never spanning two snapshots) while the pipeline
// processes the previous ones; ReadBatch hands them over. The acks go to an
// ackTracker, and with consumer_id the consumer file advances to N only
// when every batch of every snapshot before N has been acknowledged.
type Input struct {
	conf Config
	res  *service.Resources
	log  *service.Logger
	m    *inputMetrics
	now  func() time.Time
	// idle, when set (tests), replaces the wait of discovery_interval once
	// the reader has caught up; false stops the reader.
	idle func(ctx context.Context, d time.Duration) bool
	// fileIO, when set (tests), opens the warehouse instead of
	// lakecore.OpenCatalog's storage.Open.
	fileIO func(ctx context.Context) (storage.FileIO, error)

	backoff retry.Backoff // of Connect

	mu       sync.Mutex
	reader   *snapshotReader // nil until connected and after Close
	consumer *consumerWriter // nil without consumer_id
	tracker  *ackTracker
	ended    bool
	closed   bool
}

// New returns the input for a parsed configuration; nothing is opened
// until Connect.
func New(c Config, mgr *service.Resources) *Input {
	return &Input{conf: c, res: mgr, log: mgr.Logger(), m: newInputMetrics(mgr.Metrics()), now: time.Now}
}

// Connect opens the table and starts reading. It is also how reading
// resumes after ReadBatch answered ErrNotConnected because the consumer
// position could not be saved: it then retries that write and succeeds
// only once it is saved. Errors name the table and the setting at fault.
//
// An error retrying cannot fix (see permanent) ends the input and stops
// the stream through internal/fatal (the binary exits non-zero with it),
// and a local warehouse directory Connect created is removed again if it
// is empty; other errors are retried after retry.Backoff's waits (500ms,
// doubling with each failure in a row, at most 30s).
func (in *Input) Connect(ctx context.Context) error {
	guard := config.GuardWarehouse(in.conf.Table)
	err := in.connect(ctx)
	switch {
	case err == nil:
		in.backoff.Reset()
		return nil
	case errors.Is(err, service.ErrEndOfInput) || errors.Is(err, errInputClosed):
		return err
	case in.permanent(err):
		if in.stop(err) {
			guard.RemoveEmpty()
			return service.ErrEndOfInput
		}
		return retry.Permanent(fmt.Errorf("%w (retrying cannot fix this)", err))
	}
	return in.backoff.Transient(err)
}

// errInputClosed answers Connect after Close.
var errInputClosed = errors.New("paimon input: closed")

// errMismatch is wrapped by Connect errors about a setting of the input
// that does not fit the table (a column or partition filter it lacks): a
// permanent error, like lakecore.IsPermanent's.
var errMismatch = errors.New("the input's configuration does not fit the table")

// permanent reports whether err, from Connect or the reader, is one that
// retrying cannot fix: lakecore.IsPermanent's (an unsupported table
// feature such as ORC data files or manifests, a missing bucket, access
// denied), errMismatch, or the next snapshot expired with on_expired:
// error (it will not come back). A missing table is permanent only for a
// bounded read: a tailing read waits for the table to be created. Damaged
// files are not permanent: they can be repaired, and a bounded read must
// not end early over them.
func (in *Input) permanent(err error) bool {
	if errors.Is(err, lakecore.ErrTableNotFound) && !in.conf.Bounded {
		return false
	}
	return lakecore.IsPermanent(err) || errors.Is(err, errMismatch) || errors.Is(err, lakecore.ErrSnapshotExpired)
}

// stop ends the input because of err, which retrying cannot fix: it logs
// err once, marks the input ended and has the stream stopped through
// internal/fatal. Without a fatal.Handler (a StreamBuilder that installed
// none) it does nothing and returns false: ending the input would make a
// bounded read look complete, so the caller keeps failing with err.
func (in *Input) stop(err error) bool {
	if !fatal.Report(in.res, err) {
		return false
	}
	in.mu.Lock()
	in.ended = true
	in.mu.Unlock()
	return true
}

// connect is Connect without the classification of its errors.
func (in *Input) connect(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.reader != nil {
		if in.consumer != nil && in.consumer.Failing() {
			return in.consumer.Flush(ctx)
		}
		return nil
	}
	if in.closed {
		return errInputClosed
	}
	if in.ended {
		return service.ErrEndOfInput
	}
	c := in.conf
	var cat *lakecore.Catalog
	if in.fileIO != nil {
		fio, err := in.fileIO(ctx)
		if err != nil {
			return fmt.Errorf("paimon input: %w", err)
		}
		cat = lakecore.NewCatalog(fio)
	} else {
		var err error
		if cat, err = lakecore.OpenCatalog(ctx, c.Table.Warehouse, c.Table.S3); err != nil {
			return fmt.Errorf("paimon input on %s: %w", c.Table, err)
		}
	}
	tbl, err := cat.OpenTable(ctx, c.Table.Database, c.Table.Table)
	if err != nil {
		return fmt.Errorf("paimon input on %s: %w", c.Table, err)
	}
	s := tbl.Schema()
	filter, err := bindPartitionFilter(c.PartitionFilter, s.PartitionFields())
	if err != nil {
		return fmt.Errorf("paimon input on %s: %w: %w", c.Table, errMismatch, err)
	}
	var projection []string
	if len(c.Columns) > 0 {
		projection = c.Columns
		for _, col := range c.Columns {
			if types.FieldByName(s.Fields, col) < 0 {
				return fmt.Errorf("paimon input on %s: %w: columns: %q is not a column of the table (columns: %s)",
					c.Table, errMismatch, col, strings.Join(s.FieldNames(), ", "))
			}
		}
	}
	o := scan.StreamOptions{
		Mode:            scan.StartupMode(c.ScanMode),
		TimestampMillis: c.ScanTimestampMillis,
		SnapshotID:      c.ScanSnapshotID,
		ReadOverwrite:   c.ReadOverwrite,
		OnExpired:       string(c.OnExpired),
		Filter:          filter,
		Bounded:         c.Bounded,
	}
	if c.Shard.Count > 1 {
		o.Shard = &c.Shard
		in.log.Infof("paimon input on %s: reading shard %d of %d (shards 0 to %d)", c.Table, c.Shard.Index, c.Shard.Count, c.Shard.Count-1)
	}
	if !c.Changelog {
		if err := checkLatestValues(s); err != nil {
			return fmt.Errorf("paimon input on %s: %w: %w", c.Table, errMismatch, err)
		}
	}
	var consumer *consumerWriter
	if id := c.Consumer(); id != "" {
		con, found, err := tbl.Consumers().Get(ctx, id)
		if err != nil {
			return fmt.Errorf("paimon input on %s: %w", c.Table, err)
		}
		var start int64
		if found && con.NextSnapshot > 0 {
			// A stored position overrides scan_mode, as consumer-id does in
			// Paimon (AbstractDataTableScan.createStartingScanner).
			o.NextSnapshot = con.NextSnapshot
			start = con.NextSnapshot
			in.log.Infof("paimon input on %s: consumer %q resumes at snapshot %d (scan_mode %s is not used)", c.Table, id, start, c.ScanMode)
			in.m.consumerPosition.Set(start)
		} else {
			in.log.Infof("paimon input on %s: consumer %q has no position yet; starting with scan_mode %s", c.Table, id, c.ScanMode)
		}
		consumer = newConsumerWriter(tbl.Consumers(), id, start, in.log, in.m)
	}
	r, err := newSnapshotReader(in, tbl, tbl.NewStreamScan(o), projection)
	if err != nil {
		return fmt.Errorf("paimon input on %s: %w", c.Table, err)
	}
	r.filter = filter
	in.consumer = consumer
	in.tracker = newAckTracker(0)
	in.reader = r
	r.start(in.tracker)
	return nil
}

// ReadBatch returns the next batch of rows: one structured message per row
// with the paimon_* metadata, all from one snapshot. It waits (without
// busy-looping: the reader polls the table every discovery_interval) until
// a batch is ready or ctx is done. It returns ErrEndOfInput once a bounded
// read has emitted every snapshot up to its end, and ErrNotConnected while
// the consumer position cannot be saved (Connect then retries the write).
//
// The AckFunc marks the batch done. A nack (only seen with
// auto_replay_nacks off; otherwise Benthos replays the batch itself) drops
// the rows as Benthos' contract says, with a warning, and the position
// moves on. An AckFunc that moves the position writes the consumer file
// before it returns.
func (in *Input) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	in.mu.Lock()
	r, consumer, tracker, ended := in.reader, in.consumer, in.tracker, in.ended
	in.mu.Unlock()
	if ended {
		return nil, nil, service.ErrEndOfInput
	}
	if r == nil {
		return nil, nil, service.ErrNotConnected
	}
	if consumer != nil && consumer.Failing() {
		return nil, nil, service.ErrNotConnected
	}
	var res readResult
	select {
	case res = <-r.out:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	switch {
	case res.end:
		in.mu.Lock()
		in.ended = true
		in.mu.Unlock()
		return nil, nil, service.ErrEndOfInput
	case res.err != nil:
		if in.permanent(res.err) && in.stop(res.err) {
			return nil, nil, service.ErrEndOfInput
		}
		return nil, nil, res.err
	}
	in.m.rows.Incr(int64(len(res.batch)))
	age := max(0, in.now().Sub(time.UnixMilli(res.commitMillis)))
	in.m.lag.Set(age.Milliseconds())
	in.m.freshness.Timing(age.Nanoseconds())
	plan, n, snapID := res.plan, len(res.batch), res.snapshotID
	return res.batch, func(ctx context.Context, err error) error {
		if err != nil {
			in.m.rowsDropped.Incr(int64(n))
			in.log.Warnf("paimon input on %s: %d rows of snapshot %d were rejected downstream and auto_replay_nacks is off: they are dropped and the position moves on: %v",
				in.conf.Table, n, snapID, err)
		}
		return in.advanced(ctx, tracker.Ack(plan))
	}, nil
}

// advanced records a move of the tracker's position: counts the snapshots
// and saves the consumer position. A failed save is logged and counted by
// the consumer writer and surfaces as ErrNotConnected on the next
// ReadBatch; it is not returned, since Benthos would only log it again.
func (in *Input) advanced(ctx context.Context, a advance) error {
	if a.Retired == 0 {
		return nil
	}
	in.m.snapshots.Incr(int64(a.Retired))
	if in.consumer != nil {
		_ = in.consumer.Advance(ctx, a.Position)
	}
	return nil
}

// Close stops the background reader and saves the consumer position if an
// earlier write of it failed. Benthos calls it after the pending acks are
// resolved, so at the end of a bounded read the final position is saved
// before Close returns.
func (in *Input) Close(ctx context.Context) error {
	in.mu.Lock()
	r, consumer := in.reader, in.consumer
	in.reader, in.closed = nil, true
	in.mu.Unlock()
	if r != nil {
		r.stop()
	}
	if consumer != nil {
		if err := consumer.Flush(ctx); err != nil {
			return err
		}
	}
	return nil
}

// checkLatestValues refuses changelog: false where the latest change of a
// key is not its value: append tables have no key, and the delta records
// of partial-update and aggregation tables are partial rows or increments
// unless a lookup or full-compaction changelog producer writes merged
// values (apache/paimon docs: partial-update and aggregation streaming
// reads need those producers).
func checkLatestValues(s *schema.TableSchema) error {
	if len(s.PrimaryKeys) == 0 {
		return fmt.Errorf("%s: false needs a primary-key table; this is an append table, whose rows are all inserts: remove %s", fieldChangelog, fieldChangelog)
	}
	mode, err := mergetree.ParseMode(s.Options)
	if err != nil {
		return err
	}
	switch mode.Name {
	case mergetree.EngineDeduplicate, mergetree.EngineFirstRow:
		return nil
	}
	switch mode.ChangelogProducer {
	case "lookup", "full-compaction":
		return nil
	}
	return fmt.Errorf("%s: false needs whole rows, but the table's merge-engine %s with changelog-producer %s stores partial changes: "+
		"use changelog: true, or a changelog-producer lookup or full-compaction", fieldChangelog, mode.Name, mode.ChangelogProducer)
}

// errAdvice completes scan errors with what the user can do.
func errAdvice(err error) error {
	if errors.Is(err, scan.ErrSnapshotExpired) {
		return fmt.Errorf("%w. With the paimon input: set consumer_id so that snapshot expiry keeps the snapshots it has not read, "+
			"raise the table's snapshot.time-retained or snapshot.num-retained.min, or set on_expired: earliest to skip to the "+
			"earliest snapshot (the expired snapshots' rows are then not read)", err)
	}
	return err
}
