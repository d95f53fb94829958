package paimon

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// consumerWriter persists the input's position as the table's consumer file
// <table>/consumer/consumer-<id> ({"nextSnapshot": N}, as Java writes it),
// so that a restart resumes there and snapshot expiry (Java's and ours)
// keeps the snapshots not yet consumed.
//
// Writes are synchronous: an AckFunc that moves the position returns only
// once the file is written, so the position is durable before Benthos
// considers the batch done and, at the end of a bounded read, before Close.
// The position only moves forward: a write never replaces a larger
// position with a smaller one, however the calls interleave. A write that
// still fails after its retries marks the writer failing; the input then
// answers ReadBatch with ErrNotConnected and retries the write in Connect,
// so reading pauses instead of running ahead of a position it cannot save.
//
// It is safe for concurrent use.
type consumerWriter struct {
	cm       *snapshot.ConsumerManager
	id       string
	log      *service.Logger
	errors   *service.MetricCounter
	position *service.MetricGauge
	attempts int
	wait     time.Duration

	mu      sync.Mutex
	written int64 // position last written (or read at start)
	want    int64 // largest position asked for
	failing atomic.Bool
}

// Retries of one consumer write: 3 attempts, 100 ms then 200 ms apart.
const (
	consumerWriteAttempts = 3
	consumerWriteWait     = 100 * time.Millisecond
)

func newConsumerWriter(cm *snapshot.ConsumerManager, id string, start int64, log *service.Logger, m *inputMetrics) *consumerWriter {
	return &consumerWriter{
		cm: cm, id: id, log: log, errors: m.consumerErrors, position: m.consumerPosition,
		attempts: consumerWriteAttempts, wait: consumerWriteWait,
		written: start, want: start,
	}
}

// Advance moves the position to pos (no-op if it is not beyond the last
// one asked for) and writes it. The error is also logged and counted.
func (w *consumerWriter) Advance(ctx context.Context, pos int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if pos > w.want {
		w.want = pos
	}
	return w.flushLocked(ctx)
}

// Flush writes the latest position asked for if it has not been written.
func (w *consumerWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked(ctx)
}

// Failing reports whether the last write failed after its retries.
func (w *consumerWriter) Failing() bool { return w.failing.Load() }

// Written returns the last position written.
func (w *consumerWriter) Written() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written
}

func (w *consumerWriter) flushLocked(ctx context.Context) error {
	if w.want <= w.written {
		return nil
	}
	var err error
	wait := w.wait
	for attempt := 0; attempt < w.attempts; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			wait *= 2
		}
		if ctx.Err() != nil {
			if err == nil {
				err = ctx.Err()
			}
			break
		}
		if err = w.cm.Put(ctx, w.id, snapshot.Consumer{NextSnapshot: w.want}); err == nil {
			w.written = w.want
			w.failing.Store(false)
			w.position.Set(w.written)
			return nil
		}
	}
	w.failing.Store(true)
	w.errors.Incr(1)
	err = fmt.Errorf("save position %d of consumer %q: %w", w.want, w.id, err)
	w.log.Errorf("%v; reading pauses until the consumer file can be written (the position stays at %d, so a restart re-reads from there)", err, w.written)
	return err
}
