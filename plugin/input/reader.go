package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// readResult is what the background reader hands to ReadBatch: a batch of
// one snapshot, an error to report (the reader retries after it), or the end
// of a bounded read.
type readResult struct {
	batch        service.MessageBatch
	plan         *trackedPlan
	snapshotID   int64
	commitMillis int64
	err          error
	end          bool
}

// Longest wait between retries after an error.
const maxRetryWait = 30 * time.Second

// snapshotReader is the input's background reader: one goroutine that
// takes the scanner's plans in snapshot order, reads their splits in order
// (files by sequence number, each row group by row group, the next file
// opened while the current one is read) and renders the rows into batches.
// It runs from start until stop; it owns the scanner and the TableRead.
type snapshotReader struct {
	in         *Input
	table      *lakecore.Table
	scanner    *scan.StreamScanner
	filter     *BoundPartitionFilter
	projection []string
	tread      *read.TableRead
	partKeys   []types.DataField
	partOpts   binrow.PartitionOptions

	out    chan readResult
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func newSnapshotReader(in *Input, tbl *lakecore.Table, scanner *scan.StreamScanner, filter *BoundPartitionFilter, projection []string) (*snapshotReader, error) {
	r := &snapshotReader{in: in, table: tbl, scanner: scanner, filter: filter, projection: projection, out: make(chan readResult, 1), done: make(chan struct{})}
	if err := r.newRead(); err != nil {
		return nil, err
	}
	return r, nil
}

// newRead (re)creates the TableRead for the table's current schema.
func (r *snapshotReader) newRead() error {
	s := r.table.Schema()
	tr, err := r.table.NewRead(r.projection)
	if err != nil {
		return err
	}
	tr.SetBatchSize(min(r.in.conf.BatchSize, 4096))
	legacy, err := s.Opts().PartitionLegacyName()
	if err != nil {
		return err
	}
	r.tread = tr
	r.partKeys = s.PartitionFields()
	r.partOpts = binrow.PartitionOptions{DefaultName: s.Opts().PartitionDefaultName(), LegacyName: legacy}
	return nil
}

func (r *snapshotReader) start(t *ackTracker) {
	r.ctx, r.cancel = context.WithCancel(context.Background())
	go r.run(t)
}

// stop cancels the reader and waits for it to return.
func (r *snapshotReader) stop() {
	r.cancel()
	<-r.done
}

// send hands a result to ReadBatch; false once the reader is stopped.
func (r *snapshotReader) send(res readResult) bool {
	select {
	case r.out <- res:
		return true
	case <-r.ctx.Done():
		return false
	}
}

// sleep waits d or until the reader is stopped; false if stopped.
func (r *snapshotReader) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.ctx.Done():
		return false
	}
}

// retryWait returns the wait after the n-th consecutive error (n >= 1):
// from discovery_interval (at least 100 ms), doubling, at most 30 s.
func (r *snapshotReader) retryWait(n int) time.Duration {
	d := max(r.in.conf.DiscoveryInterval, 100*time.Millisecond)
	for i := 1; i < n && d < maxRetryWait; i++ {
		d *= 2
	}
	return min(d, maxRetryWait)
}

func (r *snapshotReader) run(t *ackTracker) {
	defer close(r.done)
	ctx := r.ctx
	failures := 0
	fail := func(err error) bool {
		failures++
		if !r.send(readResult{err: err}) {
			return false
		}
		return r.sleep(r.retryWait(failures))
	}
	for {
		plan, err := r.scanner.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, scan.ErrEndOfScan):
			r.send(readResult{end: true})
			return
		case err != nil:
			if !fail(errAdvice(err)) {
				return
			}
			continue
		case plan == nil:
			failures = 0
			if len(r.out) == 0 {
				r.in.m.lag.Set(0)
			}
			wait := r.sleep
			if r.in.idle != nil {
				wait = func(d time.Duration) bool { return r.in.idle(ctx, d) }
			}
			if !wait(r.in.conf.DiscoveryInterval) {
				return
			}
			continue
		}
		failures = 0
		if plan.ExpiredFrom > 0 {
			n := plan.Snapshot.ID - plan.ExpiredFrom
			r.in.m.expired.Incr(n)
			r.in.log.Warnf("paimon input on %s: snapshots %d to %d expired before they were read and are skipped (on_expired: earliest); their rows are not read",
				r.in.conf.Table, plan.ExpiredFrom, plan.Snapshot.ID-1)
		}
		tp, err := t.Begin(plan.Snapshot.ID, plan.NextSnapshot)
		if err != nil {
			// A scanner bug; reading on could skip or repeat data.
			r.send(readResult{err: err})
			return
		}
		if !r.emitPlan(t, tp, plan) {
			return
		}
		// Sealing after the last batch may complete the plan at once (no
		// rows, or every batch already acked): the consumer is saved here.
		_ = r.in.advanced(context.WithoutCancel(ctx), t.Seal(tp))
	}
}

// emitPlan reads every split of plan into batches registered with tp. A
// read error is reported and the plan resumes, after a wait, at the first
// row not yet emitted (the scanner has moved on; the plan must not be lost
// or repeated). It returns false once the reader is stopped.
func (r *snapshotReader) emitPlan(t *ackTracker, tp *trackedPlan, plan *scan.StreamPlan) bool {
	ctx := r.ctx
	snap := plan.Snapshot
	batchSize := r.in.conf.BatchSize
	buf := make(service.MessageBatch, 0, min(batchSize, 4096))
	flush := func() bool {
		if len(buf) == 0 {
			return true
		}
		t.Add(tp)
		ok := r.send(readResult{batch: buf, plan: tp, snapshotID: snap.ID, commitMillis: snap.TimeMillis})
		buf = make(service.MessageBatch, 0, min(batchSize, 4096))
		return ok
	}
	failures := 0
	split, skip := 0, int64(0) // resume point: split index and rows of it already emitted
	for split < len(plan.Splits) {
		err := r.readSplit(plan, split, &skip, &buf, flush)
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			failures++
			if !r.send(readResult{err: fmt.Errorf("paimon input on %s: snapshot %d: %w", r.in.conf.Table, snap.ID, err)}) || !r.sleep(r.retryWait(failures)) {
				return false
			}
			continue
		}
		split, skip = split+1, 0
	}
	return flush()
}

// readSplit reads split i of plan from row *skip on, appending messages to
// *buf and calling flush whenever it holds batch_size of them; *skip counts
// the rows of the split taken so far.
func (r *snapshotReader) readSplit(plan *scan.StreamPlan, i int, skip *int64, buf *service.MessageBatch, flush func() bool) error {
	ctx := r.ctx
	sp := plan.Splits[i]
	if !r.filter.Match(sp.PartitionValues) {
		return nil
	}
	if plan.Snapshot.SchemaID > r.tread.Schema().ID {
		// Columns were added (or changed) since the input started: read as
		// the newer schema so that new columns appear in the messages.
		if err := r.table.Refresh(ctx); err != nil {
			return err
		}
		if r.table.Schema().ID > r.tread.Schema().ID {
			if err := r.newRead(); err != nil {
				return err
			}
		}
	}
	part, err := binrow.PartitionPath(r.partKeys, sp.PartitionValues, r.partOpts)
	if err != nil {
		return fmt.Errorf("partition of bucket %d: %w", sp.Bucket, err)
	}
	meta := rowconv.RowMeta{
		SnapshotID:       plan.Snapshot.ID,
		CommitKind:       string(plan.Snapshot.CommitKind),
		CommitTimeMillis: plan.Snapshot.TimeMillis,
		Partition:        part,
		Bucket:           sp.Bucket,
	}
	fields := r.tread.Fields()
	batchSize := r.in.conf.BatchSize
	it, err := r.tread.Open(ctx, sp)
	if err != nil {
		return err
	}
	defer it.Close()
	var seen int64
	for {
		rows, pos, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if seen+int64(len(rows)) <= *skip {
			seen += int64(len(rows))
			continue
		}
		from := 0
		if seen < *skip {
			from = int(*skip - seen)
		}
		seen += int64(len(rows))
		meta.File = pos.File
		for j := from; j < len(rows); j++ {
			meta.Row = pos.Row + int64(j)
			msg, err := rowconv.NewRowMessage(fields, rows[j], meta)
			if err != nil {
				return fmt.Errorf("data file %s row %d: %w", pos.File, meta.Row, err)
			}
			*buf = append(*buf, msg)
			*skip++
			if len(*buf) >= batchSize && !flush() {
				return r.ctx.Err()
			}
		}
	}
	r.in.m.files.Incr(int64(len(sp.Files)))
	return nil
}
