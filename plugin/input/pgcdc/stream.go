package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// heartbeatPrefix is the logical message prefix of the input's heartbeats.
const heartbeatPrefix = "benthos_pg_cdc"

// streamState is the decoder's state while streaming: the relations seen,
// the transaction being assembled.
type streamState struct {
	s         *session
	relations map[uint32]*table // by relation id; nil value: not captured
	txn       *openTxn
	serverEnd pglogrepl.LSN // last keepalive's WAL end, for the lag metric
	nextStat  time.Time
	// Protocol 2 only (spools != nil): the streamed transactions in
	// progress, and the one whose stream segment is being received.
	spools    *spoolSet
	inSegment bool
	segXid    uint32
}

// openTxn is the transaction between Begin and Commit.
type openTxn struct {
	xid      uint32
	final    pglogrepl.LSN // commit LSN (start of the commit record), from Begin
	commitMs int64
	// xidMeta and commitMeta are xid and commitMs as metadata values,
	// boxed once per transaction.
	xidMeta, commitMeta any
	entry               *txnEntry
	msgs                service.MessageBatch
	seq                 int64
	split               bool // part of it was emitted before its commit
	// ops counts msgs by operation, added to the rows metric when they
	// are emitted: a labelled counter costs a lookup per call.
	ops opCounts
}

// opCounts counts a transaction's messages by operation.
type opCounts struct{ insert, update, delete, truncate int64 }

func (c *opCounts) add(op string) {
	switch op {
	case "insert":
		c.insert++
	case "update":
		c.update++
	case "delete":
		c.delete++
	case "truncate":
		c.truncate++
	}
}

// report adds the counts to the rows metric and resets them.
func (c *opCounts) report(rows *service.MetricCounter) {
	for _, n := range [...]struct {
		op string
		n  int64
	}{{"insert", c.insert}, {"update", c.update}, {"delete", c.delete}, {"truncate", c.truncate}} {
		if n.n > 0 {
			rows.Incr(n.n, n.op)
		}
	}
	*c = opCounts{}
}

// stream starts replication at 0/0 (the server resumes at the slot's
// confirmed_flush_lsn; starting from a stored LSN could skip transactions,
// §5.3) and decodes until ctx ends or the stream fails.
func (s *session) stream(ctx context.Context) error {
	c := s.in.conf
	args := []string{"proto_version '1'", "publication_names " + quoteLiteral(c.Publication), "messages 'true'"}
	st := &streamState{s: s, relations: map[uint32]*table{}}
	if s.streaming {
		args[0] = "proto_version '2'"
		args = append(args, "streaming 'on'")
		var err error
		if st.spools, err = newSpoolSet(s.in.spillDirectory, c.StreamMemory); err != nil {
			return fmt.Errorf("pg_cdc: %w", err)
		}
		defer func() {
			st.spools.close()
			s.in.m.streamBuffered.Set(0)
		}()
	}
	if err := pglogrepl.StartReplication(ctx, s.repl, c.SlotName, 0, pglogrepl.StartReplicationOptions{PluginArgs: args}); err != nil {
		return fmt.Errorf("pg_cdc: START_REPLICATION SLOT %s (publication %s): %w", c.SlotName, c.Publication, err)
	}
	s.in.log.Debugf("pg_cdc: streaming slot %s with pgoutput %s", c.SlotName, strings.Join(args, ", "))
	// The heartbeat and slot monitor goroutines share the catalogue
	// connection; they end, and are waited for, when the stream does.
	var helpers sync.WaitGroup
	hctx, stopHelpers := context.WithCancel(ctx)
	defer func() {
		stopHelpers()
		helpers.Wait()
	}()
	if c.HeartbeatInterval > 0 {
		helpers.Add(1)
		go func() {
			defer helpers.Done()
			s.heartbeat(hctx, c.HeartbeatInterval)
		}()
	}
	if c.SlotMonitor > 0 {
		helpers.Add(1)
		go func() {
			defer helpers.Done()
			s.monitorSlot(hctx, c.SlotMonitor)
		}()
	}
	defer func() {
		// A last status update confirms what was acknowledged up to here.
		_ = st.sendStatus()
	}()
	// One receive context per status deadline, not one per message: a
	// context per row cost about a microsecond of a change's budget.
	var recv struct {
		ctx    context.Context
		cancel context.CancelFunc
		until  time.Time
	}
	defer func() {
		if recv.cancel != nil {
			recv.cancel()
		}
	}()
	for {
		if time.Now().After(st.nextStat) {
			if err := st.sendStatus(); err != nil {
				return err
			}
		}
		if recv.cancel == nil || !recv.until.Equal(st.nextStat) {
			if recv.cancel != nil {
				recv.cancel()
			}
			recv.ctx, recv.cancel = context.WithDeadline(ctx, st.nextStat)
			recv.until = st.nextStat
		}
		raw, err := s.repl.ReceiveMessage(recv.ctx)
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("pg_cdc: replication stream: %w", err)
		}
		switch msg := raw.(type) {
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("pg_cdc: replication stream: %w", pgconn.ErrorResponseToPgError(msg))
		case *pgproto3.CopyData:
			if len(msg.Data) == 0 {
				continue
			}
			switch msg.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				k, err := pglogrepl.ParsePrimaryKeepaliveMessage(msg.Data[1:])
				if err != nil {
					return fmt.Errorf("pg_cdc: keepalive: %w", err)
				}
				st.serverEnd = max(st.serverEnd, k.ServerWALEnd)
				if st.idle() {
					s.tracker.AdvanceIdle(k.ServerWALEnd)
				}
				if k.ReplyRequested {
					if err := st.sendStatus(); err != nil {
						return err
					}
				}
			case pglogrepl.XLogDataByteID:
				x, err := pglogrepl.ParseXLogData(msg.Data[1:])
				if err != nil {
					return fmt.Errorf("pg_cdc: XLogData: %w", err)
				}
				if err := st.handle(ctx, x.WALData); err != nil {
					return err
				}
			}
		case *pgproto3.CopyDone:
			return errors.New("pg_cdc: the server ended the replication stream")
		}
	}
}

// sendStatus confirms the tracker's position as written, flushed and
// applied: never a position whose transactions are not all acknowledged
// (pglogrepl copies a zero flush position from the write position, so all
// three are set, §1.6).
func (st *streamState) sendStatus() error {
	s := st.s
	pos := s.tracker.Position()
	st.nextStat = time.Now().Add(s.in.conf.StatusInterval)
	s.in.m.confirmed.Set(int64(pos))
	s.in.m.inFlight.Set(int64(s.tracker.InFlight()))
	if st.serverEnd > pos {
		s.in.m.lag.Set(int64(st.serverEnd - pos))
	} else {
		s.in.m.lag.Set(0)
	}
	if pos == 0 {
		return nil
	}
	// With nothing in flight, ask for a keepalive: its WAL end (the
	// walsender's sent position) lets an idle slot advance within one
	// status_interval rather than wal_sender_timeout / 2.
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), s.repl, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pos, WALFlushPosition: pos, WALApplyPosition: pos,
		ReplyRequested: st.idle() && s.tracker.InFlight() == 0,
	})
	if err != nil {
		return fmt.Errorf("pg_cdc: standby status update: %w", err)
	}
	return nil
}

// emit hands r to ReadBatch, sending status updates while it waits so that
// a slow pipeline does not trip the server's wal_sender_timeout.
func (st *streamState) emit(ctx context.Context, r readResult) error {
	for {
		wait := time.Until(st.nextStat)
		timer := time.NewTimer(max(wait, 0))
		select {
		case st.s.out <- r:
			timer.Stop()
			return nil
		case <-timer.C:
			if err := st.sendStatus(); err != nil {
				return err
			}
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

// idle reports whether no transaction is open: none between Begin and
// Commit, no streamed one in progress. Only then may the slot advance to
// a position the server reports (§7.5 "Idle advance"). Moving it past the
// start of a streamed transaction in progress would be safe too (the
// server sends again every transaction committing after it), but a
// restart would then make the server collect the transaction's start
// again, on its own disk, before it streams anything.
func (st *streamState) idle() bool {
	return st.txn == nil && (st.spools == nil || !st.spools.open())
}

// handle decodes one pgoutput message.
func (st *streamState) handle(ctx context.Context, data []byte) error {
	s := st.s
	if st.spools != nil {
		if done, err := st.handleStreamed(ctx, data); done || err != nil {
			return err
		}
	}
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("pg_cdc: decode pgoutput message: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		return st.relation(m)
	case *pglogrepl.BeginMessage:
		st.begin(m.Xid, m.FinalLSN, m.CommitTime)
	case *pglogrepl.CommitMessage:
		return st.commit(ctx, m.TransactionEndLSN)
	case *pglogrepl.InsertMessage:
		t, err := st.rel(m.RelationID)
		if t == nil || err != nil {
			return err
		}
		row, _, err := st.tuple(t, m.Tuple, nil, false)
		if err != nil {
			return err
		}
		return st.add(ctx, t, "insert", row, nil, nil)
	case *pglogrepl.UpdateMessage:
		t, err := st.rel(m.RelationID)
		if t == nil || err != nil {
			return err
		}
		return st.update(ctx, t, m)
	case *pglogrepl.DeleteMessage:
		t, err := st.rel(m.RelationID)
		if t == nil || err != nil {
			return err
		}
		old, _, err := st.tuple(t, m.OldTuple, nil, true)
		if err != nil {
			return err
		}
		return st.add(ctx, t, "delete", old, old, nil)
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			t, err := st.rel(id)
			if err != nil {
				return err
			}
			if t == nil {
				continue
			}
			switch s.in.conf.Truncate {
			case TruncateIgnore:
				s.in.m.truncs.Incr(1)
				s.in.log.Warnf("pg_cdc: TRUNCATE of %s (transaction %d) ignored (truncate: ignore): downstream keeps the rows", t.name, st.xid())
				continue
			case TruncateDeleteAll:
				// In its place among the transaction's changes: rows the
				// transaction wrote before it are deleted with the rest, those
				// after it stay.
				if err := st.add(ctx, t, "truncate", map[string]any{}, nil, nil); err != nil {
					return err
				}
				continue
			}
			// The slot delivers it again after every restart: permanent.
			return permanentf("pg_cdc: TRUNCATE of %s in transaction %d: truncate is error, so the stream stops before it "+
				"(nothing after it is confirmed). Set truncate: delete_all to empty the target table too, or empty it yourself and set truncate: ignore to pass it", t.name, st.xid())
		}
	case *pglogrepl.LogicalDecodingMessage:
		// Heartbeats (ours or anyone's) outside a transaction: with
		// nothing in flight the slot may move to the message (§7.5).
		if !m.Transactional && st.idle() {
			s.tracker.AdvanceIdle(m.LSN)
		}
	}
	return nil
}

func (st *streamState) xid() uint32 {
	if st.txn == nil {
		return 0
	}
	return st.txn.xid
}

// rel returns the captured table of a relation id; nil for tables of the
// publication that are not captured.
func (st *streamState) rel(id uint32) (*table, error) {
	t, ok := st.relations[id]
	if !ok {
		return nil, fmt.Errorf("pg_cdc: change for relation %d before its Relation message", id)
	}
	if st.txn == nil {
		return nil, fmt.Errorf("pg_cdc: change for %d outside a transaction", id)
	}
	return t, nil
}

// relation caches a Relation message: the table's columns and types as of
// the next change. A change of columns or types is logged and counted; the
// messages' schema metadata follows it. A table of the captured schema
// that was not there at start is captured from here on (appeared).
func (st *streamState) relation(m *pglogrepl.RelationMessage) error {
	s := st.s
	name := TableName{Schema: m.Namespace, Name: m.RelationName}
	known, ok := s.tables[name]
	if !ok {
		var err error
		if known, err = st.appeared(m, name); err != nil {
			return err
		}
		if known == nil {
			st.relations[m.RelationID] = nil
			return nil
		}
	}
	t := &table{name: name, relID: m.RelationID, identity: identityName(m.ReplicaIdentity), pk: known.pk}
	for _, c := range m.Columns {
		s.qmu.Lock()
		oid, typmod, err := s.in.domains.resolve(s.ctx, s.qconn, c.DataType, c.TypeModifier)
		s.qmu.Unlock()
		if err != nil {
			return fmt.Errorf("pg_cdc: table %s column %s: %w", name, c.Name, err)
		}
		typ, err := typeOf(oid, typmod, s.in.conf.DecimalFallback)
		if err != nil {
			return fmt.Errorf("pg_cdc: table %s column %s: %w (decimal_fallback: error)", name, c.Name, err)
		}
		t.columns = append(t.columns, column{name: c.Name, typ: typ})
	}
	t.finish()
	if t.identity == "nothing" {
		return fmt.Errorf("pg_cdc: table %s now has REPLICA IDENTITY NOTHING: its updates and deletes cannot be captured. Run: ALTER TABLE %s REPLICA IDENTITY DEFAULT", name, name.quoted())
	}
	if ok && !sameColumns(known, t) {
		s.in.m.relChanges.Incr(1)
		s.in.log.Warnf("pg_cdc: table %s changed: columns %s (were %s)", name, describeColumns(t), describeColumns(known))
	}
	s.tables[name] = t
	st.relations[m.RelationID] = t
	return nil
}

// appeared returns the primary key of a table that a Relation message
// names in the captured schema (`schema`, not `tables`) although the input
// did not capture it at start: a table created (or renamed into the
// schema) since, whose changes a publication FOR TABLES IN SCHEMA sends.
// Every row such a table got after the slot's consistent point comes
// through the stream, so capturing it from its first change loses
// nothing; skipping it, as a table of another schema is skipped, would
// lose its rows for good, since no later snapshot takes them. Like a
// table found at start, it needs a primary key (an error retrying cannot
// fix otherwise); a partition is refused, since the publication then
// sends partitions' changes under their own names. nil, nil: not a table
// of the captured schema.
func (st *streamState) appeared(m *pglogrepl.RelationMessage, name TableName) (*table, error) {
	s := st.s
	if len(s.in.conf.Tables) > 0 || name.Schema != s.in.conf.Schema {
		return nil, nil
	}
	s.qmu.Lock()
	defer s.qmu.Unlock()
	var partition bool
	err := s.qconn.QueryRow(s.ctx, `SELECT relispartition FROM pg_class WHERE oid = $1`, m.RelationID).Scan(&partition)
	if errors.Is(err, pgx.ErrNoRows) {
		// Dropped before this replay reached it: its key is unknown.
		s.in.log.Warnf("pg_cdc: table %s of schema %s appeared after the start and no longer exists: its changes are skipped", name, name.Schema)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pg_cdc: look up table %s, which appeared in schema %s: %w", name, name.Schema, err)
	}
	if partition {
		return nil, permanentf("pg_cdc: publication %s sends the changes of partition %s under its own name; run: ALTER PUBLICATION %s SET (publish_via_partition_root = true)",
			s.in.conf.Publication, name, quoteIdent(s.in.conf.Publication))
	}
	pk, err := primaryKey(s.ctx, s.qconn, m.RelationID)
	if err != nil {
		return nil, fmt.Errorf("pg_cdc: primary key of table %s, which appeared in schema %s: %w", name, name.Schema, err)
	}
	if len(pk) == 0 {
		return nil, permanentf("pg_cdc: table %s, which appeared in schema %s after the start, has no primary key: its rows cannot be upserted or deleted by key downstream. Add one: ALTER TABLE %s ADD PRIMARY KEY (...)",
			name, name.Schema, name.quoted())
	}
	renamed := ""
	for _, t := range s.tables {
		if t.relID == m.RelationID {
			renamed = fmt.Sprintf(" (renamed from %s, whose changes it carries on under the new name)", t.name)
		}
	}
	s.in.log.Infof("pg_cdc: table %s appeared in schema %s after the start%s: capturing its changes from its first one, primary key %s",
		name, name.Schema, renamed, strings.Join(pk, ","))
	return &table{name: name, relID: m.RelationID, pk: pk}, nil
}

func sameColumns(a, b *table) bool {
	if len(a.columns) != len(b.columns) || a.identity != b.identity {
		return false
	}
	for i := range a.columns {
		x, y := a.columns[i], b.columns[i]
		if x.name != y.name || x.typ.oid != y.typ.oid || x.typ.typmod != y.typ.typmod {
			return false
		}
	}
	return true
}

func describeColumns(t *table) string {
	out := "("
	for i, c := range t.columns {
		if i > 0 {
			out += ", "
		}
		out += c.name + " " + c.typ.paimon
	}
	return out + ") replica identity " + t.identity
}

// tuple renders a tuple. With old (the old row under FULL), unchanged TOAST
// columns are taken from it; otherwise they follow the toast policy, and
// the names of those set to null are returned. keyOnly omits the columns a
// key tuple marks absent ('n' there means "not sent", not NULL, §5.1).
func (st *streamState) tuple(t *table, td *pglogrepl.TupleData, old map[string]any, keyOnly bool) (map[string]any, []string, error) {
	if td == nil {
		return nil, nil, nil
	}
	if len(td.Columns) != len(t.columns) {
		return nil, nil, fmt.Errorf("pg_cdc: table %s: tuple of %d columns, relation has %d", t.name, len(td.Columns), len(t.columns))
	}
	row := make(map[string]any, len(td.Columns))
	var toast []string
	for i, c := range td.Columns {
		col := &t.columns[i]
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			if keyOnly { // not sent: a key tuple carries only the identity's columns
				continue
			}
			row[col.name] = nil
		case pglogrepl.TupleDataTypeToast:
			if v, ok := old[col.name]; ok {
				row[col.name] = v
				continue
			}
			if keyOnly {
				continue
			}
			if st.s.in.conf.Toast == ToastError {
				// The WAL record stays as it is: a restart meets it again.
				return nil, nil, permanentf("pg_cdc: table %s column %s: an update left this TOASTed value unchanged and the stream does not carry it "+
					"(REPLICA IDENTITY %s). Run ALTER TABLE %s REPLICA IDENTITY FULL, or set toast: null to write null instead",
					t.name, col.name, t.identity, t.name.quoted())
			}
			row[col.name] = nil
			toast = append(toast, col.name)
		case pglogrepl.TupleDataTypeText:
			v, err := parseValue(&col.typ, string(c.Data))
			if err != nil {
				return nil, nil, fmt.Errorf("pg_cdc: table %s column %s: %w", t.name, col.name, err)
			}
			row[col.name] = v
		default:
			return nil, nil, fmt.Errorf("pg_cdc: table %s column %s: tuple data type %q not supported (binary mode is not used)", t.name, col.name, c.DataType)
		}
	}
	return row, toast, nil
}

// update handles an Update: unchanged TOAST values come from the old row
// under FULL; a changed key becomes a delete of the old key and an insert
// of the new row (§7.3).
func (st *streamState) update(ctx context.Context, t *table, m *pglogrepl.UpdateMessage) error {
	var old map[string]any
	var err error
	if m.OldTuple != nil {
		if old, _, err = st.tuple(t, m.OldTuple, nil, m.OldTupleType == pglogrepl.UpdateMessageTupleTypeKey); err != nil {
			return err
		}
	}
	row, toast, err := st.tuple(t, m.NewTuple, old, false)
	if err != nil {
		return err
	}
	if old != nil && keyChanged(t, old, row) {
		if err := st.add(ctx, t, "delete", keyOf(t, old, m.OldTupleType), old, nil); err != nil {
			return err
		}
		return st.add(ctx, t, "insert", row, old, toast)
	}
	return st.add(ctx, t, "update", row, old, toast)
}

func keyChanged(t *table, old, row map[string]any) bool {
	for _, k := range t.pk {
		if fmt.Sprint(old[k]) != fmt.Sprint(row[k]) {
			return true
		}
	}
	return false
}

// keyOf is the body of the delete half of a key change: the old row under
// FULL, the old key otherwise.
func keyOf(t *table, old map[string]any, tupleType uint8) map[string]any {
	if tupleType == pglogrepl.UpdateMessageTupleTypeOld {
		return old
	}
	k := make(map[string]any, len(t.pk))
	for _, c := range t.pk {
		k[c] = old[c]
	}
	return k
}

// add appends one message to the open transaction, emitting a part of it
// when it reaches max_transaction_rows.
func (st *streamState) add(ctx context.Context, t *table, op string, row, before map[string]any, toast []string) error {
	x := st.txn
	x.seq++
	m := t.streamTemplate.Copy()
	m.SetStructuredMut(row)
	m.MetaSetMut("operation", op)
	m.MetaSetMut("lsn_seq", x.seq)
	m.MetaSetMut("xid", x.xidMeta)
	m.MetaSetMut("commit_ts_ms", x.commitMeta)
	if before != nil {
		m.MetaSetMut("before", before)
	}
	if len(toast) > 0 {
		m.MetaSetMut("unchanged_toast", joinComma(toast))
	}
	x.msgs = append(x.msgs, m)
	x.ops.add(op)
	if len(x.msgs) >= st.s.in.conf.MaxTxnRows {
		x.split = true
		return st.flushTxn(ctx)
	}
	return nil
}

// positionLSN is the LSN in the transaction's lsn and lsn_position: its
// commit end LSN; for a transaction split by max_transaction_rows, whose
// first rows leave before its commit (and end LSN) arrives, its commit LSN
// + 1 (from Begin), which still lies above every earlier transaction's end
// and below its own, so lsn_position stays strictly increasing.
func (x *openTxn) positionLSN(end pglogrepl.LSN) pglogrepl.LSN {
	if x.split {
		return x.final + 1
	}
	return end
}

// flushTxn emits the open transaction's buffered messages.
func (st *streamState) flushTxn(ctx context.Context) error {
	x := st.txn
	if len(x.msgs) == 0 {
		return nil
	}
	lsn := x.positionLSN(0)
	if !x.split {
		return errors.New("pg_cdc: internal: flush of an unsplit transaction before its commit")
	}
	return st.emitMsgs(ctx, x, lsn)
}

func (st *streamState) emitMsgs(ctx context.Context, x *openTxn, lsn pglogrepl.LSN) error {
	var lsnMeta any = lsn.String()
	prefix := strconv.AppendUint(nil, uint64(lsn), 10)
	prefix = append(prefix, '.')
	for _, m := range x.msgs {
		seq, _ := m.MetaGetMut("lsn_seq")
		m.MetaSetMut("lsn", lsnMeta)
		m.MetaSetMut("lsn_position", string(strconv.AppendInt(prefix, seq.(int64), 10)))
	}
	x.ops.report(st.s.in.m.rows)
	e, tr := x.entry, st.s.tracker
	tr.Add(e)
	r := readResult{batch: x.msgs, acks: []func(){func() { tr.Ack(e) }}, stream: true}
	x.msgs = nil
	if err := st.emit(ctx, r); err != nil {
		return err
	}
	return nil
}

// begin opens a transaction (a Begin message, or a streamed transaction's
// Stream Commit before its changes are replayed), registering it with the
// tracker in commit order.
func (st *streamState) begin(xid uint32, final pglogrepl.LSN, commitTime time.Time) {
	ms := commitTime.UnixMilli()
	st.txn = &openTxn{xid: xid, final: final, commitMs: ms, xidMeta: int64(xid), commitMeta: ms, entry: st.s.tracker.Begin()}
}

// commit ends the open transaction, whose commit record ends at end: its
// messages go out as one batch (or the last part of a split one) and the
// tracker learns its end LSN.
func (st *streamState) commit(ctx context.Context, end pglogrepl.LSN) error {
	x := st.txn
	if x == nil {
		return errors.New("pg_cdc: Commit without Begin")
	}
	st.txn = nil
	st.s.in.m.txns.Incr(1)
	if len(x.msgs) > 0 {
		if err := st.emitMsgs(ctx, x, x.positionLSN(end)); err != nil {
			return err
		}
	}
	// The end LSN, never the commit LSN: confirming the commit LSN
	// redelivers the transaction after a restart (§5.3).
	st.s.tracker.Seal(x.entry, end)
	return nil
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

// heartbeat writes a non-transactional logical message every interval, so
// that keepalives and the message itself move the slot while the captured
// tables are idle and other databases or tables write WAL.
func (s *session) heartbeat(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.qmu.Lock()
		_, err := s.qconn.Exec(ctx, "SELECT pg_logical_emit_message(false, $1, 'heartbeat')", heartbeatPrefix)
		s.qmu.Unlock()
		if err != nil && ctx.Err() == nil {
			s.in.log.Warnf("pg_cdc: heartbeat (pg_logical_emit_message): %v", err)
		}
	}
}

// monitorSlot reads the slot's WAL retention every interval into the slot
// metrics, and warns while wal_status is not "reserved" (the slot then
// holds more than max_wal_size and is heading for invalidation, §5.6).
func (s *session) monitorSlot(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.qmu.Lock()
		var retained, safe *int64
		var status *string
		err := s.qconn.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - restart_lsn)::bigint, safe_wal_size, wal_status
			FROM pg_replication_slots WHERE slot_name = $1`, s.in.conf.SlotName).Scan(&retained, &safe, &status)
		s.qmu.Unlock()
		switch {
		case err != nil && ctx.Err() == nil:
			s.in.log.Warnf("pg_cdc: read slot %s: %v", s.in.conf.SlotName, err)
		case err == nil:
			if retained != nil {
				s.in.m.slotRetained.Set(*retained)
			}
			if safe != nil {
				s.in.m.slotSafe.Set(*safe)
			} else {
				s.in.m.slotSafe.Set(-1)
			}
			if status != nil && *status != "reserved" {
				s.in.log.Warnf("pg_cdc: slot %s has wal_status %s: it retains more WAL than max_wal_size and is invalidated once it passes max_slot_wal_keep_size; the pipeline is behind", s.in.conf.SlotName, *status)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
