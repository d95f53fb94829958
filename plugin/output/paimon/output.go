package paimon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
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
			return newOutput(c, mgr, o), c.Batching, c.MaxInFlight, nil
		})
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

// paimonOutput is the BatchOutput. Connect opens (or creates) the table and
// starts the committer and maintenance goroutines, which Close stops.
// WriteBatch runs concurrently up to max_in_flight times.
type paimonOutput struct {
	conf Config
	opts options
	log  *service.Logger
	met  *outputMetrics

	mu     sync.Mutex
	conn   *connection // nil until Connect succeeds
	closed bool

	// state is the schema rows are written with and its converter; it is
	// replaced (under evolveMu) when schema evolution adds columns.
	state    atomic.Pointer[writeState]
	evolveMu sync.Mutex
}

// connection is what Connect sets up; immutable afterwards.
type connection struct {
	tbl       *lakecore.Table
	seq       *sequenceAllocator
	committer *groupCommitter
	maint     *maintainer
}

// writeState pairs a schema with the converter for its rows.
type writeState struct {
	schema *schema.TableSchema
	conv   *rowconv.Converter
	fixed  bool // fixed-bucket table: sequence numbers to keep
	// keyed marks a primary-key table; delConv converts its retracts (-U,
	// -D), which need only the primary-key columns: every other column
	// may be missing.
	keyed   bool
	delConv *rowconv.Converter
}

func newWriteState(s *schema.TableSchema, o rowconv.ConvertOptions) (*writeState, error) {
	conv, err := rowconv.NewConverter(s.Fields, o)
	if err != nil {
		return nil, err
	}
	buckets, err := s.Opts().Bucket()
	if err != nil {
		return nil, err
	}
	st := &writeState{schema: s, conv: conv, fixed: buckets > 0, keyed: len(s.PrimaryKeys) > 0}
	if st.keyed {
		fields := slices.Clone(s.Fields)
		for i, f := range fields {
			if !slices.Contains(s.PrimaryKeys, f.Name) {
				fields[i].Type = f.Type.WithNullable(true)
			}
		}
		if st.delConv, err = rowconv.NewConverter(fields, o); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func newOutput(c Config, mgr *service.Resources, o options) *paimonOutput {
	return &paimonOutput{conf: c, opts: o, log: mgr.Logger(), met: newOutputMetrics(mgr.Metrics(), c.Maintenance)}
}

// Connect opens the warehouse, creates the table if create_table.enabled
// and it does not exist (another writer creating it first is fine), checks
// the configured schema against the table's, finds where this commit
// user's identifiers continue and starts the committer. Benthos retries it
// until it succeeds, so every error says what to fix.
func (o *paimonOutput) Connect(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errCommitterClosed
	}
	if o.conn != nil {
		return nil
	}
	t := o.conf.Table
	fio, err := o.openFileIO(ctx)
	if err != nil {
		return err
	}
	cat := lakecore.NewCatalog(fio)
	tbl, err := o.openOrCreate(ctx, cat)
	if err != nil {
		return err
	}
	s := tbl.Schema()
	if err := checkSchema(o.conf.CreateTable, s); err != nil {
		return fmt.Errorf("table %s: %w", t, err)
	}
	if err := s.CheckWritable(); err != nil {
		return fmt.Errorf("table %s cannot be written: %w", t, err)
	}
	if len(s.PrimaryKeys) > 0 && o.conf.MaxInFlight > 1 {
		return fmt.Errorf("table %s has primary keys %v: set max_in_flight: 1 (it is %d), so that the changes to a key are written in order",
			t, s.PrimaryKeys, o.conf.MaxInFlight)
	}
	st, err := newWriteState(s, o.conf.Convert)
	if err != nil {
		return fmt.Errorf("table %s: %w", t, err)
	}
	latest, err := tbl.Snapshots().LatestOfUser(ctx, o.conf.CommitUser)
	if err != nil {
		return fmt.Errorf("table %s: find the last commit of user %q: %w", t, o.conf.CommitUser, err)
	}
	next := int64(1)
	if latest != nil {
		next = latest.CommitIdentifier + 1
		o.log.Infof("Continuing commit user %q of table %s after identifier %d (snapshot %d)",
			o.conf.CommitUser, t, latest.CommitIdentifier, latest.ID)
	}
	c := &connection{tbl: tbl, seq: newSequenceAllocator(tbl)}
	var onCommit func(*snapshot.Snapshot)
	if o.conf.Maintenance.active() {
		c.maint = newMaintainer(tbl, o.conf, o.log, o.met)
		onCommit = c.maint.trigger
	}
	co := commit.OptionsFromSchema(s, o.conf.CommitUser)
	co.OnRetry = func(error) { o.met.commitRetries.Incr(1) }
	c.committer = newGroupCommitter(commit.New(tbl.FileIO(), tbl.Path(), co), tbl.Snapshots(), next,
		4*o.conf.MaxInFlight+16, o.log, o.met, o.opts.progress, onCommit)
	if o.conf.SourcePosition != nil {
		if c.committer.positions, err = newPositionTracker(latest); err != nil {
			return fmt.Errorf("table %s: source positions of commit user %q: %w", t, o.conf.CommitUser, err)
		}
	}
	o.state.Store(st)
	go c.committer.run()
	if c.maint != nil {
		go c.maint.run()
	}
	o.conn = c
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

// openOrCreate opens the table, creating it first when configured to.
func (o *paimonOutput) openOrCreate(ctx context.Context, cat *lakecore.Catalog) (*lakecore.Table, error) {
	t, ct := o.conf.Table, o.conf.CreateTable
	tbl, err := cat.OpenTable(ctx, t.Database, t.Table)
	if err == nil {
		return tbl, nil
	}
	if !errors.Is(err, lakecore.ErrTableNotFound) {
		return nil, fmt.Errorf("open table %s: %w", t, err)
	}
	if !ct.Enabled {
		return nil, fmt.Errorf("table %s does not exist: create it, or set create_table.enabled with a create_table.schema", t)
	}
	tbl, err = cat.CreateTable(ctx, t.Database, t.Table, lakecore.TableSpec{
		Fields: ct.Fields, PartitionKeys: ct.PartitionKeys, PrimaryKeys: ct.PrimaryKeys, Options: ct.TableOptions(),
	})
	if errors.Is(err, lakecore.ErrTableExists) {
		// Another writer created it between our open and create: use theirs
		// (checkSchema then compares it with ours).
		if tbl, err = cat.OpenTable(ctx, t.Database, t.Table); err != nil {
			return nil, fmt.Errorf("open table %s created concurrently: %w", t, err)
		}
		return tbl, nil
	}
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", t, err)
	}
	o.log.Infof("Created table %s with %d columns, partition keys %s, bucket %d", t, len(ct.Fields), list(ct.PartitionKeys), ct.Bucket)
	return tbl, nil
}

func (o *paimonOutput) connection() *connection {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.conn
}

// WriteBatch converts the messages into rows, writes them as data files of
// the batch's own TableWriter and waits until the committer has committed
// them in a snapshot. A message that cannot become a row fails alone (a
// service.BatchError naming it and its field); the others are committed.
// Any other failure fails the whole batch, which Benthos then delivers
// again; its data files are deleted when nothing of it can have been
// committed.
func (o *paimonOutput) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	c := o.connection()
	if c == nil {
		return service.ErrNotConnected
	}
	offsets, skip, posErrs := o.sourceOffsets(batch, c.committer.positions)
	kinds, kindErrs := o.rowKinds(batch)
	st, rows, msgErrs, err := o.convert(ctx, c, batch, kinds, skip)
	if err != nil {
		return err
	}
	for i, e := range posErrs {
		if e != nil {
			msgErrs[i], rows[i] = e, nil
		}
	}
	// An append table ignores the operation metadata; a row_kind given for
	// it must say insert.
	for i, e := range kindErrs {
		if e != nil && msgErrs[i] == nil && (st.keyed || o.conf.RowKind != nil) {
			msgErrs[i], rows[i] = e, nil
		}
	}
	if !st.keyed {
		for i, k := range kinds {
			if k.IsRetract() && msgErrs[i] == nil && o.conf.RowKind != nil {
				msgErrs[i], rows[i] = fmt.Errorf("row_kind %s: table %s has no primary key, so it takes inserts only", k, o.conf.Table), nil
			}
		}
	}
	// Per-message failures, reported together as one BatchError.
	var failedIdx []int
	var failedErr []error
	fail := func(i int, err error) {
		failedIdx = append(failedIdx, i)
		failedErr = append(failedErr, err)
	}
	for i, e := range msgErrs {
		if e != nil {
			fail(i, e)
		}
	}

	var req *commitRequest
	var files []string
	if st.keyed {
		req, files, err = o.writeKeyValue(ctx, c, st, rows, kinds, msgErrs, fail)
	} else {
		req, files, err = o.write(ctx, c, st, rows, msgErrs, fail)
	}
	if len(failedIdx) > 0 {
		o.met.rowsRejected.Incr(int64(len(failedIdx)))
	}
	var positions *batchPositions
	if offsets != nil {
		positions = splitPositions(offsets, skip, failedIdx)
		// Failed messages come again: their streams' positions wait.
		c.committer.positions.fail(positions.failed)
	}
	if err != nil {
		if positions != nil {
			c.committer.positions.fail(positions.written)
		}
		return err
	}
	if req != nil { // nil: every message failed, was committed before, or an empty batch; nothing to commit
		req.positions = positions
		res := c.committer.submit(ctx, req)
		if res.err != nil {
			if res.definite {
				deleteFiles(context.WithoutCancel(ctx), c.tbl.FileIO(), files)
			}
			if positions != nil {
				c.committer.positions.fail(positions.written)
			}
			return res.err
		}
	}
	if len(failedIdx) == 0 {
		return nil
	}
	bErr := service.NewBatchError(batch, fmt.Errorf("%d of %d messages cannot be written to table %s (the others were committed); the first: %w",
		len(failedIdx), len(batch), o.conf.Table, failedErr[0]))
	for k, i := range failedIdx {
		bErr.Failed(i, failedErr[k])
	}
	return bErr
}

// convert turns the batch into rows of one schema. msgErrs[i] is set for
// each message that cannot be converted (rows[i] is nil then). With
// schema_evolution, new top-level fields add columns first and the batch
// is converted again for the new schema. A returned error (storage
// failing while adding columns) fails the whole batch.
func (o *paimonOutput) convert(ctx context.Context, c *connection, batch service.MessageBatch, kinds []kv.RowKind, skip []bool) (*writeState, [][]any, []error, error) {
	st := o.state.Load()
	rows := make([][]any, len(batch))
	msgErrs := make([]error, len(batch))
	var newCols []rowconv.NewColumn
	var evolving []int
	for i, msg := range batch {
		if skip != nil && skip[i] {
			continue
		}
		row, added, err := st.converter(kinds[i]).ConvertMessage(msg)
		switch {
		case err != nil:
			msgErrs[i] = err
		case len(added) > 0:
			newCols = append(newCols, added...)
			evolving = append(evolving, i)
		default:
			rows[i] = row
		}
	}
	if len(evolving) == 0 {
		return st, rows, msgErrs, nil
	}
	next, err := o.evolve(ctx, c, st, newCols)
	if err != nil {
		if !errors.Is(err, schema.ErrInvalidSchema) {
			return nil, nil, nil, err
		}
		for _, i := range evolving {
			msgErrs[i] = err
		}
		return st, rows, msgErrs, nil
	}
	// Rows must match the schema of the batch's writer: convert again.
	for i, msg := range batch {
		if msgErrs[i] != nil || (skip != nil && skip[i]) {
			continue
		}
		row, added, err := next.converter(kinds[i]).ConvertMessage(msg)
		switch {
		case err != nil:
			msgErrs[i] = err
		case len(added) > 0:
			msgErrs[i] = &rowconv.ConvertError{Path: added[0].Name,
				Msg: "not a column of the table, and adding it as " + added[0].Type.String() + " did not take effect",
				Err: rowconv.ErrUnknownField}
			rows[i] = nil
		default:
			rows[i] = row
		}
	}
	return next, rows, msgErrs, nil
}

// evolve adds the new columns to the table, one evolution at a time in this
// process; other writers agree through the schema files (AddColumns
// accepts a concurrent identical change). The table's latest schema is
// read first, so columns another writer added meanwhile are taken as they
// are rather than added again with a possibly different type.
func (o *paimonOutput) evolve(ctx context.Context, c *connection, seen *writeState, cols []rowconv.NewColumn) (*writeState, error) {
	o.evolveMu.Lock()
	defer o.evolveMu.Unlock()
	cur := o.state.Load()
	if err := c.tbl.Refresh(ctx); err != nil {
		return nil, err
	}
	s := c.tbl.Schema()
	var add []types.DataField
	seenName := map[string]bool{}
	for _, col := range cols {
		if seenName[col.Name] || types.FieldByName(s.Fields, col.Name) >= 0 {
			continue
		}
		seenName[col.Name] = true
		add = append(add, types.DataField{Name: col.Name, Type: col.Type})
	}
	if len(add) > 0 {
		var err error
		if s, err = c.tbl.AddColumns(ctx, add); err != nil {
			return nil, err
		}
		names := make([]string, len(add))
		for i, f := range add {
			names[i] = f.Name + " " + f.Type.String()
		}
		o.log.Infof("Schema evolution: added columns %v to table %s (schema-%d)", names, o.conf.Table, s.ID)
	}
	if cur.schema.ID >= s.ID {
		return cur, nil // nothing new, or a concurrent batch got further
	}
	if err := s.CheckWritable(); err != nil {
		return nil, fmt.Errorf("table %s changed to schema-%d, which cannot be written: %w", o.conf.Table, s.ID, err)
	}
	next, err := newWriteState(s, o.conf.Convert)
	if err != nil {
		return nil, err
	}
	o.state.Store(next)
	if seen.schema.ID != s.ID && len(add) == 0 {
		o.log.Infof("Table %s has a new schema-%d with columns added by another writer", o.conf.Table, s.ID)
	}
	return next, nil
}

// write writes the converted rows with a TableWriter of their own and
// prepares them for the commit. Rows the writer refuses (a partition value
// that cannot be a directory name, ...) fail alone through fail. It
// returns nil when nothing was written, else the request for the committer
// and the paths of the data files written.
func (o *paimonOutput) write(ctx context.Context, c *connection, st *writeState, rows [][]any, msgErrs []error,
	fail func(int, error)) (*commitRequest, []string, error) {
	fio := &recordingFileIO{FileIO: c.tbl.FileIO()}
	var restore write.SequenceRestorer // only fixed-bucket tables number their rows
	if st.fixed {
		c.seq.writeMu.Lock()
		defer c.seq.writeMu.Unlock()
		restore = c.seq.restorer()
	}
	w, err := write.NewTableWriter(fio, c.tbl.Path(), st.schema, write.OptionsFromSchema(st.schema), restore)
	if err != nil {
		return nil, nil, fmt.Errorf("write to table %s: %w", o.conf.Table, err)
	}
	written := 0
	for i, row := range rows {
		if msgErrs[i] != nil || row == nil {
			continue
		}
		if err := w.Write(ctx, row); err != nil {
			if errors.Is(err, write.ErrInvalidRow) {
				fail(i, err)
				continue
			}
			o.discard(ctx, w, fio)
			return nil, nil, fmt.Errorf("write to table %s: %w", o.conf.Table, err)
		}
		written++
	}
	if written == 0 {
		o.discard(ctx, w, fio)
		return nil, nil, nil
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		o.discard(ctx, w, fio)
		return nil, nil, fmt.Errorf("write to table %s: %w", o.conf.Table, err)
	}
	if st.fixed {
		c.seq.record(msgs)
	}
	return newCommitRequest(msgs), fio.created(), nil
}

// messageOffset is a message's place in its source (source_position).
type messageOffset struct {
	stream string
	offset sourceOffset // nil: the message has no position
}

// sourceOffsets reads every message's source position. skip[i] is set
// for a message committed before (it is acknowledged without being
// written), errs[i] for one whose position cannot be read. All three are
// nil without source_position.
func (o *paimonOutput) sourceOffsets(batch service.MessageBatch, tracker *positionTracker) ([]messageOffset, []bool, []error) {
	sp := o.conf.SourcePosition
	if sp == nil || tracker == nil {
		return nil, nil, nil
	}
	offsets := make([]messageOffset, len(batch))
	skip := make([]bool, len(batch))
	errs := make([]error, len(batch))
	skipped := 0
	for i := range batch {
		text, err := batch.TryInterpolatedString(i, sp.Offset)
		if err != nil {
			errs[i] = fmt.Errorf("source_position.offset: %w", err)
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		off, err := parseOffset(text)
		if err != nil {
			errs[i] = fmt.Errorf("source_position.offset: %w", err)
			continue
		}
		stream, err := batch.TryInterpolatedString(i, sp.Stream)
		if err != nil {
			errs[i] = fmt.Errorf("source_position.stream: %w", err)
			continue
		}
		offsets[i] = messageOffset{stream: stream, offset: off}
		if tracker.covered(stream, off) {
			skip[i] = true
			skipped++
		}
	}
	if skipped > 0 {
		o.met.messagesReplayed.Incr(int64(skipped))
		o.log.Debugf("%d of %d messages were committed before (source_position) and are acknowledged without being written", skipped, len(batch))
	}
	return offsets, skip, errs
}

// splitPositions sorts the positions of a batch's messages into those its
// commit writes and those that failed (failed are indexes into offsets).
func splitPositions(offsets []messageOffset, skip []bool, failed []int) *batchPositions {
	bp := &batchPositions{}
	isFailed := make(map[int]bool, len(failed))
	for _, i := range failed {
		isFailed[i] = true
	}
	for i, m := range offsets {
		switch {
		case m.offset == nil || skip[i]:
		case isFailed[i]:
			bp.add(&bp.failed, m.stream, m.offset)
		default:
			bp.add(&bp.written, m.stream, m.offset)
		}
	}
	return bp
}

// converter returns the converter of a message of row kind k.
func (st *writeState) converter(k kv.RowKind) *rowconv.Converter {
	if st.keyed && k.IsRetract() {
		return st.delConv
	}
	return st.conv
}

// rowKinds returns the row kind of every message (row_kind, or the
// operation metadata; +I without either) and, per message, the error of a
// row kind that does not parse.
func (o *paimonOutput) rowKinds(batch service.MessageBatch) ([]kv.RowKind, []error) {
	kinds := make([]kv.RowKind, len(batch))
	var errs []error
	for i, msg := range batch {
		var text string
		if o.conf.RowKind != nil {
			v, err := batch.TryInterpolatedString(i, o.conf.RowKind)
			if err != nil {
				if errs == nil {
					errs = make([]error, len(batch))
				}
				errs[i] = fmt.Errorf("row_kind: %w", err)
				continue
			}
			text = v
		} else if v, ok := msg.MetaGetMut("operation"); ok {
			text = fmt.Sprint(v)
		}
		k, err := ParseRowKind(text)
		if err != nil {
			if errs == nil {
				errs = make([]error, len(batch))
			}
			errs[i] = err
			continue
		}
		kinds[i] = k
	}
	if errs == nil {
		errs = make([]error, len(batch))
	}
	return kinds, errs
}

// ParseRowKind reads a row kind as row_kind and the operation metadata
// give it: +I, -U, +U or -D; insert, read, create, update, update_after,
// update_before or delete (any case); empty is +I.
func ParseRowKind(s string) (kv.RowKind, error) {
	s = strings.TrimSpace(s)
	if k, err := kv.ParseRowKind(strings.ToUpper(s)); err == nil {
		return k, nil
	}
	switch strings.ToLower(s) {
	case "", "insert", "read", "create", "c", "r":
		return kv.Insert, nil
	case "update", "update_after", "u":
		return kv.UpdateAfter, nil
	case "update_before":
		return kv.UpdateBefore, nil
	case "delete", "d":
		return kv.Delete, nil
	}
	return 0, fmt.Errorf("row kind %q is none of +I, -U, +U, -D, insert, read, update, update_before, update_after, delete", s)
}

// writeKeyValue is write for a primary-key table: the converted rows with
// their row kinds through a KeyValueWriter of the batch's own. Batches
// are encoded one at a time and number their changes after everything
// this process handed out (sequenceAllocator); compaction is left to the
// maintenance goroutine (maintenance.compaction), since batches committed
// together must not compact the same files.
func (o *paimonOutput) writeKeyValue(ctx context.Context, c *connection, st *writeState, rows [][]any, kinds []kv.RowKind, msgErrs []error,
	fail func(int, error)) (*commitRequest, []string, error) {
	fio := &recordingFileIO{FileIO: c.tbl.FileIO()}
	c.seq.writeMu.Lock()
	defer c.seq.writeMu.Unlock()
	// No file restorer: without compaction the writer needs no levels, and
	// the sequence floor already knows the committed numbers (read once per
	// snapshot, not once per batch).
	w, err := write.NewKeyValueWriter(fio, c.tbl.Path(), st.schema, write.OptionsFromSchema(st.schema), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("write to table %s: %w", o.conf.Table, err)
	}
	w.DisableCompaction()
	w.SetSequenceFloor(c.seq.keyValueRestorer())
	written := 0
	for i, row := range rows {
		if msgErrs[i] != nil || row == nil {
			continue
		}
		if err := w.Write(ctx, kinds[i], row); err != nil {
			if errors.Is(err, write.ErrInvalidRow) {
				fail(i, err)
				continue
			}
			o.discard(ctx, w, fio)
			return nil, nil, fmt.Errorf("write to table %s: %w", o.conf.Table, err)
		}
		written++
	}
	if written == 0 {
		o.discard(ctx, w, fio)
		return nil, nil, nil
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		o.discard(ctx, w, fio)
		return nil, nil, fmt.Errorf("write to table %s: %w", o.conf.Table, err)
	}
	c.seq.record(msgs)
	return newCommitRequest(msgs), fio.created(), nil
}

// newCommitRequest is the committer's request for msgs, with the rows,
// files and bytes they add.
func newCommitRequest(msgs []commit.Message) *commitRequest {
	req := &commitRequest{msgs: msgs}
	for _, m := range msgs {
		for _, f := range m.NewFiles {
			req.rows += f.RowCount
			req.bytes += f.FileSize
			req.files++
		}
	}
	return req
}

// discard deletes what a failed batch wrote.
func (o *paimonOutput) discard(ctx context.Context, w interface{ Abort(context.Context) error }, fio *recordingFileIO) {
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
// the committer and maintenance goroutines, waiting for both.
func (o *paimonOutput) Close(ctx context.Context) error {
	o.mu.Lock()
	o.closed = true
	c := o.conn
	o.mu.Unlock()
	if c == nil {
		return nil
	}
	err := c.committer.close(ctx)
	if c.maint != nil {
		c.maint.close()
	}
	return err
}

// compile-time check
var _ service.BatchOutput = (*paimonOutput)(nil)
