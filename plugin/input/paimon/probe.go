package paimon

import (
	"context"
	"time"
)

// Snapshot discovery on object stores (S3), where there is nothing to
// watch.
//
// A full poll of the scanner that finds no new snapshot costs five
// requests: the GET of snapshot-<next> that fails, then the range check
// that tells a snapshot not written yet from an expired one or a
// recreated table (the EARLIEST hint and the snapshot it names, the LATEST
// hint and the snapshot after it). Java's NextSnapshotFetcher does not pay
// this on every poll: it asks whether snapshot-<next> exists and runs the
// range check every 16th time only (RANGE_CHECK_INTERVAL). A reader that
// has caught up does the same, with a HEAD of snapshot-<next>, and spends
// the requests saved on looking sooner after a snapshot than
// discovery_interval: writers commit in bursts and at a steady pace, so the
// next snapshot is likely soon after the last one. The waits before the
// probes start at probeFirstWait after a snapshot was read and grow by half
// each time up to discovery_interval, which stays the upper bound on the
// wait (and the period of an idle reader). When a probe finds
// snapshot-<next>, or when the range check is due, the scanner polls as
// before. Growing by half rather than doubling keeps the probes close
// together where a writer batching every 100 ms commits next (40 to 100 ms
// after a snapshot was read) for the same number of requests.
//
// The cost of an idle reader is one HEAD per discovery_interval, with
// every 16th replaced by a full poll (five requests): 20 requests per 16
// intervals, 1.25 per interval (4,500 an hour at the default 1 s), where a
// full poll per interval costs 5 (18,000 an hour). After each snapshot the
// ramp makes ceil(log1.5(discovery_interval / probeFirstWait)) probes
// before the waits reach the interval (12 in the 2.6 s after it at 1 s, 6
// in 0.2 s at 100 ms).

const (
	// probeFirstWait is the first wait after a snapshot was read. An S3
	// HEAD takes 5 to 30 ms; probing faster would mostly measure that.
	probeFirstWait = 10 * time.Millisecond
	// rangeCheckEvery is Java's NextSnapshotFetcher.RANGE_CHECK_INTERVAL:
	// every that many looks without a snapshot, the look is the scanner's
	// full poll (which checks for expired snapshots and a recreated table)
	// instead of a probe.
	rangeCheckEvery = 16
)

// probeSchedule is the sequence of waits between probes for the next
// snapshot: probeFirstWait after a snapshot was read, then half as long
// again each time, up to max. It is a value with no clock, not safe for
// concurrent use.
type probeSchedule struct {
	max  time.Duration // discovery_interval
	wait time.Duration // the last wait given; -1 after read
	// fresh: no look since a snapshot was read.
	fresh bool
	// misses counts the looks since the scanner last polled or a snapshot
	// was read; every rangeCheckEvery-th is a poll instead of a probe.
	misses int
}

func newProbeSchedule(max time.Duration) probeSchedule {
	return probeSchedule{max: max, wait: -1}
}

// read resets the schedule after a snapshot was read: the next wait is the
// first, and the count towards the range check starts again (as Java's
// does when the snapshot exists).
func (s *probeSchedule) read() { s.wait, s.misses, s.fresh = -1, 0, true }

// polled restarts the count towards the next range check after the scanner
// polled (it ran the range check if it found nothing); that poll was the
// first look since a snapshot was read, if none came before it.
func (s *probeSchedule) polled() { s.misses, s.fresh = 0, false }

// next returns the wait before the next look, whether it is the first look
// since a snapshot was read, and whether that look is a full poll of the
// scanner (the range check is due) rather than a probe.
func (s *probeSchedule) next() (wait time.Duration, first, poll bool) {
	first, s.fresh = s.fresh, false
	if s.wait < 0 {
		s.wait = min(probeFirstWait, s.max)
	} else {
		s.wait = min(s.wait*3/2, s.max)
	}
	s.misses++
	if s.misses >= rangeCheckEvery {
		s.misses = 0
		return s.wait, first, true
	}
	return s.wait, first, false
}

// probeForSnapshot waits, following r.probes, until snapshot-<next> exists
// or a full poll is due, and returns true then (the caller polls the
// scanner); false if the reader was stopped. A probe that fails returns
// true as well: the scanner's poll reports the error. A snapshot found by
// the first probe after the last one was read means a backlog: r.caughtUp
// is cleared, so that the reader polls the scanner until it has read it,
// without a probe before each snapshot.
func (r *snapshotReader) probeForSnapshot(ctx context.Context, next int64) bool {
	for {
		wait, first, poll := r.probes.next()
		if !r.sleep(wait) {
			return false
		}
		if poll {
			return true
		}
		ok, err := r.table.Snapshots().Exists(ctx, next)
		if ctx.Err() != nil {
			return false
		}
		if ok && first {
			r.caughtUp = false
		}
		if ok || err != nil {
			return true
		}
	}
}
