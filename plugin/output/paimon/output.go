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
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

// Name is the component name the output registers under.
const Name = "paimon"

func init() {
	if err := Register(service.GlobalEnvironment()); err != nil {
		panic(fmt.Sprintf("register the %s output: %v", Name, err))
	}
}

// Option customises the outputs of one environment (see Register).
type Option func(*options)

type options struct {
	openFileIO func(ctx context.Context, t config.Table) (storage.FileIO, error)
	progress   time.Duration
	// maintenanceRan, when set, is called after every background
	// maintenance run (tests wait for runs with it).
	maintenanceRan func()
}

// WithFileIO makes the outputs open their warehouse with fn instead of
// storage.Open: tests wrap the real storage with a faultfs.FS this way.
func WithFileIO(fn func(ctx context.Context, t config.Table) (storage.FileIO, error)) Option {
	return func(o *options) { o.openFileIO = fn }
}

// WithProgressLog makes the outputs log, at INFO and at most once per
// interval, the latest snapshot id and the rows per second committed since
// the previous line (the demo's progress report).
func WithProgressLog(interval time.Duration) Option {
	return func(o *options) { o.progress = interval }
}

// Register registers the paimon batch output in env with opts. The
// package's init registers it in the global environment without options.
func Register(env *service.Environment, opts ...Option) error {
	var o options
	for _, fn := range opts {
		fn(&o)
	}
	return env.RegisterBatchOutput(Name, ConfigSpec(),
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			c, err := ParseConfig(conf)
			if err != nil {
				return nil, service.BatchPolicy{}, 0, err
			}
			count, _ := conf.FieldInt(fieldBatching, "count")
			if w := batchingWarning(count, c.Batching); w != "" {
				mgr.Logger().Warn(w)
			}
			return newOutput(c, mgr, o), c.Batching, c.MaxInFlight, nil
		})
}

// batchingWarning is the warning a batching.count deserves at start-up
// ("" for none), given the policy the output applies. Benthos' lint rules
// are errors and these settings are legal, so they are reported in the log:
//   - count 1 alone is Benthos' policy for no batching, so the output's
//     default policy applies instead of one message per batch;
//   - a count up to 10 makes a batch, and so a data file and mostly a
//     snapshot, of every few messages.
func batchingWarning(count int, applied service.BatchPolicy) string {
	switch {
	case count == 1 && applied.Count == DefaultBatchCount:
		return fmt.Sprintf("batching.count: 1 is Benthos' policy for no batching, so the output applies its default "+
			"one, %d messages or %s, whichever comes first (set keep_input_batches: true to write each batch as the "+
			"input made it)", DefaultBatchCount, DefaultBatchPeriod)
	case count >= 1 && count <= 10:
		return fmt.Sprintf("batching.count: %d makes a batch, and so a data file and mostly a snapshot, of every %d "+
			"message(s) at most: a lake table then fills with small files and snapshots that compaction and expiry "+
			"must clean up; raise the count and keep a period (without a batching setting the output batches %d "+
			"messages or %s, whichever comes first)", count, count, DefaultBatchCount, DefaultBatchPeriod)
	}
	return ""
}

// outputMetrics are the output's own metrics (besides Benthos' output_*).
type outputMetrics struct {
	rowsWritten, bytesWritten, filesWritten *service.MetricCounter
	commits, commitRetries, commitFailures  *service.MetricCounter
	rowsRejected                            *service.MetricCounter
	messagesReplayed                        *service.MetricCounter
	commitLatency                           *service.MetricTimer
	lastSnapshotID                          *service.MetricGauge
	maintenance                             *maintenanceMetrics
	table                                   *tableMetrics // nil without maintenance.table_metrics
}

func newOutputMetrics(m *service.Metrics, maint Maintenance) *outputMetrics {
	om := &outputMetrics{
		rowsWritten:      m.NewCounter("paimon_rows_written"),
		bytesWritten:     m.NewCounter("paimon_bytes_written"),
		filesWritten:     m.NewCounter("paimon_files_written"),
		commits:          m.NewCounter("paimon_commits"),
		commitRetries:    m.NewCounter("paimon_commit_retries"),
		commitFailures:   m.NewCounter("paimon_commit_failures"),
		rowsRejected:     m.NewCounter("paimon_rows_rejected"),
		messagesReplayed: m.NewCounter("paimon_messages_replayed"),
		commitLatency:    m.NewTimer("paimon_commit_latency_ns"),
		lastSnapshotID:   m.NewGauge("paimon_last_snapshot_id"),
		maintenance: &maintenanceMetrics{
			snapshotsExpired:  m.NewCounter("paimon_snapshots_expired"),
			partitionsExpired: m.NewCounter("paimon_partitions_expired"),
			compactions:       m.NewCounter("paimon_compactions"),
			compactedFiles:    m.NewCounter("paimon_compaction_files_rewritten"),
			compactedBytes:    m.NewCounter("paimon_compaction_bytes_rewritten"),
			compactOut:        m.NewCounter("paimon_compaction_files_written"),
			failures:          m.NewCounter("paimon_maintenance_failures"),
		},
	}
	if maint.TableMetrics {
		om.table = newTableMetrics(m, maint.PartitionMetricsLimit)
	}
	return om
}

// paimonOutput is the BatchOutput. Connect opens the warehouse and, for a
// table named in the config, opens (or creates) it and starts its
// committer and maintenance goroutines; with an interpolated table or
// database each table's sink is opened when its first message arrives and
// closed when idle. Close stops them all. WriteBatch runs concurrently up
// to max_in_flight times.
type paimonOutput struct {
	conf Config
	opts options
	log  *service.Logger
	met  *outputMetrics

	res *service.Resources

	mu      sync.Mutex
	cat     *lakecore.Catalog // nil until Connect succeeds
	closed  bool
	backoff retry.Backoff // of Connect
	// guard is taken at the first Connect, to remove the local warehouse
	// directory it created when the output then fails for good; guarded
	// by mu.
	guard *config.DirGuard
	// failed is set when opening a table failed for good (at Connect, or
	// for a table named per message at its first message) and the stream
	// is being stopped; guarded by mu.
	failed bool
	// sinks are the tables being written, by database and table name;
	// guarded by mu. Each is opened once: opening marks it pending so that
	// concurrent batches wait for it rather than open it twice.
	sinks map[tableName]*sinkSlot
}

// tableName names a table of the warehouse.
type tableName struct{ database, table string }

// sinkSlot holds a table's sink once open; ready is closed when the open
// attempt ends (sink or err set).
type sinkSlot struct {
	ready chan struct{}
	sink  *tableSink
	err   error
}

func newOutput(c Config, mgr *service.Resources, o options) *paimonOutput {
	return &paimonOutput{conf: c, opts: o, res: mgr, log: mgr.Logger(), met: newOutputMetrics(mgr.Metrics(), c.Maintenance),
		sinks: map[tableName]*sinkSlot{}}
}

// Connect opens the warehouse and, unless the table is named per message,
// the table: it creates it if create_table.enabled and it does not exist
// (another writer creating it first is fine), checks the configured schema
// against the table's, finds where this commit user's identifiers
// continue and starts the committer. Every error says what to fix.
//
// An error retrying cannot fix (lakecore.IsPermanent: the table is missing
// and create_table is off, the table does not match create_table, the
// bucket is missing, access is denied; or a setting that does not fit the
// table) stops the stream through internal/fatal: the binary exits
// non-zero with it, and a local warehouse directory that Connect created
// is removed again if it is empty. Any other error is retried by Benthos
// after the wait Connect asks for (retry.Backoff: 500ms, doubling with
// each failure in a row, at most 30s), which the message states.
func (o *paimonOutput) Connect(ctx context.Context) error {
	o.mu.Lock()
	if o.guard == nil {
		o.guard = config.GuardWarehouse(o.conf.Table)
	}
	o.mu.Unlock()
	err := o.connect(ctx)
	if err == nil {
		o.backoff.Reset()
		return nil
	}
	if errors.Is(err, errCommitterClosed) {
		return err
	}
	if permanent(err) {
		// Connect succeeds into a failed state: Benthos, which stops the
		// stream in order, waits for the batches in flight to be answered,
		// and a writer stuck in Connect would answer none until the
		// shutdown timeout. WriteBatch rejects them instead.
		if o.stop(err) {
			return nil
		}
		return retry.Permanent(fmt.Errorf("%w (retrying cannot fix this)", err))
	}
	return o.backoff.Transient(err)
}

// permanent reports whether err, from opening a table, is one retrying
// cannot fix: lakecore.IsPermanent's, a table that does not match
// create_table, or a setting of the output that does not fit the table.
func permanent(err error) bool {
	return lakecore.IsPermanent(err) || errors.Is(err, ErrSchemaMismatch) || errors.Is(err, errMisconfigured)
}

// stop ends the stream because of err, which retrying cannot fix: it puts
// the output in a failed state (WriteBatch answers errStopped), removes the
// local warehouse directory Connect created if it is still empty, and
// reports err through internal/fatal, once: the errors that concurrent
// batches meet after the first are not reported. It returns false, and
// does nothing, when no fatal handler is installed (a StreamBuilder
// without one): the caller then keeps failing with err.
func (o *paimonOutput) stop(err error) bool {
	if !fatal.Installed(o.res) {
		return false
	}
	o.mu.Lock()
	first := !o.failed
	o.failed = true
	guard := o.guard
	o.mu.Unlock()
	if first {
		guard.RemoveEmpty()
		fatal.Report(o.res, err) // logs it once and stops the stream
	}
	return true
}

// errStopped answers WriteBatch once Connect has failed for good and the
// stream is being stopped.
var errStopped = errors.New("the paimon output stopped after an error that retrying cannot fix (logged when it met it)")

// errMisconfigured is wrapped by Connect errors about a setting of the
// output that does not fit the table it found (max_in_flight above 1 for a
// primary-key table): a permanent error, like lakecore.IsPermanent's.
var errMisconfigured = errors.New("the output's configuration does not fit the table")

// connect is Connect without the classification of its errors.
func (o *paimonOutput) connect(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errCommitterClosed
	}
	if o.cat != nil || o.failed {
		return nil
	}
	fio, err := o.openFileIO(ctx)
	if err != nil {
		return err
	}
	cat := lakecore.NewCatalog(fio)
	if o.conf.Route == nil {
		t := o.conf.Table
		k, err := openSink(ctx, cat, o.conf, o.conf.CreateTable, o.opts, o.log, o.met)
		if err != nil {
			return err
		}
		slot := &sinkSlot{ready: make(chan struct{}), sink: k}
		close(slot.ready)
		o.sinks[tableName{t.Database, t.Table}] = slot
	}
	o.cat = cat
	return nil
}

// openFileIO opens the warehouse storage.
func (o *paimonOutput) openFileIO(ctx context.Context) (storage.FileIO, error) {
	t := o.conf.Table
	if o.opts.openFileIO != nil {
		fio, err := o.opts.openFileIO(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("open warehouse %s: %w", t.Warehouse, err)
		}
		return fio, nil
	}
	cat, err := lakecore.OpenCatalog(ctx, t.Warehouse, t.S3)
	if err != nil {
		return nil, err
	}
	return cat.FileIO(), nil
}

// staticSink returns the sink of the configured table (nil before Connect
// or with a routed table).
func (o *paimonOutput) staticSink() *tableSink {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := o.conf.Table
	if slot := o.sinks[tableName{t.Database, t.Table}]; slot != nil && o.conf.Route == nil {
		return slot.sink
	}
	return nil
}

// WriteBatch converts the messages into rows, writes them as data files of
// the batch's own writer and waits until the committer has committed them
// in a snapshot; with a routed table, the messages of each table go to
// that table's sink, one commit per table, and the batch is answered once
// every table's commit is done. A message that cannot become a row fails
// alone (a service.BatchError naming it and its field); the others are
// committed. Any other failure fails the whole batch (for a routed table,
// the messages of that table), which Benthos then delivers again; its data
// files are deleted when nothing of it can have been committed.
func (o *paimonOutput) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	o.mu.Lock()
	connected, stopped := o.cat != nil, o.failed
	o.mu.Unlock()
	if stopped {
		return errStopped
	}
	if !connected {
		return service.ErrNotConnected
	}
	msgErrs := make([]error, len(batch))
	what := "table " + o.conf.Table.String()
	if o.conf.Route == nil {
		errs, err := o.staticSink().write(ctx, batch)
		if err != nil {
			return err
		}
		copy(msgErrs, errs)
	} else {
		if err := o.writeRouted(ctx, batch, msgErrs); err != nil {
			return err
		}
		what = "their tables"
	}
	failed := 0
	var first error
	for _, e := range msgErrs {
		if e != nil {
			if first == nil {
				first = e
			}
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	others := " (the others were committed)"
	if failed == len(batch) {
		others = ""
	}
	bErr := service.NewBatchError(batch, fmt.Errorf("%d of %d messages cannot be written to %s%s; the first: %w",
		failed, len(batch), what, others, first))
	for i, e := range msgErrs {
		if e != nil {
			bErr.Failed(i, e)
		}
	}
	return bErr
}

// ParseRowKind reads a row kind as row_kind and the operation metadata
// give it: +I, -U, +U or -D; insert, read, create, update, update_after,
// update_before or delete (any case); empty is +I.
func ParseRowKind(s string) (kv.RowKind, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		// Most messages: no row_kind and no operation metadata.
		return kv.Insert, nil
	}
	// Compared in place, without an error or a case-converted copy: this
	// runs for every message of a CDC stream.
	for _, n := range rowKindNames {
		if strings.EqualFold(s, n.name) {
			return n.kind, nil
		}
	}
	return 0, fmt.Errorf("row kind %q is none of +I, -U, +U, -D, insert, read, update, update_before, update_after, delete, truncate", s)
}

// rowKindNames are the names ParseRowKind takes (any case), the most
// common first.
var rowKindNames = [...]struct {
	name string
	kind kv.RowKind
}{
	{"update", kv.UpdateAfter}, {"insert", kv.Insert}, {"delete", kv.Delete}, {"read", kv.Insert},
	{"+I", kv.Insert}, {"-U", kv.UpdateBefore}, {"+U", kv.UpdateAfter}, {"-D", kv.Delete},
	{"create", kv.Insert}, {"c", kv.Insert}, {"r", kv.Insert},
	{"update_after", kv.UpdateAfter}, {"u", kv.UpdateAfter},
	{"update_before", kv.UpdateBefore}, {"d", kv.Delete},
}

// discard deletes what a failed batch wrote.
func discard(ctx context.Context, w interface{ Abort(context.Context) error }, fio *recordingFileIO) {
	ctx = context.WithoutCancel(ctx)
	_ = w.Abort(ctx)
	deleteFiles(ctx, fio.FileIO, fio.created())
}

// deleteFiles removes data files that no snapshot references, best
// effort: what remains is an orphan for RemoveOrphanFiles.
func deleteFiles(ctx context.Context, fio storage.FileIO, paths []string) {
	for _, p := range paths {
		_ = fio.Delete(ctx, p)
	}
}

// Close commits what is queued, or fails it when ctx ends first, and stops
// every table's committer and maintenance goroutines, waiting for them.
func (o *paimonOutput) Close(ctx context.Context) error {
	o.mu.Lock()
	o.closed = true
	slots := make([]*sinkSlot, 0, len(o.sinks))
	for _, s := range o.sinks {
		slots = append(slots, s)
	}
	o.sinks = map[tableName]*sinkSlot{}
	o.mu.Unlock()
	var errs []error
	for _, s := range slots {
		<-s.ready
		if s.sink != nil {
			errs = append(errs, s.sink.close(ctx))
		}
	}
	return errors.Join(errs...)
}

// compile-time check
var _ service.BatchOutput = (*paimonOutput)(nil)
