package paimon

import (
	"fmt"
	"sync"
)

// ackTracker decides how far the consumer position may advance as message
// batches are acknowledged in any order.
//
// Plans (one snapshot each) are registered in snapshot order with Begin.
// Each batch emitted for a plan is registered with Add before it is handed
// to Benthos, and the plan is sealed with Seal once its last batch is
// emitted. A plan is done when it is sealed and all its batches are acked;
// the position is the NextSnapshot of the last plan of the longest run of
// done plans from the oldest one. So the position never passes a snapshot
// with an unacknowledged batch, whatever the order in which acks arrive
// (Benthos calls ReadBatch again without waiting for acks), and a plan
// without rows (a COMPACT snapshot, a skipped OVERWRITE, an empty delta)
// advances it as soon as everything before it is acked.
//
// It is safe for concurrent use.
type ackTracker struct {
	mu       sync.Mutex
	plans    []*trackedPlan // not yet retired, oldest first
	position int64          // NextSnapshot of the last retired plan; 0 before any
}

// trackedPlan is one plan's bookkeeping; only ackTracker touches its fields.
type trackedPlan struct {
	snapshotID int64
	next       int64 // consumer position once this plan is done
	pending    int   // batches emitted and not yet acked
	sealed     bool  // every batch of the plan has been emitted
}

// advance reports a move of the position: the new position and how many
// plans (snapshots) it retired. The zero value means no move.
type advance struct {
	Position int64
	Retired  int
}

// newAckTracker returns a tracker whose position starts at start (0: none).
func newAckTracker(start int64) *ackTracker { return &ackTracker{position: start} }

// Begin registers the plan of snapshotID, whose consumer position once done
// is next. Plans must be registered in increasing snapshot order.
func (t *ackTracker) Begin(snapshotID, next int64) (*trackedPlan, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.plans); n > 0 && t.plans[n-1].next >= next || next <= t.position {
		return nil, fmt.Errorf("ack tracker: plan of snapshot %d (next %d) registered out of order (position %d)", snapshotID, next, t.lastNext())
	}
	p := &trackedPlan{snapshotID: snapshotID, next: next}
	t.plans = append(t.plans, p)
	return p, nil
}

func (t *ackTracker) lastNext() int64 {
	if n := len(t.plans); n > 0 {
		return t.plans[n-1].next
	}
	return t.position
}

// Add registers one more batch of p, to be acked with Ack.
func (t *ackTracker) Add(p *trackedPlan) {
	t.mu.Lock()
	p.pending++
	t.mu.Unlock()
}

// Seal marks that every batch of p has been registered; if that completes
// the oldest plans, the position moves.
func (t *ackTracker) Seal(p *trackedPlan) advance {
	t.mu.Lock()
	defer t.mu.Unlock()
	p.sealed = true
	return t.retire()
}

// Ack records that one batch of p was acknowledged (or dropped after a nack
// without replay); if that completes the oldest plans, the position moves.
// An Ack without a matching Add is ignored.
func (t *ackTracker) Ack(p *trackedPlan) advance {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.pending > 0 {
		p.pending--
	}
	return t.retire()
}

// retire pops the done plans at the front.
func (t *ackTracker) retire() advance {
	var a advance
	for len(t.plans) > 0 {
		p := t.plans[0]
		if !p.sealed || p.pending > 0 {
			break
		}
		t.plans[0] = nil
		t.plans = t.plans[1:]
		t.position = p.next
		a.Position = p.next
		a.Retired++
	}
	return a
}

// Position returns the current position: every plan before it is done.
func (t *ackTracker) Position() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.position
}

// Outstanding returns the number of registered plans not yet done.
func (t *ackTracker) Outstanding() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.plans)
}
