package scan

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// StartupMode is Paimon's scan.mode for a streaming read
// (paimon-behaviour.md §2.1).
type StartupMode string

// The startup modes a StreamScanner implements.
const (
	// ModeLatestFull (the default): all live files of the latest snapshot,
	// then the deltas of the following snapshots. On a table without
	// snapshots the stream starts at snapshot 1, reading deltas.
	ModeLatestFull StartupMode = "latest-full"
	// ModeFull is the deprecated alias of ModeLatestFull.
	ModeFull StartupMode = "full"
	// ModeLatest: no initial data; the deltas of the snapshots after the
	// latest one (from snapshot 1 on a table without snapshots).
	ModeLatest StartupMode = "latest"
	// ModeFromTimestamp: the deltas of the snapshots committed at or after
	// StreamOptions.TimestampMillis: the stream starts after the latest
	// snapshot with a time before it, or at the earliest snapshot when even
	// that one is not before it.
	ModeFromTimestamp StartupMode = "from-timestamp"
	// ModeFromSnapshot: the deltas of snapshots from StreamOptions.SnapshotID
	// on, inclusive; an expired id starts at the earliest snapshot.
	ModeFromSnapshot StartupMode = "from-snapshot"
	// ModeFromSnapshotFull: all live files of snapshot
	// StreamOptions.SnapshotID (the earliest one if it expired), then the
	// deltas of the following snapshots.
	ModeFromSnapshotFull StartupMode = "from-snapshot-full"
)

// OnExpired values of StreamOptions.
const (
	// OnExpiredError makes Next fail with ErrSnapshotExpired (the default).
	OnExpiredError = "error"
	// OnExpiredEarliest makes the stream jump to the earliest retained
	// snapshot, reporting the gap in StreamPlan.ExpiredFrom.
	OnExpiredEarliest = "earliest"
)

// StreamOptions configure a StreamScanner.
type StreamOptions struct {
	// Mode is the startup mode; "" means ModeLatestFull.
	Mode StartupMode
	// TimestampMillis is the start time of ModeFromTimestamp (epoch ms,
	// compared with Snapshot.TimeMillis).
	TimestampMillis int64
	// SnapshotID is the start of ModeFromSnapshot and ModeFromSnapshotFull.
	SnapshotID int64
	// NextSnapshot > 0 is a consumer position ("all snapshots before it were
	// consumed"); it overrides Mode, as a consumer-id does in Java, and is
	// clamped to the earliest retained snapshot.
	NextSnapshot int64
	// ReadOverwrite makes the stream emit the ADD files of OVERWRITE
	// snapshots (Paimon's streaming-read-append-overwrite); by default they
	// are skipped. Deleted rows are never retracted.
	ReadOverwrite bool
	// OnExpired is OnExpiredError ("" too) or OnExpiredEarliest.
	OnExpired string
	// Filter restricts every plan to some partitions; nil reads all.
	Filter *partition.Predicate
	// Bounded ends the stream (ErrEndOfScan) after the latest snapshot that
	// existed when the scanner started.
	Bounded bool
	// Shard, when set, restricts every plan, the full one and the deltas,
	// to the splits or files of one shard (see Shard); a snapshot without
	// any for this shard gives a plan with no splits, to be acknowledged
	// like a skipped one. Nil reads everything.
	Shard *Shard
}

// StreamPlan is what one StreamScanner.Next call returns: the plan of one
// snapshot.
type StreamPlan struct {
	// Snapshot is the snapshot planned.
	Snapshot *snapshot.Snapshot
	// Full is true for the initial plan of all live files (latest-full and
	// from-snapshot-full), false for the delta of one snapshot.
	Full bool
	// Splits are the data to read. A snapshot the stream skips (COMPACT,
	// ANALYZE, OVERWRITE without ReadOverwrite) gives a plan with no
	// splits, so that its id can be acknowledged like any other.
	Splits []Split
	// NextSnapshot is the consumer position once every row of this plan is
	// processed: Snapshot.ID + 1. Persist it (consumer file, checkpoint)
	// only after the rows of this and all earlier plans are acknowledged.
	NextSnapshot int64
	// ExpiredFrom > 0 reports that snapshots ExpiredFrom .. Snapshot.ID-1
	// had expired before the stream read them and were skipped
	// (OnExpired = "earliest"): their data was lost to this reader.
	ExpiredFrom int64
}

// StreamScanner turns the snapshots of a table into a sequence of plans,
// one snapshot at a time, with Paimon's streaming semantics
// (apache/paimon: paimon-core/.../table/source/DataTableStreamScan.java,
// snapshot/*StartingScanner.java, DeltaFollowUpScanner.java,
// utils/NextSnapshotFetcher.java). It is not safe for concurrent use.
type StreamScanner struct {
	o         StreamOptions
	snapshots *snapshot.Manager
	// changelogs are the long-lived changelogs of a table whose changelog
	// outlives its snapshots: read in place of expired snapshots.
	changelogs *snapshot.ChangelogManager
	planner    *Planner

	started   bool
	full      *snapshot.Snapshot // pending initial full plan
	next      int64              // next snapshot to read as a delta
	end       int64              // Bounded: last snapshot to read (0: none)
	jumpedAt  int64              // ExpiredFrom of the next plan
	tablePath string
}

// NewStreamScanner returns a scanner of the table at tablePath; nothing is
// read until the first Next.
func NewStreamScanner(fio storage.FileIO, tablePath string, o StreamOptions) *StreamScanner {
	return NewStreamScannerWith(NewPlanner(fio, tablePath), snapshot.NewManager(fio, tablePath), o)
}

// NewStreamScannerWith is NewStreamScanner sharing an existing Planner (and
// its schema cache) and snapshot manager.
func NewStreamScannerWith(p *Planner, snapshots *snapshot.Manager, o StreamOptions) *StreamScanner {
	return &StreamScanner{o: o, snapshots: snapshots, changelogs: snapshot.NewChangelogManager(p.fio, p.tablePath), planner: p, tablePath: p.tablePath}
}

// Next returns the plan of the next snapshot: the initial full plan first if
// the mode has one, then one plan per snapshot in id order. It returns
// (nil, nil) when the next snapshot does not exist yet (poll again later),
// and ErrEndOfScan once a Bounded stream is done.
//
// An expired snapshot kept as a long-lived changelog
// (changelog/changelog-<id>, a table whose changelog.num-retained.* or
// changelog.time-retained outlive its snapshots) is read from that
// changelog, as Java's NextSnapshotFetcher does; from-snapshot and
// consumer positions start at the earliest such changelog
// (ContinuousFromSnapshotStartingScanner).
//
// Snapshots are never silently skipped: if the next snapshot expired before
// it was read (and no changelog keeps it), Next fails with
// ErrSnapshotExpired (unless OnExpired is "earliest"; Java waits forever
// on a decoupled table), and if the next snapshot id is beyond latest+1
// (the table was recreated) with ErrSnapshotTooBig. Both checks run on every poll that
// finds no snapshot, where Java runs them every 16th.
//
// After an error the scanner keeps its position; Next may be retried.
func (s *StreamScanner) Next(ctx context.Context) (*StreamPlan, error) {
	if !s.started {
		ok, err := s.start(ctx)
		if err != nil || !ok {
			return nil, err
		}
	}
	if s.full != nil {
		snap := s.full
		plan, err := s.planner.streamStart(ctx, snap, s.o.Filter)
		if err != nil {
			return nil, err
		}
		splits, err := s.planner.shardSplits(ctx, snap.ID, snap.SchemaID, s.o.Shard, plan.Splits)
		if err != nil {
			return nil, err
		}
		s.full = nil
		s.next = snap.ID + 1
		return &StreamPlan{Snapshot: snap, Full: true, Splits: splits, NextSnapshot: snap.ID + 1}, nil
	}
	if s.o.Bounded && s.next > s.end {
		return nil, ErrEndOfScan
	}
	snap, err := s.snapshots.Get(ctx, s.next)
	if errors.Is(err, snapshot.ErrSnapshotNotFound) {
		return s.missing(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", s.tablePath, err)
	}
	return s.plan(ctx, snap)
}

// NextSnapshotID is the id of the snapshot whose delta the next Next call
// reads once an initial full plan, if any, has been returned; 0 before the
// first Next has resolved the startup mode. A caller that found no snapshot
// can watch for snapshot-<id> to appear (snapshot.Manager.Exists) before it
// calls Next again, as Java's NextSnapshotFetcher checks snapshotExists.
func (s *StreamScanner) NextSnapshotID() int64 {
	if !s.started || s.full != nil {
		return 0
	}
	return s.next
}

// plan plans snap (a snapshot or a long-lived changelog) as the next delta.
func (s *StreamScanner) plan(ctx context.Context, snap *snapshot.Snapshot) (*StreamPlan, error) {
	sp := &StreamPlan{Snapshot: snap, NextSnapshot: snap.ID + 1, ExpiredFrom: s.jumpedAt}
	rules, err := s.planner.keyValueRules(ctx, snap.SchemaID)
	if err != nil {
		return nil, fmt.Errorf("stream %s: snapshot %d: %w", s.tablePath, snap.ID, err)
	}
	switch {
	case rules.readsChangelog():
		// ChangelogFollowUpScanner: every snapshot with a changelog,
		// whatever its kind (lookup and full-compaction changelogs come
		// with COMPACT snapshots).
		plan, err := s.planner.Changelog(ctx, snap, s.o.Filter)
		if err != nil {
			return nil, err
		}
		sp.Splits = plan.Splits
	case s.scans(snap.CommitKind):
		plan, err := s.planner.Delta(ctx, snap, s.o.Filter)
		if err != nil {
			return nil, err
		}
		sp.Splits = plan.Splits
	}
	if sp.Splits, err = s.planner.shardSplits(ctx, snap.ID, snap.SchemaID, s.o.Shard, sp.Splits); err != nil {
		return nil, err
	}
	s.next = snap.ID + 1
	s.jumpedAt = 0
	return sp, nil
}

// scans is DeltaFollowUpScanner.shouldScanSnapshot for an append table:
// APPEND always, OVERWRITE with streaming-read-append-overwrite; COMPACT
// rewrites rows already read and ANALYZE adds none.
func (s *StreamScanner) scans(k snapshot.CommitKind) bool {
	switch k {
	case snapshot.CommitAppend:
		return true
	case snapshot.CommitOverwrite:
		return s.o.ReadOverwrite
	}
	return false
}

// missing handles a next snapshot that does not exist: not written yet,
// expired, or belonging to a recreated table (NextSnapshotFetcher.rangeCheck).
func (s *StreamScanner) missing(ctx context.Context) (*StreamPlan, error) {
	earliest, hasEarliest, err := s.snapshots.EarliestID(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", s.tablePath, err)
	}
	latest, hasLatest, err := s.snapshots.LatestID(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", s.tablePath, err)
	}
	if hasEarliest && earliest > s.next {
		// Expired, unless a long-lived changelog keeps it.
		c, err := s.changelogs.Get(ctx, s.next)
		if err == nil {
			return s.plan(ctx, c)
		}
		if !errors.Is(err, snapshot.ErrSnapshotNotFound) {
			return nil, fmt.Errorf("stream %s: %w", s.tablePath, err)
		}
		if s.o.OnExpired == OnExpiredEarliest {
			if s.jumpedAt == 0 {
				s.jumpedAt = s.next
			}
			// The oldest changelog or snapshot after the one that is gone.
			to := earliest
			ids, err := s.changelogs.ListIDs(ctx)
			if err != nil {
				return nil, fmt.Errorf("stream %s: %w", s.tablePath, err)
			}
			if i, _ := slices.BinarySearch(ids, s.next); i < len(ids) && ids[i] < to {
				to = ids[i]
			}
			s.next = to
			return s.Next(ctx)
		}
		return nil, fmt.Errorf("stream %s: %w: The wanted read snapshot with id %d has expired (earliest snapshot id: %d, latest snapshot id: %d). "+
			"You can: 1. increase the snapshot or changelog expiration time. 2. use consumer-id to ensure that unconsumed snapshots will not be expired",
			s.tablePath, ErrSnapshotExpired, s.next, earliest, latest)
	}
	if (!hasEarliest && s.next > 1) || (hasLatest && s.next > latest+1) {
		latestText := "N/A"
		if hasLatest {
			latestText = fmt.Sprint(latest)
		}
		return nil, fmt.Errorf("stream %s: %w: The next expected snapshot is too big! Most possible cause might be the table had been recreated. "+
			"The next snapshot id is %d, while the latest snapshot id is %s", s.tablePath, ErrSnapshotTooBig, s.next, latestText)
	}
	return nil, nil
}

// start resolves the startup mode. ok is false while the mode cannot start
// yet (from-timestamp and from-snapshot-full on a table without snapshots
// wait for the first one, as Java's starting scanners return NoSnapshot).
func (s *StreamScanner) start(ctx context.Context) (ok bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("start stream of %s: %w", s.tablePath, err)
		}
	}()
	latest, hasLatest, err := s.snapshots.LatestID(ctx)
	if err != nil {
		return false, err
	}
	earliest, hasEarliest, err := s.snapshots.EarliestID(ctx)
	if err != nil {
		return false, err
	}
	if s.o.Bounded {
		if !hasLatest {
			return false, ErrEndOfScan
		}
		// The LATEST hint is trusted while the next id is absent, without
		// reading the snapshot it names: one left pointing at nothing would
		// make the bounded stream wait for snapshots that never come.
		if _, err := s.snapshots.Get(ctx, latest); err != nil {
			return false, fmt.Errorf("bounded stream ends at the latest snapshot %d: %w", latest, err)
		}
		s.end = latest
	}
	if s.o.Shard != nil {
		if err := s.o.Shard.Validate(); err != nil {
			return false, err
		}
	}
	switch s.o.OnExpired {
	case "", OnExpiredError, OnExpiredEarliest:
	default:
		return false, fmt.Errorf("%w: OnExpired %q (want %q or %q)", ErrInvalidOptions, s.o.OnExpired, OnExpiredError, OnExpiredEarliest)
	}
	clamp := func(id int64) int64 {
		if hasEarliest && id < earliest {
			return earliest
		}
		return id
	}
	// From-snapshot and consumer positions are clamped to the earliest
	// long-lived changelog when there is one, else to the earliest
	// snapshot (ContinuousFromSnapshotStartingScanner.getEarliestId); a
	// full plan needs a snapshot.
	changelogs, err := s.changelogs.ListIDs(ctx)
	if err != nil {
		return false, err
	}
	clampDelta := func(id int64) int64 {
		if len(changelogs) > 0 {
			return max(id, changelogs[0])
		}
		return clamp(id)
	}
	switch {
	case s.o.NextSnapshot > 0:
		// A consumer position overrides scan.mode
		// (AbstractDataTableScan.createStartingScanner).
		s.next = clampDelta(s.o.NextSnapshot)
	case s.o.NextSnapshot < 0:
		return false, fmt.Errorf("%w: negative NextSnapshot %d", ErrInvalidOptions, s.o.NextSnapshot)
	default:
		switch s.o.Mode {
		case "", ModeLatestFull, ModeFull:
			if !hasLatest {
				s.next = 1
				break
			}
			if s.full, err = s.snapshots.Get(ctx, latest); err != nil {
				return false, err
			}
		case ModeLatest:
			s.next = latest + 1 // 1 when there is no snapshot
		case ModeFromTimestamp:
			if !hasLatest {
				return false, nil
			}
			before, err := s.snapshots.EarlierThan(ctx, s.o.TimestampMillis)
			if err != nil {
				return false, err
			}
			if before != nil {
				s.next = before.ID + 1
			} else {
				s.next = earliest
			}
		case ModeFromSnapshot:
			if s.o.SnapshotID < 1 {
				return false, fmt.Errorf("%w: mode %s needs a snapshot id >= 1, got %d", ErrInvalidOptions, s.o.Mode, s.o.SnapshotID)
			}
			s.next = clampDelta(s.o.SnapshotID)
		case ModeFromSnapshotFull:
			if s.o.SnapshotID < 1 {
				return false, fmt.Errorf("%w: mode %s needs a snapshot id >= 1, got %d", ErrInvalidOptions, s.o.Mode, s.o.SnapshotID)
			}
			if !hasLatest {
				return false, nil
			}
			id := clamp(s.o.SnapshotID)
			if id > latest {
				return false, fmt.Errorf("%w: snapshot %d does not exist yet (latest is %d)", ErrInvalidOptions, id, latest)
			}
			if s.full, err = s.snapshots.Get(ctx, id); err != nil {
				return false, err
			}
		default:
			return false, fmt.Errorf("%w: unknown startup mode %q (want %s, %s, %s, %s or %s)", ErrInvalidOptions, s.o.Mode,
				ModeLatestFull, ModeLatest, ModeFromTimestamp, ModeFromSnapshot, ModeFromSnapshotFull)
		}
	}
	s.started = true
	return true, nil
}
