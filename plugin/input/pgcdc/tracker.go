package pgcdc

import (
	"sync"

	"github.com/jackc/pglogrepl"
)

// txnTracker decides the slot's flush position as message batches are
// acknowledged in any order (postgres-cdc.md §7.5).
//
// Transactions are registered in commit order with Begin as the stream
// decodes them; each batch holding rows of one is registered with Add
// before it is handed to Benthos; Seal records its commit end LSN once the
// Commit message arrived and its last batch is registered. The position is
// the end LSN of the last transaction of the longest run of sealed, fully
// acknowledged transactions from the oldest: it never passes a transaction
// with an unacknowledged batch, whatever order acks arrive in, and a
// transaction without rows of captured tables moves it as soon as
// everything before it is done.
//
// Safe for concurrent use.
type txnTracker struct {
	mu       sync.Mutex
	entries  []*txnEntry // not yet retired, oldest first
	position pglogrepl.LSN
}

// txnEntry is one transaction's bookkeeping; only txnTracker touches it.
type txnEntry struct {
	end     pglogrepl.LSN
	pending int
	sealed  bool
}

func newTxnTracker(start pglogrepl.LSN) *txnTracker { return &txnTracker{position: start} }

// Begin registers the next transaction.
func (t *txnTracker) Begin() *txnEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := &txnEntry{}
	t.entries = append(t.entries, e)
	return e
}

// Add registers one more batch of e.
func (t *txnTracker) Add(e *txnEntry) {
	t.mu.Lock()
	e.pending++
	t.mu.Unlock()
}

// Seal records e's commit end LSN: every batch of it is registered.
func (t *txnTracker) Seal(e *txnEntry, end pglogrepl.LSN) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.end, e.sealed = end, true
	t.retire()
}

// Ack records that one batch of e was acknowledged.
func (t *txnTracker) Ack(e *txnEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.pending > 0 {
		e.pending--
	}
	t.retire()
}

func (t *txnTracker) retire() {
	for len(t.entries) > 0 {
		e := t.entries[0]
		if !e.sealed || e.pending > 0 {
			return
		}
		t.entries[0] = nil
		t.entries = t.entries[1:]
		t.position = max(t.position, e.end)
	}
}

// AdvanceIdle moves the position to lsn when nothing is in flight: no
// transaction begun and not yet retired. The server sends only
// transactions committing after the confirmed position, so a transaction
// still open at lsn comes later, above it (§7.5 "Idle advance"). It
// reports whether the position moved.
func (t *txnTracker) AdvanceIdle(lsn pglogrepl.LSN) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.entries) > 0 || lsn <= t.position {
		return false
	}
	t.position = lsn
	return true
}

// Position returns the flush position: everything up to it is acknowledged.
func (t *txnTracker) Position() pglogrepl.LSN {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.position
}

// InFlight returns the number of transactions begun and not yet retired.
func (t *txnTracker) InFlight() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// barrier counts the snapshot's batches: Wait returns once it is sealed
// (every batch registered) and every batch is acknowledged, so streaming
// starts only after the snapshot is delivered (the slot stays at its
// consistent point until then).
type barrier struct {
	mu      sync.Mutex
	pending int
	sealed  bool
	done    chan struct{}
}

func newBarrier() *barrier { return &barrier{done: make(chan struct{})} }

func (b *barrier) Add() {
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
}

func (b *barrier) Ack() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending > 0 {
		b.pending--
	}
	b.check()
}

func (b *barrier) Seal() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sealed = true
	b.check()
}

func (b *barrier) check() {
	if b.sealed && b.pending == 0 {
		select {
		case <-b.done:
		default:
			close(b.done)
		}
	}
}

// Done is closed once the barrier is passed.
func (b *barrier) Done() <-chan struct{} { return b.done }
