package paimon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// Group commit.
//
// Every WriteBatch writes its own data files and hands the resulting commit
// messages to the one groupCommitter of the output. Its goroutine takes
// every request that is waiting when it becomes free and commits them
// together as one snapshot under the next commit identifier, then answers
// each request. While a commit runs, the batches finishing meanwhile queue
// up and form the next group, so the number of snapshots adapts to the
// commit latency instead of growing with max_in_flight.
//
// Identifiers: Paimon identifies a commit by (commit user, identifier) with
// identifiers strictly increasing per user (FileStoreCommitImpl). The output
// starts after the identifier of its user's latest snapshot and takes the
// next one for every group it tries to commit, whatever the outcome: an
// identifier whose commit may have landed is never reused.
//
// Outcomes (commitResult): committed; failed definitely (nothing landed:
// the data files are deleted and the batches nacked, so Benthos delivers
// them again); or unknown. An unknown outcome (commit.ErrCommitAmbiguous:
// the snapshot write timed out or the connection dropped, and the
// Committer's own look-ups with FindCommit did not settle it) is resolved
// here before anyone is answered: FilterCommitted asks whether the user's
// latest snapshot reached the identifier; if it did, the batches are
// acknowledged; if not, the same messages are committed again under the
// same identifier. Only if that keeps failing ambiguously are the batches
// nacked, with their files kept (they may be referenced by a snapshot that
// appears later; orphan cleanup removes them otherwise), because deleting
// them could corrupt a snapshot that did land.

// Request states: a request is taken by the committer or abandoned by its
// WriteBatch (hard stop), whichever comes first.
const (
	reqPending int32 = iota
	reqTaken
	reqAbandoned
)

// commitRequest is one batch's prepared files waiting for a snapshot.
type commitRequest struct {
	msgs        []commit.Message
	rows, bytes int64
	files       int64
	// positions are the source offsets the batch commits (nil without
	// source_position).
	positions *batchPositions
	// truncate: the batch empties the table before its own rows (a
	// truncate message), so it is committed as an OVERWRITE of the whole
	// table.
	truncate bool
	state    atomic.Int32
	done     chan commitResult // buffered: the committer never blocks on it
}

// commitResult is the outcome of the group a request was committed in.
type commitResult struct {
	snap *snapshot.Snapshot
	err  error
	// definite is set with err when nothing of the group was committed
	// and nothing can be any more: the data files may be deleted.
	definite bool
}

// maxResolveRounds bounds how often an unknown commit outcome is looked up
// (and the commit retried) before the batches are nacked.
const maxResolveRounds = 4

// resolveWait is the first wait before looking up an unknown outcome; it
// doubles every round.
const resolveWait = 500 * time.Millisecond

type groupCommitter struct {
	c         *commit.Committer
	snapshots *snapshot.Manager
	user      string
	log       *service.Logger
	met       *outputMetrics
	progress  time.Duration // demo progress log interval; 0 = off
	onCommit  func(*snapshot.Snapshot)
	// positions records source positions in every commit; nil without
	// source_position.
	positions *positionTracker

	nextID int64 // owned by run

	// submitMu makes closing and submitting mutually exclusive, so that no
	// request is queued after the committer's final drain.
	submitMu sync.RWMutex
	closing  bool
	reqs     chan *commitRequest
	stop     chan struct{} // closed by close: commit what is queued, then exit
	done     chan struct{} // closed when run returns

	// ctx is cancelled by close when its caller gives up waiting (hard
	// stop): commits in flight are cut short and end ambiguous.
	ctx    context.Context
	cancel context.CancelFunc

	// progress log state, owned by run
	lastLog                time.Time
	rowsSinceLog, snapsLog int64
	totalRows              int64
}

func newGroupCommitter(c *commit.Committer, snapshots *snapshot.Manager, nextID int64, queue int,
	log *service.Logger, met *outputMetrics, progress time.Duration, onCommit func(*snapshot.Snapshot)) *groupCommitter {
	ctx, cancel := context.WithCancel(context.Background())
	return &groupCommitter{
		c: c, snapshots: snapshots, user: c.User(), log: log, met: met, progress: progress, onCommit: onCommit,
		nextID: nextID,
		reqs:   make(chan *commitRequest, queue),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		ctx:    ctx, cancel: cancel,
		lastLog: time.Now(),
	}
}

// errCommitterClosed is returned to batches submitted after Close.
var errCommitterClosed = errors.New("paimon output is closed")

// submit queues req and waits for its group's outcome. When ctx ends first
// (a hard stop) and the committer has not taken the request yet, the
// request is withdrawn and the result is definite; otherwise the outcome is
// unknown.
func (g *groupCommitter) submit(ctx context.Context, req *commitRequest) commitResult {
	req.done = make(chan commitResult, 1)
	g.submitMu.RLock()
	if g.closing {
		g.submitMu.RUnlock()
		return commitResult{err: errCommitterClosed, definite: true}
	}
	select {
	case g.reqs <- req:
	case <-ctx.Done():
		g.submitMu.RUnlock()
		return commitResult{err: ctx.Err(), definite: true}
	}
	g.submitMu.RUnlock()
	select {
	case res := <-req.done:
		return res
	case <-ctx.Done():
		if req.state.CompareAndSwap(reqPending, reqAbandoned) {
			return commitResult{err: ctx.Err(), definite: true}
		}
		return commitResult{err: fmt.Errorf("stopped while the commit was running, its outcome is unknown: %w", ctx.Err())}
	}
}

// run is the committer goroutine.
func (g *groupCommitter) run() {
	defer close(g.done)
	for {
		var group []*commitRequest
		select {
		case r := <-g.reqs:
			group = append(group, r)
		case <-g.stop:
			// close holds submitMu while it closes stop: nothing more
			// arrives. Commit the rest.
			if group = g.drain(group); len(group) > 0 {
				g.commitGroup(group)
			}
			return
		}
		g.commitGroup(g.drain(group))
	}
}

// drain adds every request waiting now to group.
func (g *groupCommitter) drain(group []*commitRequest) []*commitRequest {
	for {
		select {
		case r := <-g.reqs:
			group = append(group, r)
		default:
			return group
		}
	}
}

// close stops accepting requests, lets the goroutine commit what is queued
// and waits for it. When ctx ends first, commits in flight are cancelled
// and close still waits for the goroutine to return, which it does
// promptly.
func (g *groupCommitter) close(ctx context.Context) error {
	g.submitMu.Lock()
	if !g.closing {
		g.closing = true
		close(g.stop)
	}
	g.submitMu.Unlock()
	select {
	case <-g.done:
		g.cancel()
		return nil
	case <-ctx.Done():
		g.cancel()
		<-g.done
		return ctx.Err()
	}
}

// commitGroup commits the requests still wanted and answers each: as one
// snapshot, unless some truncate the table. Each truncating request starts
// a commit of its own, an OVERWRITE of the whole table with the files of
// the requests from it up to the next truncating one, as Java's
// FileStoreCommitImpl.truncateTable (tryOverwrite with no partition filter)
// does when there are none: every live file deleted, index entries dropped.
// The requests before it commit first, so that the table's end state
// follows their order in the queue.
func (g *groupCommitter) commitGroup(group []*commitRequest) {
	live := group[:0]
	for _, r := range group {
		if r.state.CompareAndSwap(reqPending, reqTaken) {
			live = append(live, r)
		}
	}
	for len(live) > 0 {
		n := 1
		for n < len(live) && !live[n].truncate {
			n++
		}
		g.commitRequests(live[:n])
		live = live[n:]
	}
}

// commitRequests commits live, taken requests as one snapshot (an
// OVERWRITE of the whole table when the first truncates it) under the next
// identifier and answers each.
func (g *groupCommitter) commitRequests(live []*commitRequest) {
	var msgs []commit.Message
	var rows, files, bytes int64
	for _, r := range live {
		msgs = append(msgs, r.msgs...)
		rows += r.rows
		files += r.files
		bytes += r.bytes
	}
	overwrite := live[0].truncate
	id := g.nextID
	g.nextID++

	var opts []commit.CommitOption
	applyPositions := func() {}
	if g.positions != nil {
		batches := make([]*batchPositions, 0, len(live))
		for _, r := range live {
			if r.positions != nil {
				batches = append(batches, r.positions)
			}
		}
		var props map[string]string
		props, applyPositions = g.positions.properties(batches)
		opts = append(opts, commit.WithProperties(props))
	}

	start := time.Now()
	var snap *snapshot.Snapshot
	var err error
	if overwrite {
		snap, err = g.c.Overwrite(g.ctx, id, nil, msgs, opts...)
	} else {
		snap, err = g.c.Commit(g.ctx, id, msgs, opts...)
	}
	ambiguous := err != nil && errors.Is(err, commit.ErrCommitAmbiguous)
	if ambiguous && errors.Is(err, commit.ErrStaleSnapshot) {
		// The snapshot was created while expiry deleted the ones above
		// it; whether its files reached the table cannot be looked up, and
		// committing the same files again could add them twice. The batches
		// are delivered again (as new files) and their old files kept.
		g.log.Warnf("Commit %d of %d batches raced snapshot expiry and its outcome cannot be known; the batches will be delivered again: %v", id, len(live), err)
	} else if ambiguous {
		g.log.Warnf("Commit %d of %d batches has an unknown outcome, resolving it through commit user %q: %v", id, len(live), g.user, err)
		snap, err = g.resolve(g.ctx, id, msgs, overwrite, err, opts)
	}
	g.met.commitLatency.Timing(time.Since(start).Nanoseconds())

	res := commitResult{snap: snap, err: err}
	if err != nil {
		// Definite only if no attempt of this group had an unknown outcome
		// and the commit was not cut short: the Committer marks unknown
		// outcomes with ErrCommitAmbiguous, a cancelled context is treated
		// as unknown too.
		res.definite = !ambiguous && !errors.Is(err, commit.ErrCommitAmbiguous) && g.ctx.Err() == nil
		res.err = fmt.Errorf("commit %d (%d batches, %d rows) as user %q: %w", id, len(live), rows, g.user, err)
		g.met.commitFailures.Incr(1)
		g.log.Errorf("Failed to commit %d batches (%d rows); they will be delivered again: %v", len(live), rows, res.err)
	} else {
		applyPositions()
		g.met.commits.Incr(1)
		g.met.rowsWritten.Incr(rows)
		g.met.filesWritten.Incr(files)
		g.met.bytesWritten.Incr(bytes)
		if snap != nil {
			g.met.lastSnapshotID.Set(snap.ID)
			g.log.Debugf("Committed snapshot %d (identifier %d): %d rows in %d files from %d batches in %v",
				snap.ID, id, rows, files, len(live), time.Since(start).Round(time.Millisecond))
		}
		g.logProgress(snap, rows)
		if overwrite && snap != nil {
			g.log.Infof("Truncated the table: snapshot %d (OVERWRITE, identifier %d) deleted every row and added %d rows written after the truncate",
				snap.ID, id, rows)
		}
	}
	for _, r := range live {
		r.done <- res
	}
	if err == nil && snap != nil && g.onCommit != nil {
		g.onCommit(snap)
	}
}

// resolve settles an unknown outcome of committing msgs under id: it asks
// whether the user's snapshots reached id and, if they did not, commits
// again under the same identifier; up to maxResolveRounds times. The error
// returned still wraps ErrCommitAmbiguous when the outcome stays unknown.
func (g *groupCommitter) resolve(ctx context.Context, id int64, msgs []commit.Message, overwrite bool, err error, opts []commit.CommitOption) (*snapshot.Snapshot, error) {
	wait := resolveWait
	for round := 1; round <= maxResolveRounds; round++ {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (resolution stopped: %v)", err, ctx.Err())
		case <-t.C:
		}
		wait *= 2
		left, ferr := g.c.FilterCommitted(ctx, []int64{id})
		if ferr != nil {
			g.log.Warnf("Looking for commit %d of user %q failed (round %d of %d): %v", id, g.user, round, maxResolveRounds, ferr)
			continue
		}
		if len(left) == 0 {
			s, lerr := g.snapshots.LatestOfUser(ctx, g.user)
			if lerr != nil || s == nil || s.CommitIdentifier != id {
				s = nil // landed, but which snapshot is not known: fine for the ack
			}
			g.log.Infof("Commit %d of user %q did land; its batches are acknowledged", id, g.user)
			return s, nil
		}
		g.log.Infof("Commit %d of user %q did not land; committing it again", id, g.user)
		var snap *snapshot.Snapshot
		if overwrite {
			// An overwrite has no recovery check: it deletes what is live
			// at its attempt and adds its files, so the table ends with
			// this batch's rows either way.
			snap, err = g.c.Overwrite(ctx, id, nil, msgs, opts...)
		} else {
			// With Java's recovery check: if the commit did land and expiry
			// already removed its snapshot from view, its files are live and
			// are not added a second time.
			snap, err = g.c.CommitRecovered(ctx, id, msgs, opts...)
		}
		if errors.Is(err, manifest.ErrDuplicateFile) {
			g.log.Infof("Commit %d of user %q did land (its files are in the table); its batches are acknowledged", id, g.user)
			return nil, nil
		}
		if err == nil || !errors.Is(err, commit.ErrCommitAmbiguous) {
			return snap, err
		}
	}
	return nil, err
}

// logProgress writes the demo's periodic progress line.
func (g *groupCommitter) logProgress(snap *snapshot.Snapshot, rows int64) {
	if g.progress <= 0 {
		return
	}
	g.rowsSinceLog += rows
	g.totalRows += rows
	g.snapsLog++
	since := time.Since(g.lastLog)
	if since < g.progress {
		return
	}
	var id int64
	if snap != nil {
		id = snap.ID
	}
	g.log.Infof("Snapshot %d committed: %.0f rows/s over the last %v (%d rows in %d snapshots), %d rows written since start",
		id, float64(g.rowsSinceLog)/since.Seconds(), since.Round(time.Second), g.rowsSinceLog, g.snapsLog, g.totalRows)
	g.lastLog, g.rowsSinceLog, g.snapsLog = time.Now(), 0, 0
}
