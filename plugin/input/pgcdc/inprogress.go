package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
)

// replayStatusEvery is how many replayed records pass between checks of
// the status deadline while a streamed transaction is replayed (the
// replication connection is not read meanwhile).
const replayStatusEvery = 4096

// streamsInProgress decides whether a session streams in-progress
// transactions (pgoutput protocol 2 with streaming, PostgreSQL 14+) on a
// server of version (server_version_num).
func streamsInProgress(mode StreamMode, version int) (bool, error) {
	switch {
	case mode == StreamOff:
		return false, nil
	case version >= 140000:
		return true, nil
	case mode == StreamOn:
		return false, permanentf("%s: on needs PostgreSQL 14 or later (pgoutput protocol 2); the server is %d.%d: use auto or off",
			fieldStreamInProgress, version/10000, version%10000/100)
	}
	return false, nil
}

// handleStreamed takes the protocol 2 messages of streamed transactions:
// Stream Start/Stop around a segment, whose changes go to the
// transaction's spool; Stream Abort drops the transaction or a
// subtransaction's changes; Stream Commit replays the spool as one
// ordinary transaction, in commit order, so that nothing of a transaction
// leaves before its commit and it is emitted exactly as under protocol 1
// (same lsn, lsn_seq, lsn_position, batches). It reports whether it took
// the message; the others (Begin, Commit and the changes of transactions
// that were not streamed, Relation messages outside segments, keepalive
// messages) are protocol 1's.
func (st *streamState) handleStreamed(ctx context.Context, data []byte) (bool, error) {
	if len(data) == 0 {
		return false, nil
	}
	typ := pglogrepl.MessageType(data[0])
	switch typ {
	case pglogrepl.MessageTypeStreamStart, pglogrepl.MessageTypeStreamStop, pglogrepl.MessageTypeStreamCommit, pglogrepl.MessageTypeStreamAbort:
	default:
		if !st.inSegment {
			return false, nil
		}
		switch typ {
		case pglogrepl.MessageTypeRelation, pglogrepl.MessageTypeInsert, pglogrepl.MessageTypeUpdate, pglogrepl.MessageTypeDelete, pglogrepl.MessageTypeTruncate:
			return true, st.spools.add(st.segXid, data)
		}
		return true, nil // Type and transactional logical messages: not used
	}
	msg, err := pglogrepl.ParseV2(data, false)
	if err != nil {
		return true, fmt.Errorf("pg_cdc: decode pgoutput message %q: %w", typ, err)
	}
	switch m := msg.(type) {
	case *pglogrepl.StreamStartMessageV2:
		if st.inSegment {
			return true, fmt.Errorf("pg_cdc: Stream Start of transaction %d inside the segment of %d", m.Xid, st.segXid)
		}
		st.inSegment, st.segXid = true, m.Xid
		st.spools.start(m.Xid, m.FirstSegment == 1)
	case *pglogrepl.StreamStopMessageV2:
		if !st.inSegment {
			return true, errors.New("pg_cdc: Stream Stop outside a stream segment")
		}
		st.inSegment = false
	case *pglogrepl.StreamAbortMessageV2:
		st.spools.abort(m.Xid, m.SubXid)
	case *pglogrepl.StreamCommitMessageV2:
		if st.inSegment || st.txn != nil {
			return true, fmt.Errorf("pg_cdc: Stream Commit of transaction %d inside another transaction", m.Xid)
		}
		if err := st.streamCommit(ctx, m); err != nil {
			return true, err
		}
	}
	st.s.in.m.streamBuffered.Set(st.spools.bytes())
	return true, nil
}

// streamCommit replays a streamed transaction that committed. Its tracker
// entry is made here, at its commit, as a Begin message's would be: the
// tracker holds transactions in commit order.
func (st *streamState) streamCommit(ctx context.Context, m *pglogrepl.StreamCommitMessageV2) error {
	sp := st.spools.take(m.Xid)
	st.begin(m.Xid, m.CommitLSN, m.CommitTime)
	if sp != nil {
		n := 0
		err := sp.replay(st.spools.codec, func(rec []byte) error {
			if n++; n%replayStatusEvery == 0 && time.Now().After(st.nextStat) {
				if err := st.sendStatus(); err != nil {
					return err
				}
			}
			return st.handle(ctx, rec)
		})
		if err != nil {
			return err
		}
	}
	return st.commit(ctx, m.TransactionEndLSN)
}
