package paimon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// readResult is what the reader hands to ReadBatch: a batch of one
// snapshot, an error to report (the reader retries after it), or the end of
// a bounded read.
type readResult struct {
	batch        service.MessageBatch
	plan         *trackedPlan
	snapshotID   int64
	commitMillis int64
	err          error
	end          bool
	// fatal marks an error after which the reader cannot go on without
	// skipping rows (a row that cannot be rendered): it is reported on
	// every ReadBatch from then on.
	fatal bool
}

// Longest wait between retries after an error.
const maxRetryWait = 30 * time.Second

// renderJob is one message batch to render: consecutive rows of one
// snapshot, with the metadata of each run of rows from one file.
type renderJob struct {
	build        *messageBuilder
	rows         [][]any
	kinds        []kv.RowKind // of each row, primary-key tables only (nil otherwise)
	runs         []metaRun
	plan         *trackedPlan
	snapshotID   int64
	commitMillis int64
	res          chan readResult // capacity 1: filled once, by a worker or by the reader
}

// metaRun is n rows of one file from position pos on.
type metaRun struct {
	mv  *metaValues
	pos int64
	n   int
}

// snapshotReader is the input's background reader, a small pipeline whose
// goroutines run from start until stop:
//
//   - the reader takes the scanner's plans in snapshot order and reads their
//     splits in order (files by sequence number, each row group by row
//     group, the next file opened while the current one is read), cutting
//     the rows into jobs of batch_size rows that never span two snapshots;
//   - workers (one per CPU, at most 4) render the jobs' rows into messages,
//     which is most of the input's CPU time;
//   - the sender hands the rendered batches to ReadBatch in the order the
//     reader cut them, whatever the order the workers finish in.
//
// Errors and the end of a bounded read travel the same ordered queue. At
// most about workers+3 batches are held in memory.
type snapshotReader struct {
	in         *Input
	table      *lakecore.Table
	scanner    *scan.StreamScanner
	projection []string
	tread      *read.TableRead
	build      *messageBuilder
	partKeys   []types.DataField
	partOpts   binrow.PartitionOptions
	workers    int
	keyed      bool // a primary-key table: rows carry row kinds
	// watchDir is the local snapshot directory to watch ("" elsewhere);
	// watch is its watch once set up (owned by run, closed when it ends).
	watchDir string
	watch    *dirWatch
	// probing: the reader probes for the next snapshot between polls
	// (probe.go): on object stores, tailing, without the tests' idle hook.
	// caughtUp is set once a poll found no new snapshot, and cleared when a
	// probe finds a backlog. probes is the schedule (owned by run).
	probing  bool
	caughtUp bool
	probes   probeSchedule
	// filter is the bound partition_filter (nil: none); files counts the
	// data files the plans read, so that a bounded read whose filter
	// matched nothing can say so when it ends.
	filter *partition.Predicate
	files  int

	jobs    chan *renderJob // to the workers
	pending chan *renderJob // in order, to the sender
	out     chan readResult // to ReadBatch
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newSnapshotReader(in *Input, tbl *lakecore.Table, scanner *scan.StreamScanner, projection []string) (*snapshotReader, error) {
	w := min(max(runtime.GOMAXPROCS(0), 1), 4)
	r := &snapshotReader{
		in: in, table: tbl, scanner: scanner, projection: projection, workers: w,
		jobs: make(chan *renderJob), pending: make(chan *renderJob, w+1), out: make(chan readResult),
		watchDir: snapshotDir(tbl),
	}
	r.probing = r.watchDir == "" && !in.conf.Bounded && in.idle == nil
	r.probes = newProbeSchedule(in.conf.DiscoveryInterval)
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
	tr.SetLatestChanges(!r.in.conf.Changelog)
	partOpts, err := s.Opts().PartitionOptions()
	if err != nil {
		return err
	}
	r.tread = tr
	r.keyed = len(s.PrimaryKeys) > 0
	r.build = newMessageBuilder(tr.Fields(), r.in.conf.MessageFormat == MessageFormatJSON)
	r.partKeys = s.PartitionFields()
	r.partOpts = partOpts
	return nil
}

func (r *snapshotReader) start(t *ackTracker) {
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.wg.Add(2 + r.workers)
	go func() { defer r.wg.Done(); r.run(t) }()
	go func() { defer r.wg.Done(); r.deliver() }()
	for range r.workers {
		go func() { defer r.wg.Done(); r.work() }()
	}
}

// stop cancels the pipeline and waits for its goroutines.
func (r *snapshotReader) stop() {
	r.cancel()
	r.wg.Wait()
}

// queue appends a job to the ordered queue; false once stopped.
func (r *snapshotReader) queue(job *renderJob) bool {
	select {
	case r.pending <- job:
		return true
	case <-r.ctx.Done():
		return false
	}
}

// send queues a result that needs no rendering (an error, the end).
func (r *snapshotReader) send(res readResult) bool {
	job := &renderJob{res: make(chan readResult, 1)}
	job.res <- res
	return r.queue(job)
}

// dispatch queues a job and hands it to a worker; false once stopped.
func (r *snapshotReader) dispatch(job *renderJob) bool {
	if !r.queue(job) {
		return false
	}
	select {
	case r.jobs <- job:
		return true
	case <-r.ctx.Done():
		return false
	}
}

// work renders jobs until the reader stops.
func (r *snapshotReader) work() {
	for {
		select {
		case job := <-r.jobs:
			job.res <- r.render(job)
		case <-r.ctx.Done():
			return
		}
	}
}

func (r *snapshotReader) render(job *renderJob) readResult {
	batch := make(service.MessageBatch, 0, len(job.rows))
	var scratch rowScratch
	k := 0
	for _, run := range job.runs {
		for j := range run.n {
			kind := noKind
			if job.kinds != nil {
				kind = job.kinds[k]
			}
			msg, err := job.build.message(job.rows[k], run.mv, run.pos+int64(j), kind, &scratch)
			if err != nil {
				return readResult{fatal: true, err: fmt.Errorf("paimon input on %s: snapshot %d, data file %s, row %d: %w",
					r.in.conf.Table, job.snapshotID, run.mv.file, run.pos+int64(j), err)}
			}
			batch = append(batch, msg)
			k++
		}
	}
	return readResult{batch: batch, plan: job.plan, snapshotID: job.snapshotID, commitMillis: job.commitMillis}
}

// deliver hands results to ReadBatch in queue order.
func (r *snapshotReader) deliver() {
	for {
		var job *renderJob
		select {
		case job = <-r.pending:
		case <-r.ctx.Done():
			return
		}
		var res readResult
		select {
		case res = <-job.res:
		case <-r.ctx.Done():
			return
		}
		for {
			select {
			case r.out <- res:
			case <-r.ctx.Done():
				return
			}
			if !res.fatal {
				break
			}
		}
		if res.end {
			return
		}
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

// waitForSnapshot waits up to d for a new snapshot: until the snapshot
// directory changes (local tables, watch.go) or d passes; false if
// stopped.
func (r *snapshotReader) waitForSnapshot(d time.Duration) bool {
	if r.watch == nil && r.watchDir != "" {
		if w, err := watchDir(r.watchDir); err == nil {
			r.watch = w
		}
	}
	if r.watch == nil {
		return r.sleep(d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.watch.C():
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
	ctx := r.ctx
	defer func() {
		if r.watch != nil {
			r.watch.Close()
		}
	}()
	failures := 0
	fail := func(err error) bool {
		failures++
		if !r.send(readResult{err: err}) {
			return false
		}
		return r.sleep(r.retryWait(failures))
	}
	for {
		if r.caughtUp {
			if next := r.scanner.NextSnapshotID(); next > 0 && !r.probeForSnapshot(ctx, next) {
				return
			}
		}
		start := time.Now()
		plan, err := r.scanner.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if plan != nil {
			r.in.m.scanDuration.Timing(time.Since(start).Nanoseconds())
		}
		switch {
		case errors.Is(err, scan.ErrEndOfScan):
			if r.filter != nil && r.files == 0 {
				// A typo in a value or a type mismatch reads as an empty
				// table otherwise.
				r.in.log.Warnf("paimon input on %s: partition_filter %s matched no partition with data in the snapshots read: the bounded read ends without a row "+
					"(check the values; they are compared after conversion to each key's type)", r.in.conf.Table, r.filter)
			}
			r.send(readResult{end: true})
			return
		case err != nil:
			if !fail(errAdvice(err)) {
				return
			}
			continue
		case plan == nil:
			failures = 0
			if len(r.pending) == 0 {
				r.in.m.lag.Set(0)
			}
			if r.probing && r.scanner.NextSnapshotID() > 0 {
				// Wait by probing (probe.go) before the next poll.
				r.caughtUp = true
				r.probes.polled()
				continue
			}
			wait := r.waitForSnapshot
			if r.in.idle != nil {
				wait = func(d time.Duration) bool { return r.in.idle(ctx, d) }
			}
			if !wait(r.in.conf.DiscoveryInterval) {
				return
			}
			continue
		}
		failures = 0
		r.probes.read()
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

// emitPlan reads every split of plan into jobs registered with tp. A read
// error is reported and the plan resumes, after a wait, at the first row
// not yet taken (the scanner has moved on; the plan must not be lost or
// repeated). It returns false once the reader is stopped.
func (r *snapshotReader) emitPlan(t *ackTracker, tp *trackedPlan, plan *scan.StreamPlan) bool {
	ctx := r.ctx
	snap := plan.Snapshot
	failures := 0
	for snap.SchemaID > r.tread.Schema().ID {
		// Columns were added (or changed) since the input started: read as
		// the newer schema so that new columns appear in the messages.
		err := r.table.Refresh(ctx)
		if err == nil && r.table.Schema().ID > r.tread.Schema().ID {
			err = r.newRead()
		}
		if err == nil {
			break
		}
		failures++
		if !r.send(readResult{err: fmt.Errorf("paimon input on %s: snapshot %d: %w", r.in.conf.Table, snap.ID, err)}) || !r.sleep(r.retryWait(failures)) {
			return false
		}
	}
	job := r.newJob(tp, snap.ID, snap.TimeMillis)
	flush := func() bool {
		if len(job.rows) == 0 {
			return true
		}
		t.Add(tp)
		ok := r.dispatch(job)
		job = r.newJob(tp, snap.ID, snap.TimeMillis)
		return ok
	}
	split, skip := 0, int64(0) // resume point: split index and rows of it already taken
	for _, sp := range plan.Splits {
		r.files += len(sp.Files)
	}
	for split < len(plan.Splits) {
		err := r.readSplit(plan, split, &skip, &job, flush)
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

func (r *snapshotReader) newJob(tp *trackedPlan, snapshotID, commitMillis int64) *renderJob {
	return &renderJob{
		build: r.build, plan: tp, snapshotID: snapshotID, commitMillis: commitMillis,
		rows: make([][]any, 0, min(r.in.conf.BatchSize, 4096)), res: make(chan readResult, 1),
	}
}

// readSplit reads split i of plan from row *skip on, adding the rows to
// *job and calling flush whenever it holds batch_size of them; *skip counts
// the rows of the split taken so far.
func (r *snapshotReader) readSplit(plan *scan.StreamPlan, i int, skip *int64, job **renderJob, flush func() bool) error {
	ctx := r.ctx
	sp := plan.Splits[i]
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
	batchSize := r.in.conf.BatchSize
	var mv *metaValues
	it, err := r.tread.Open(ctx, sp)
	if err != nil {
		return err
	}
	defer it.Close()
	var seen, merged int64
	for {
		next, err := it.Next(ctx)
		rows, pos := next.Rows, next.Pos
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if pos.File == "" {
			// Merged rows of a primary-key table come from several files:
			// paimon_file is empty and paimon_row counts them in the split.
			pos.Row = merged
			merged += int64(len(rows))
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
		if mv == nil || meta.File != pos.File {
			meta.File = pos.File
			mv = newMetaValues(meta, r.keyed, r.in.conf.MetadataKeys)
		}
		for j := from; j < len(rows); j++ {
			(*job).add(rows[j], mv, pos.Row+int64(j))
			if r.keyed {
				kind := kv.Insert
				if next.Kinds != nil {
					kind = next.Kinds[j]
				}
				(*job).kinds = append((*job).kinds, kind)
			}
			*skip++
			if len((*job).rows) >= batchSize && !flush() {
				return r.ctx.Err()
			}
		}
	}
	r.in.m.files.Incr(int64(len(sp.Files)))
	return nil
}

// add appends a row at position pos of the file mv describes.
func (j *renderJob) add(row []any, mv *metaValues, pos int64) {
	j.rows = append(j.rows, row)
	if n := len(j.runs); n > 0 {
		if last := &j.runs[n-1]; last.mv == mv && last.pos+int64(last.n) == pos {
			last.n++
			return
		}
	}
	j.runs = append(j.runs, metaRun{mv: mv, pos: pos, n: 1})
}
