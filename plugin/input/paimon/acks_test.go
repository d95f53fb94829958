package paimon

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// TestAckTrackerOrder walks fixed scenarios: acks in reverse order, empty
// plans, and an unacked batch holding back later finished plans.
func TestAckTrackerOrder(t *testing.T) {
	tr := newAckTracker(0)
	p1, _ := tr.Begin(1, 2)
	tr.Add(p1)
	tr.Add(p1)
	if a := tr.Seal(p1); a != (advance{}) {
		t.Fatalf("seal with pending batches moved: %+v", a)
	}
	p2, _ := tr.Begin(2, 3) // a COMPACT snapshot: no batches
	if a := tr.Seal(p2); a != (advance{}) {
		t.Fatalf("empty plan behind an unacked one moved: %+v", a)
	}
	p3, _ := tr.Begin(3, 4)
	tr.Add(p3)
	tr.Seal(p3)
	if a := tr.Ack(p3); a != (advance{}) {
		t.Fatalf("ack of snapshot 3 passed unacked snapshot 1: %+v", a)
	}
	if a := tr.Ack(p1); a != (advance{}) {
		t.Fatalf("first of two acks moved: %+v", a)
	}
	if got := tr.Position(); got != 0 {
		t.Fatalf("position %d, want 0", got)
	}
	if a := tr.Ack(p1); a != (advance{Position: 4, Retired: 3}) {
		t.Fatalf("last ack of snapshot 1: %+v, want position 4 retiring 3", a)
	}
	if tr.Outstanding() != 0 || tr.Position() != 4 {
		t.Fatalf("outstanding %d position %d", tr.Outstanding(), tr.Position())
	}
	p5, _ := tr.Begin(5, 6) // the plan's gap (expired snapshot 4) is the scanner's business
	if a := tr.Seal(p5); a != (advance{Position: 6, Retired: 1}) {
		t.Fatalf("empty plan at the front: %+v", a)
	}
	if _, err := tr.Begin(5, 6); err == nil {
		t.Fatal("a plan registered twice was accepted")
	}
	if a := tr.Ack(p5); a != (advance{}) {
		t.Fatalf("stray ack moved: %+v", a)
	}
}

// TestAckTrackerShuffled registers plans with random batch counts and acks
// the batches in a random order interleaved with the registrations; after
// every event the position must be exactly the NextSnapshot of the longest
// prefix of finished plans, so it never passes an unacked batch.
func TestAckTrackerShuffled(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		tr := newAckTracker(0)
		type plan struct {
			tp            *trackedPlan
			next          int64
			batches, acks int
			sealed        bool
		}
		var plans []*plan
		var unacked []int // plan index per emitted, unacked batch
		id := int64(rng.IntN(5) + 1)
		check := func(step string) {
			t.Helper()
			want := int64(0)
			for _, p := range plans {
				if !p.sealed || p.acks < p.batches {
					break
				}
				want = p.next
			}
			if got := tr.Position(); got != want {
				t.Fatalf("seed %d after %s: position %d, want %d", seed, step, got, want)
			}
		}
		for step := 0; step < 200; step++ {
			open := len(plans) > 0 && !plans[len(plans)-1].sealed
			switch r := rng.IntN(10); {
			case !open && r < 5:
				id += int64(rng.IntN(3) + 1)
				tp, err := tr.Begin(id, id+1)
				if err != nil {
					t.Fatal(err)
				}
				plans = append(plans, &plan{tp: tp, next: id + 1})
				check("begin")
			case open && r < 4:
				p := plans[len(plans)-1]
				tr.Add(p.tp)
				p.batches++
				unacked = append(unacked, len(plans)-1)
				check("add")
			case open && r < 6:
				p := plans[len(plans)-1]
				p.sealed = true
				tr.Seal(p.tp)
				check("seal")
			case len(unacked) > 0:
				k := rng.IntN(len(unacked))
				p := plans[unacked[k]]
				unacked = append(unacked[:k], unacked[k+1:]...)
				p.acks++
				tr.Ack(p.tp)
				check("ack")
			}
		}
		// Finish: seal the open plan, ack the rest in random order.
		if n := len(plans); n > 0 && !plans[n-1].sealed {
			plans[n-1].sealed = true
			tr.Seal(plans[n-1].tp)
		}
		rng.Shuffle(len(unacked), func(i, j int) { unacked[i], unacked[j] = unacked[j], unacked[i] })
		for _, k := range unacked {
			plans[k].acks++
			tr.Ack(plans[k].tp)
			check("final ack")
		}
		if len(plans) > 0 && tr.Position() != plans[len(plans)-1].next {
			t.Fatalf("seed %d: all acked but position %d, want %d", seed, tr.Position(), plans[len(plans)-1].next)
		}
	}
}

// TestAckTrackerConcurrent acks from many goroutines at once (run with
// -race): the retired counts add up to the number of plans and the final
// position is the last plan's. The advances may reach their callers out of
// order, which is why consumerWriter ignores a position below the largest
// one it was given.
func TestAckTrackerConcurrent(t *testing.T) {
	tr := newAckTracker(0)
	const plans, batches = 50, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	retired, last := 0, int64(0)
	record := func(a advance) {
		mu.Lock()
		defer mu.Unlock()
		retired += a.Retired
		last = max(last, a.Position)
	}
	for i := int64(1); i <= plans; i++ {
		p, err := tr.Begin(i, i+1)
		if err != nil {
			t.Fatal(err)
		}
		for range batches {
			tr.Add(p)
			wg.Go(func() { record(tr.Ack(p)) })
		}
		record(tr.Seal(p))
	}
	wg.Wait()
	if retired != plans || tr.Position() != plans+1 || last != plans+1 {
		t.Fatalf("retired %d position %d, want %d and %d", retired, tr.Position(), plans, plans+1)
	}
}
