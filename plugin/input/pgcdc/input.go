package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/fatal"
	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

// Name is the component name.
const Name = "pg_cdc"

func init() {
	if err := Register(service.GlobalEnvironment()); err != nil {
		panic(fmt.Sprintf("register the %s input: %v", Name, err))
	}
}

// Register registers the input in env, wrapped with
// service.AutoRetryNacksBatchedToggled (auto_replay_nacks).
func Register(env *service.Environment) error {
	return env.RegisterBatchInput(Name, ConfigSpec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
		c, err := ParseConfig(conf)
		if err != nil {
			return nil, err
		}
		return service.AutoRetryNacksBatchedToggled(conf, New(c, mgr))
	})
}

// Metric names (beside Benthos' input_received and input_latency_ns).
const (
	// MetricRows counts the messages emitted, by operation (read, insert,
	// update, delete, truncate).
	MetricRows = "pg_cdc_rows"
	// MetricTransactions counts the transactions decoded from the stream.
	MetricTransactions = "pg_cdc_transactions"
	// MetricInFlight is the number of transactions decoded and not yet
	// fully acknowledged.
	MetricInFlight = "pg_cdc_transactions_in_flight"
	// MetricLagBytes is the server's WAL position (last keepalive) minus the
	// position confirmed to the slot, in bytes.
	MetricLagBytes = "pg_cdc_replication_lag_bytes"
	// MetricConfirmedLSN is the position last confirmed to the slot.
	MetricConfirmedLSN = "pg_cdc_confirmed_lsn"
	// MetricSnapshotChunks and MetricSnapshotChunksDone are the snapshot's
	// progress: chunks planned, chunks read.
	MetricSnapshotChunks     = "pg_cdc_snapshot_chunks"
	MetricSnapshotChunksDone = "pg_cdc_snapshot_chunks_done"
	// MetricRelationChanges counts Relation messages that changed a
	// captured table's columns or types.
	MetricRelationChanges = "pg_cdc_relation_changes"
	// MetricTruncatesIgnored counts TRUNCATEs skipped by truncate: ignore.
	MetricTruncatesIgnored = "pg_cdc_truncates_ignored"
	// MetricSlotRetained is the WAL the slot holds on the server
	// (pg_current_wal_lsn() - restart_lsn), in bytes.
	MetricSlotRetained = "pg_cdc_slot_retained_bytes"
	// MetricSlotSafeWAL is the slot's safe_wal_size: bytes of WAL that can
	// still be written before it is invalidated (-1 without a cap).
	MetricSlotSafeWAL = "pg_cdc_slot_safe_wal_bytes"
	// MetricStreamBuffered is the size of the changes of streamed
	// transactions in progress that the input holds, in memory and in
	// spill files (stream_in_progress).
	MetricStreamBuffered = "pg_cdc_stream_buffered_bytes"
)

type inputMetrics struct {
	rows                       *service.MetricCounter
	txns, relChanges, truncs   *service.MetricCounter
	inFlight, lag, confirmed   *service.MetricGauge
	snapChunks, snapChunksDone *service.MetricGauge
	slotRetained, slotSafe     *service.MetricGauge
	streamBuffered             *service.MetricGauge
}

func newInputMetrics(m *service.Metrics) *inputMetrics {
	return &inputMetrics{
		rows:           m.NewCounter(MetricRows, "operation"),
		txns:           m.NewCounter(MetricTransactions),
		relChanges:     m.NewCounter(MetricRelationChanges),
		truncs:         m.NewCounter(MetricTruncatesIgnored),
		inFlight:       m.NewGauge(MetricInFlight),
		lag:            m.NewGauge(MetricLagBytes),
		confirmed:      m.NewGauge(MetricConfirmedLSN),
		snapChunks:     m.NewGauge(MetricSnapshotChunks),
		snapChunksDone: m.NewGauge(MetricSnapshotChunksDone),
		slotRetained:   m.NewGauge(MetricSlotRetained),
		slotSafe:       m.NewGauge(MetricSlotSafeWAL),
		streamBuffered: m.NewGauge(MetricStreamBuffered),
	}
}

// Input is the pg_cdc batch input. Benthos calls Connect (retried with
// backoff until it succeeds), ReadBatch in a loop without waiting for
// acknowledgements, and Close once the pending acks are resolved.
//
// Connect checks the server, the tables, the publication and the slot, and
// starts a session: a goroutine that reads the snapshot (if one is due),
// waits until all of it is acknowledged, and then streams. A session that
// fails (connection lost, a nack with auto_replay_nacks off) ends;
// ReadBatch reports the error once and then ErrNotConnected, and the next
// Connect starts a new session from the slot's confirmed position.
//
// An error retrying cannot fix (isPermanent: a failed check of Connect, an
// authentication failure, missing privileges, an invalidated slot, a
// TRUNCATE under truncate: error) ends the input and stops the stream
// through internal/fatal, so that the binary exits 1 with it.
type Input struct {
	conf    Config
	res     *service.Resources
	log     *service.Logger
	m       *inputMetrics
	domains *domainResolver

	backoff retry.Backoff // of Connect

	mu   sync.Mutex
	sess *session
	// stash is a result read ahead while combining batches; it belongs to
	// sess (ReadBatch runs one at a time, but a hard stop can call Close
	// while a ReadBatch is still in progress, hence mu).
	stash *readResult
	ended bool
	// failure is the error that ended the last failed session (tests and
	// logs; Benthos sees ErrNotConnected).
	failure error

	// spill is the directory of the spill files of streamed transactions,
	// made on first use and removed by Close.
	spillMu sync.Mutex
	spill   *lookupfile.Dir
}

// New returns the input for a parsed configuration; nothing is opened
// until Connect.
func New(c Config, mgr *service.Resources) *Input {
	return &Input{conf: c, res: mgr, log: mgr.Logger(), m: newInputMetrics(mgr.Metrics()), domains: newDomainResolver()}
}

// readResult is what a session hands to ReadBatch: a batch with its ack,
// the session's final error, or the end of input (initial_only).
type readResult struct {
	batch  service.MessageBatch
	acks   []func()
	stream bool
	err    error
	end    bool
}

// session is one connection's worth of work; see Input.
type session struct {
	in        *Input
	ctx       context.Context
	cancel    context.CancelFunc
	out       chan readResult
	done      chan struct{}
	closing   chan struct{} // closed by close: nobody reads out any more
	closeOnce sync.Once
	nackErr   atomic.Pointer[error]

	qmu    sync.Mutex // qconn is shared by the run and heartbeat goroutines
	qconn  *pgx.Conn
	repl   *pgconn.PgConn // nil for initial_only
	tables map[TableName]*table
	plan   slotPlan
	// streaming: the stream uses pgoutput protocol 2 and the server
	// streams large transactions in progress (stream_in_progress).
	streaming bool

	tracker *txnTracker
}

// Connect prepares a session and starts it. Errors say what to change.
//
// An error retrying cannot fix (isPermanent) ends the input and stops the
// stream through internal/fatal; without a fatal.Handler it is retried
// every retry.Max. Other errors (a refused connection, a server restarting)
// are retried after retry.Backoff's waits: 500ms, doubling with each
// failure in a row, at most 30s. Benthos logs each of them.
func (in *Input) Connect(ctx context.Context) error {
	err := in.connect(ctx)
	switch {
	case err == nil:
		in.backoff.Reset()
		return nil
	case errors.Is(err, service.ErrEndOfInput):
		return err
	case isPermanent(err):
		if in.stop(err) {
			return service.ErrEndOfInput
		}
		return retry.Permanent(fmt.Errorf("%w (retrying cannot fix this)", err))
	}
	return in.backoff.Transient(err)
}

// connect is Connect without the classification of its errors.
func (in *Input) connect(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.ended {
		return service.ErrEndOfInput
	}
	if in.sess != nil {
		return nil
	}
	s, err := in.prepare(ctx)
	if err != nil {
		return err
	}
	in.sess = s
	go s.main()
	return nil
}

// stop ends the input because of err, which retrying cannot fix: it logs
// err once, marks the input ended and has the stream stopped through
// internal/fatal, which stops the stream gracefully (what was delivered is
// still acknowledged). Without a fatal.Handler (a StreamBuilder that
// installed none) it does nothing and returns false: ending the input
// would look like the end of an initial_only snapshot, so the caller keeps
// failing with err.
func (in *Input) stop(err error) bool {
	if !fatal.Report(in.res, err) {
		return false
	}
	in.mu.Lock()
	in.ended = true
	in.mu.Unlock()
	return true
}

func (in *Input) prepare(ctx context.Context) (_ *session, err error) {
	c := in.conf
	qconn, err := queryConn(ctx, c.DSN)
	if err != nil {
		return nil, fmt.Errorf("pg_cdc: %w", err)
	}
	var repl *pgconn.PgConn
	defer func() {
		if err != nil {
			_ = qconn.Close(context.Background())
			if repl != nil {
				_ = repl.Close(context.Background())
			}
		}
	}()
	version, err := in.checkServer(ctx, qconn)
	if err != nil {
		return nil, fmt.Errorf("pg_cdc: %w", err)
	}
	streaming, err := streamsInProgress(c.StreamInProgress, version)
	if err != nil {
		return nil, fmt.Errorf("pg_cdc: %w", err)
	}
	var slots startSlots
	if c.Snapshot != SnapshotInitialOnly {
		if slots, err = in.readStartSlots(ctx, qconn); err != nil {
			return nil, fmt.Errorf("pg_cdc: %w", err)
		}
	}
	tables, err := in.resolveTables(ctx, qconn, in.snapshotDue(slots))
	if err != nil {
		return nil, fmt.Errorf("pg_cdc: %w", err)
	}
	s := &session{in: in, out: make(chan readResult, 4), done: make(chan struct{}), closing: make(chan struct{}), qconn: qconn, tables: map[TableName]*table{},
		streaming: streaming}
	for _, t := range tables {
		s.tables[t.name] = t
	}
	if c.Snapshot == SnapshotInitialOnly {
		s.plan.snapshot = true
	} else {
		if err := in.ensurePublication(ctx, qconn, tables); err != nil {
			return nil, fmt.Errorf("pg_cdc: %w", err)
		}
		if repl, err = replicationConn(ctx, c.DSN); err != nil {
			return nil, fmt.Errorf("pg_cdc: %w", err)
		}
		if s.plan, err = in.ensureSlot(ctx, qconn, repl, slots); err != nil {
			return nil, fmt.Errorf("pg_cdc: %w", err)
		}
		s.repl = repl
	}
	s.tracker = newTxnTracker(s.plan.start)
	in.m.confirmed.Set(int64(s.plan.start))
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// main runs the session and hands its outcome to ReadBatch.
func (s *session) main() {
	defer close(s.done)
	err := s.run(s.ctx)
	if p := s.nackErr.Load(); p != nil {
		err = *p
	}
	r := readResult{err: err}
	if err == nil {
		r = readResult{end: true}
	}
	if errors.Is(err, context.Canceled) && s.ctx.Err() != nil && s.nackErr.Load() == nil {
		return // closed
	}
	select {
	case s.out <- r:
	case <-s.closing:
	}
}

// run is the session's work: the snapshot if due, then the stream.
func (s *session) run(ctx context.Context) error {
	c := s.in.conf
	if s.plan.snapshot {
		if err := s.snapshot(ctx); err != nil {
			return err
		}
		if c.Snapshot == SnapshotInitialOnly {
			return nil
		}
		if !c.TemporarySlot {
			s.qmu.Lock()
			err := dropMarker(ctx, s.qconn, c.SlotName)
			s.qmu.Unlock()
			if err != nil {
				return fmt.Errorf("pg_cdc: drop snapshot marker slot %s: %w", markerName(c.SlotName), err)
			}
		}
		s.in.log.Infof("pg_cdc: snapshot delivered; streaming slot %s from %s", c.SlotName, s.plan.start)
	}
	return s.stream(ctx)
}

// fail ends the session because of a nack with auto_replay_nacks off: the
// nacked transaction must not be confirmed, so the stream restarts from the
// slot (§7.5 "Nacks").
func (s *session) fail(err error) {
	e := fmt.Errorf("pg_cdc: a batch was rejected downstream and auto_replay_nacks is off; restarting from the slot's confirmed position so that nothing is lost: %w", err)
	s.nackErr.CompareAndSwap(nil, &e)
	s.cancel()
}

// close stops the session and closes its connections; safe to call more
// than once (ReadBatch after a failure, and Close on a hard stop, may both).
func (s *session) close() {
	s.closeOnce.Do(s.doClose)
}

func (s *session) doClose() {
	s.cancel()
	close(s.closing)
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.repl != nil {
		_ = s.repl.Close(ctx)
	}
	s.qmu.Lock()
	_ = s.qconn.Close(ctx)
	s.qmu.Unlock()
}

// ReadBatch returns the next batch: whole transactions (several small ones
// combined up to max_batch_rows; one larger than max_transaction_rows
// split), or snapshot rows. The AckFunc confirms them to the tracker; a
// nack (seen only with auto_replay_nacks off) restarts the session without
// confirming them.
func (in *Input) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	in.mu.Lock()
	s, ended, stash := in.sess, in.ended, in.stash
	in.stash = nil
	in.mu.Unlock()
	if ended {
		return nil, nil, service.ErrEndOfInput
	}
	if s == nil {
		return nil, nil, service.ErrNotConnected
	}
	var r readResult
	if stash != nil {
		r = *stash
	} else {
		select {
		case r = <-s.out:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	switch {
	case r.end:
		in.mu.Lock()
		in.ended = true
		in.mu.Unlock()
		return nil, nil, service.ErrEndOfInput
	case r.err != nil:
		in.mu.Lock()
		in.sess, in.stash, in.failure = nil, nil, r.err
		in.mu.Unlock()
		s.close()
		if isPermanent(r.err) && in.stop(r.err) {
			return nil, nil, service.ErrEndOfInput
		}
		in.log.Errorf("%v", r.err)
		return nil, nil, service.ErrNotConnected
	}
	batch, acks := r.batch, r.acks
	for r.stream && len(batch) < in.conf.MaxBatchRows {
		var next readResult
		select {
		case next = <-s.out:
		default:
		}
		if next.batch == nil && next.err == nil && !next.end {
			break
		}
		if !next.stream || next.err != nil || next.end || len(batch)+len(next.batch) > in.conf.MaxBatchRows {
			in.mu.Lock()
			if in.sess == s {
				in.stash = &next
			}
			in.mu.Unlock()
			break
		}
		batch, acks = append(batch, next.batch...), append(acks, next.acks...)
	}
	return batch, func(_ context.Context, err error) error {
		if err != nil {
			s.fail(err)
			return nil
		}
		for _, a := range acks {
			a()
		}
		return nil
	}, nil
}

// Failure returns the error that ended the last failed session, if any.
func (in *Input) Failure() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.failure
}

// Close ends the session: the stream stops after a last status update
// confirming what was acknowledged. The spill directory of streamed
// transactions is removed.
func (in *Input) Close(ctx context.Context) error {
	in.mu.Lock()
	s := in.sess
	in.sess, in.stash = nil, nil
	in.mu.Unlock()
	if s != nil {
		s.close()
	}
	in.spillMu.Lock()
	defer in.spillMu.Unlock()
	if in.spill != nil {
		err := in.spill.Close()
		in.spill = nil
		if err != nil {
			return fmt.Errorf("pg_cdc: %w", err)
		}
	}
	return nil
}

// spillDirectory returns the input's directory for the spill files of
// streamed transactions, made under stream_spill_directory on first use
// (lakecore/lookupfile.Dir: one left by a killed process is removed then).
func (in *Input) spillDirectory() (*lookupfile.Dir, error) {
	in.spillMu.Lock()
	defer in.spillMu.Unlock()
	if in.spill == nil {
		d, err := lookupfile.OpenDir(in.conf.StreamSpillDir)
		if err != nil {
			return nil, err
		}
		in.spill = d
	}
	return in.spill, nil
}
