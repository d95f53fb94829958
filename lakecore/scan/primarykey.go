package scan

import (
	"context"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// postponeBucket is the bucket of files a postpone-bucket table
// (bucket = -2) writes; they are invisible until a compaction moves them
// into real buckets (paimon-pk.md §3.4).
const postponeBucket = -2

// keyValueRules are the planning rules of a primary-key table, from the
// options of the snapshot's schema (Java reads the table's current
// options; the ones below cannot be changed by ALTER TABLE except
// deletion-vectors.enabled, whose change Java documents as unsafe).
type keyValueRules struct {
	// skipLevel0 is CoreOptions.batchScanSkipLevel0: batch reads leave out
	// level 0 with deletion vectors or merge-engine first-row.
	skipLevel0 bool
	// producer is changelog-producer.
	producer string
	// maxLevel is num-levels - 1 (default: num-sorted-run.compaction-trigger).
	maxLevel int32
}

// tableRules are the planning rules of one schema of the table.
type tableRules struct {
	// kv are a primary-key table's rules, nil for an append table.
	kv *keyValueRules
	// unaware is true for an append table without buckets (bucket = -1).
	unaware bool
}

// rules returns the rules of schema id. Schemas never change once
// written, so the answer is cached.
func (p *Planner) rules(ctx context.Context, id int64) (tableRules, error) {
	p.mu.Lock()
	r, ok := p.schemaRules[id]
	p.mu.Unlock()
	if ok {
		return r, nil
	}
	s, err := p.schemas.Get(ctx, id)
	if err != nil {
		return r, err
	}
	if len(s.PrimaryKeys) > 0 {
		if r.kv, err = parseKeyValueRules(s.Options); err != nil {
			return r, err
		}
	} else {
		n, err := s.Opts().Bucket()
		if err != nil {
			return r, err
		}
		r.unaware = n == -1
	}
	p.mu.Lock()
	p.schemaRules[id] = r
	p.mu.Unlock()
	return r, nil
}

// keyValueRules returns the rules of schema id, nil for an append table.
func (p *Planner) keyValueRules(ctx context.Context, id int64) (*keyValueRules, error) {
	r, err := p.rules(ctx, id)
	return r.kv, err
}

// parseKeyValueRules reads the rules from a primary-key table's options
// (mergetree.ParseMode, mergetree.UniversalFromOptions).
func parseKeyValueRules(opts map[string]string) (*keyValueRules, error) {
	mode, err := mergetree.ParseMode(opts)
	if err != nil {
		return nil, err
	}
	u, err := mergetree.UniversalFromOptions(opts)
	if err != nil {
		return nil, err
	}
	return &keyValueRules{skipLevel0: mode.SkipLevel0(), producer: mode.ChangelogProducer, maxLevel: u.MaxLevel()}, nil
}

// keepEntries drops the entries keep rejects, in place.
func keepEntries(entries []manifest.Entry, keep func(e *manifest.Entry) bool) []manifest.Entry {
	out := entries[:0]
	for i := range entries {
		if keep(&entries[i]) {
			out = append(out, entries[i])
		}
	}
	return out
}

// batchEntries applies Java's batch scan rules to the live entries of a
// primary-key table: postpone-bucket files are left out
// (snapshotReader.onlyReadRealBuckets) and so is level 0 where
// batchScanSkipLevel0 says (DataTableBatchScan).
func (r *keyValueRules) batchEntries(entries []manifest.Entry) []manifest.Entry {
	return keepEntries(entries, func(e *manifest.Entry) bool {
		return e.Bucket != postponeBucket && !(r.skipLevel0 && e.File.Level == 0)
	})
}

// streamStartEntries applies the level filter of a streaming read's first
// plan (DataTableStreamScan): lookup reads level > 0 (level 0 is yet to be
// compacted into the changelog), full-compaction the top level only.
// Postpone-bucket files, which Java streams raw, wrap ErrUnsupportedFiles.
func (r *keyValueRules) streamStartEntries(entries []manifest.Entry) ([]manifest.Entry, error) {
	for i := range entries {
		if entries[i].Bucket == postponeBucket {
			return nil, fmt.Errorf("%w: %s is in the postpone bucket (bucket = -2): its records are in Avro files, which lakecore does not read, "+
				"until a compaction job moves them into real buckets", ErrUnsupportedFiles, entries[i].File.FileName)
		}
	}
	return keepEntries(entries, func(e *manifest.Entry) bool {
		switch r.producer {
		case "lookup":
			return e.File.Level > 0
		case "full-compaction":
			return e.File.Level == r.maxLevel
		}
		return true
	}), nil
}

// readsChangelog reports whether streaming follow-ups read the changelog
// files of snapshots (ChangelogFollowUpScanner) instead of their delta
// data files (DeltaFollowUpScanner).
func (r *keyValueRules) readsChangelog() bool { return r != nil && r.producer != "none" }

// Changelog plans the changelog files snap added (ScanMode.CHANGELOG): the
// entries of its changelog manifest list, restricted to the partitions f
// passes, as streaming splits. A snapshot without a changelog gives an
// empty plan.
func (p *Planner) Changelog(ctx context.Context, snap *snapshot.Snapshot, f *partition.Predicate) (*Plan, error) {
	list, ok := manifest.ChangelogList(snap)
	if !ok {
		return &Plan{Snapshot: snap}, nil
	}
	plan, err := p.added(ctx, snap, list, f)
	if err != nil {
		return nil, fmt.Errorf("plan changelog of snapshot %d of %s: %w", snap.ID, p.tablePath, err)
	}
	return plan, nil
}
