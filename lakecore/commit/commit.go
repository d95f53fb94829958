// Package commit turns written data files into Paimon snapshots: it is
// FileStoreCommitImpl of apache/paimon (paimon-core/src/main/java/org/apache/
// paimon/operation/FileStoreCommitImpl.java, release 1.4.2) for append
// tables.
//
// One commit attempt reads the latest snapshot, writes the commit's delta
// manifests and delta manifest list (once, reused by every retry), merges
// the previous snapshot's manifests into the new base manifest list as
// Java's ManifestFileMerger does, and creates snapshot/snapshot-<latest+1>
// exclusively (snapshot.Manager.Commit). When another writer took the id the
// attempt's merged base files are deleted and the commit is retried with
// backoff (paimon-behaviour.md §1.2). When the snapshot write has an unknown
// outcome the next attempt first looks for its own snapshot
// (commitUser, identifier, kind), so a commit never lands twice, and the
// files of that attempt are never deleted.
package commit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Message is Paimon's CommitMessage (CommitMessageImpl): the files one
// writer changed in one partition and bucket. NewFiles and DeletedFiles are
// the append part, CompactBefore and CompactAfter the compaction part
// (ManifestEntryChanges.collect).
type Message struct {
	// Partition is the serialized partition row (binrow.Serialize of the
	// partition key values; binrow.EmptyRow for an unpartitioned table).
	Partition []byte
	// Bucket is 0 for unaware-bucket tables, where TotalBuckets is -1.
	Bucket, TotalBuckets        int32
	NewFiles, DeletedFiles      []manifest.DataFileMeta
	CompactBefore, CompactAfter []manifest.DataFileMeta
	// Changelog are changelog files of a primary-key table (the input
	// changelog), committed with the append part in the snapshot's
	// changelog manifest list.
	Changelog []manifest.DataFileMeta
	// CompactChangelog are changelog files a compaction produced
	// (CommitMessage.compactIncrement().changelogFiles: changelog-producer
	// lookup), committed with the compaction part in the COMPACT
	// snapshot's changelog manifest list.
	CompactChangelog []manifest.DataFileMeta
	// NewIndexFiles are index files the append part adds to the index
	// manifest (CommitMessage.newFilesIncrement().newIndexFiles): for a
	// dynamic-bucket table the new full HASH file of the bucket. Each
	// replaces the entry of its (partition, bucket, index type)
	// (IndexManifestFileHandler.BucketedCombiner); the replaced file stays
	// for snapshot expiry. Kind, Partition and Bucket are taken from the
	// message.
	NewIndexFiles []manifest.IndexEntry
	// IndexBase, when not nil, says from which HASH index files of the
	// message's partition a dynamic-bucket writer assigned the buckets of
	// new keys; see IndexBase.
	IndexBase *IndexBase
	// CompactIndexFiles are index files the compaction part adds
	// (CommitMessage.compactIncrement().newIndexFiles): for a
	// deletion-vectors table the bucket's new DELETION_VECTORS file,
	// written because a compaction changed the bucket's vectors. Each
	// replaces the entry of its (partition, bucket, index type) in the
	// COMPACT snapshot's index manifest; Kind, Partition and Bucket are
	// taken from the message. Of two files of one bucket in one commit
	// (several Prepare calls of one writer) the later message's is kept.
	CompactIndexFiles []manifest.IndexEntry
	// CompactIndexBase names, with CompactIndexFiles, the DELETION_VECTORS
	// file of the bucket the new vectors were built on ("" for none). The
	// commit fails with ErrConflict, the compaction part not committed, when
	// the latest snapshot's file of the bucket is another one: another
	// writer changed the bucket's vectors meanwhile, and replacing its file
	// would lose its deletions. Nil skips the check.
	CompactIndexBase *string
}

// IndexBase is what a dynamic-bucket writer's assignment of a partition
// rests on. Commit fails with ErrIndexConflict, committing nothing, when
// the latest snapshot's HASH index files of the partition are not Files
// (another writer assigned keys of the partition meanwhile), or when
// messages of two different Writers change the index of one partition in
// one commit (two assignments that did not see each other). Messages of
// several Prepare calls of one writer may be committed together: their
// base is the union of their Files without the files the commit adds, and
// of two new HASH files of one bucket the one with more hashes (the later
// full file) is kept.
type IndexBase struct {
	// Writer identifies the assigning writer (KeyValueWriter uses the UUID
	// of its files).
	Writer string
	// Files are HASH index file names, in any order: those the writer
	// restored, updated with the ones of its own earlier batches.
	Files []string
}

// Options configure a Committer. A zero field takes Paimon's default
// (paimon-behaviour.md §6): MaxRetries 10 (negative: no retry),
// MinRetryWait 10 ms, MaxRetryWait 10 s, Timeout unlimited, ManifestCodec
// zstd level 1, ManifestTargetFileSize 8 MiB, ManifestMergeMinCount 30,
// ManifestFullCompactionThreshold 16 MiB, Now time.Now; an empty CommitUser
// becomes a random UUID.
type Options struct {
	// CommitUser identifies the writing job; with the commit identifier it
	// makes commits idempotent (FilterCommitted). Keep it stable across
	// restarts of one job and distinct between jobs.
	CommitUser string
	// MaxRetries is commit.max-retries.
	MaxRetries int
	// MinRetryWait and MaxRetryWait are commit.min-retry-wait and
	// commit.max-retry-wait (RetryWaiter: min(min*2^n, max) + up to 20%).
	MinRetryWait, MaxRetryWait time.Duration
	// Timeout is commit.timeout: no retry starts after it.
	Timeout time.Duration
	// ManifestCodec compresses manifests and manifest lists
	// (manifest.compression, file.compression.zstd-level).
	ManifestCodec manifest.Codec
	// ManifestTargetFileSize is manifest.target-file-size: manifests roll
	// at this size and smaller ones are merged.
	ManifestTargetFileSize int64
	// ManifestMergeMinCount is manifest.merge-min-count.
	ManifestMergeMinCount int
	// ManifestFullCompactionThreshold is
	// manifest.full-compaction-threshold-size.
	ManifestFullCompactionThreshold int64
	// IgnoreEmptyCommit skips a Commit without any file change instead of
	// writing an empty APPEND snapshot (snapshot.ignore-empty-commit; Java's
	// streaming writers keep empty commits so that a restarted job can tell
	// what was committed, batch writers ignore them).
	IgnoreEmptyCommit bool
	// PrimaryKey marks a primary-key table: every commit then checks that
	// no other writer committed to the buckets it writes since it restored
	// them (ErrSequenceConflict) and that the files of each level above 0
	// of a bucket do not overlap (ConflictDetection.checkKeyRange).
	PrimaryKey bool
	// PostponeBucket marks a table with bucket = -2: Overwrite then also
	// deletes the files of the postpone bucket (-2), which other tables'
	// overwrites leave alone (CommitScanner.readOverwriteChanges).
	PostponeBucket bool
	// Now is the clock of snapshot timeMillis.
	Now func() time.Time
	// OnRetry, when set, is called on the committing goroutine before
	// each further attempt of a commit, with the error of the attempt that
	// did not commit (another writer took the snapshot id, the snapshot
	// write failed or has an unknown outcome, the attempt raced snapshot
	// expiry): a hook for metrics.
	OnRetry func(err error)
}

// Paimon 1.4's defaults (CoreOptions.java).
const (
	defaultMaxRetries         = 10
	defaultMinRetryWait       = 10 * time.Millisecond
	defaultMaxRetryWait       = 10 * time.Second
	defaultManifestTarget     = 8 << 20
	defaultMergeMinCount      = 30
	defaultFullCompactionSize = 16 << 20
)

// OptionsFromSchema returns the options a table's schema sets for commits
// by user: commit.max-retries, commit.min-retry-wait, commit.max-retry-wait,
// commit.timeout, manifest.compression, file.compression.zstd-level,
// manifest.target-file-size, manifest.merge-min-count,
// manifest.full-compaction-threshold-size and snapshot.ignore-empty-commit
// (false when unset, as for Java's streaming writers). An option that does
// not parse takes its default; run schema.TableSchema.CheckWritable first
// to reject such tables.
func OptionsFromSchema(s *schema.TableSchema, user string) Options {
	o := s.Opts()
	out := Options{CommitUser: user, PrimaryKey: len(s.PrimaryKeys) > 0}
	if n, err := o.Bucket(); err == nil && n == -2 {
		out.PostponeBucket = true
	}
	if n, err := o.CommitMaxRetries(); err == nil {
		out.MaxRetries = n
		if n == 0 {
			out.MaxRetries = -1 // an explicit 0 means no retry, not the default
		}
	}
	out.MinRetryWait, _ = o.CommitMinRetryWait()
	out.MaxRetryWait, _ = o.CommitMaxRetryWait()
	if t, err := o.CommitTimeout(); err == nil && t < time.Duration(1<<62) {
		out.Timeout = t
	}
	out.ManifestCodec.Name = o.ManifestCompression()
	out.ManifestCodec.ZstdLevel, _ = o.ZstdLevel()
	out.ManifestTargetFileSize, _ = o.ManifestTargetFileSize()
	out.ManifestMergeMinCount, _ = o.ManifestMergeMinCount()
	out.ManifestFullCompactionThreshold, _ = o.ManifestFullCompactionThreshold()
	if v, set, err := o.SnapshotIgnoreEmptyCommit(); err == nil && set {
		out.IgnoreEmptyCommit = v
	}
	return out
}

func (o Options) withDefaults() Options {
	if o.CommitUser == "" {
		o.CommitUser = uuid.NewString()
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = defaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.MinRetryWait <= 0 {
		o.MinRetryWait = defaultMinRetryWait
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = defaultMaxRetryWait
	}
	if o.ManifestTargetFileSize <= 0 {
		o.ManifestTargetFileSize = defaultManifestTarget
	}
	if o.ManifestMergeMinCount <= 0 {
		o.ManifestMergeMinCount = defaultMergeMinCount
	}
	if o.ManifestFullCompactionThreshold <= 0 {
		o.ManifestFullCompactionThreshold = defaultFullCompactionSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Committer commits to one table. It is safe for use by one goroutine at a
// time; use one Committer (with its own CommitUser, or the same user with
// distinct identifiers) per concurrent writer.
type Committer struct {
	fio       storage.FileIO
	tablePath string
	o         Options
	snapshots *snapshot.Manager
	schemas   *schema.Manager
	// manifests reads (and caches) manifests; it and encoder keep parsed
	// manifest schemas and zstd state from commit to commit.
	manifests *manifest.Reader
	encoder   *manifest.Encoder

	// partTypes are the partition key types; Paimon never changes them, so
	// they are read once.
	partTypes []types.DataType
	// keyTypes are the trimmed primary-key types of a primary-key table.
	keyTypes  []types.DataType
	partKnown bool
}

// New returns a committer for the table at tablePath (relative to fio's
// root). Nothing is read until the first commit.
func New(fio storage.FileIO, tablePath string, o Options) *Committer {
	o = o.withDefaults()
	return &Committer{
		fio:       fio,
		tablePath: tablePath,
		o:         o,
		snapshots: snapshot.NewManager(fio, tablePath),
		schemas:   schema.NewManager(fio, tablePath),
		manifests: manifest.NewReader(fio, tablePath, manifest.ReaderOptions{CacheEntries: defaultCacheEntries}),
		encoder:   manifest.NewEncoder(o.ManifestCodec),
	}
}

// User returns the commit user of the snapshots this committer writes.
func (c *Committer) User() string { return c.o.CommitUser }

// Options returns the committer's options with defaults applied.
func (c *Committer) Options() Options { return c.o }

// Commit commits msgs under identifier, as FileStoreCommitImpl.commit does:
// the new and deleted files as one APPEND snapshot (OVERWRITE, conflict
// checked, when any file is deleted), then the compaction changes, if any,
// as a COMPACT snapshot. It returns the last snapshot written, or nil when
// there was nothing to commit and Options.IgnoreEmptyCommit is set.
//
// Retries follow Options; see the package comment. Errors wrap ErrConflict,
// ErrRetriesExhausted, ErrCommitAmbiguous or ErrInvalidMessage, or are the
// storage errors of preparing the commit (nothing committed).
func (c *Committer) Commit(ctx context.Context, identifier int64, msgs []Message, opts ...CommitOption) (*snapshot.Snapshot, error) {
	return c.commit(ctx, identifier, msgs, false, opts)
}

// CommitOption changes one call of Commit, CommitRecovered or Overwrite.
type CommitOption func(*commitCall)

type commitCall struct {
	properties map[string]string
}

// WithProperties writes props into the properties of every snapshot the
// call creates (Java's ManifestCommittable.addProperty, which
// FileStoreCommitImpl passes to the APPEND and the COMPACT snapshot of one
// commit alike). Java's readers ignore them; writers keep state there that
// must change atomically with the rows, such as source positions.
func WithProperties(props map[string]string) CommitOption {
	return func(c *commitCall) { c.properties = props }
}

func applyOptions(opts []CommitOption) commitCall {
	var call commitCall
	for _, o := range opts {
		o(&call)
	}
	return call
}

// commit is Commit, and with recovered CommitRecovered: conflict checks
// then run for APPEND commits too.
func (c *Committer) commit(ctx context.Context, identifier int64, msgs []Message, recovered bool, opts []CommitOption) (*snapshot.Snapshot, error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	call := applyOptions(opts)
	appendEntries, compactEntries, changelog, compactLog, err := c.collect(msgs)
	if err != nil {
		return nil, err
	}
	index, err := c.collectIndex(msgs)
	if err != nil {
		return nil, err
	}
	var last *snapshot.Snapshot
	if !c.o.IgnoreEmptyCommit || len(appendEntries) > 0 || len(changelog) > 0 || len(index.adds) > 0 {
		kind, detect := snapshot.CommitAppend, recovered || c.o.PrimaryKey
		if hasDelete(appendEntries) { // ConflictDetection.shouldBeOverwriteCommit
			kind, detect = snapshot.CommitOverwrite, true
		}
		last, err = c.tryCommit(ctx, identifier, kind, detect,
			withProperties(c.withIndex(fixedChangesWithLog(appendEntries, changelog), index), call.properties))
		if err != nil {
			return nil, err
		}
	}
	return c.commitCompaction(ctx, identifier, last, compactEntries, compactLog, collectCompactIndex(msgs), call.properties)
}

// Compact commits compaction results as one COMPACT snapshot: a DELETE entry
// for every CompactBefore file and an ADD for every CompactAfter file, in
// one delta manifest, and the CompactChangelog files in the snapshot's
// changelog manifest list. Every file to delete must still be live in the latest
// snapshot at each attempt and the bucket count of each partition must stay
// the same, else the error wraps ErrConflict and nothing is committed.
// Messages with NewFiles, DeletedFiles or Changelog wrap ErrInvalidMessage (use
// Commit). Without any compaction change it returns (nil, nil).
func (c *Committer) Compact(ctx context.Context, identifier int64, msgs []Message) (*snapshot.Snapshot, error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	appendEntries, compactEntries, changelog, compactLog, err := c.collect(msgs)
	if err != nil {
		return nil, err
	}
	if len(appendEntries) > 0 || len(changelog) > 0 || hasIndexChanges(msgs) {
		return nil, fmt.Errorf("compact %s: %w: messages carry new, deleted, changelog or index files; commit them with Commit", c.tablePath, ErrInvalidMessage)
	}
	index := collectCompactIndex(msgs)
	if len(compactEntries) == 0 && len(compactLog) == 0 && index.empty() {
		return nil, nil
	}
	return c.tryCommit(ctx, identifier, snapshot.CommitCompact, true, c.withIndex(fixedChangesWithLog(compactEntries, compactLog), index))
}

// Overwrite replaces the contents of partitions (serialized partition rows;
// nil means the whole table) by the new files of msgs, as one OVERWRITE
// snapshot (FileStoreCommitImpl.overwritePartition with a static partition
// spec): a DELETE entry for every file live in those partitions in the
// latest snapshot at the time of each attempt, so files appended
// concurrently are deleted too, as in Java, plus an ADD per new file.
// Deletion-vector index entries of those partitions are dropped from the
// index manifest. New files outside partitions wrap ErrInvalidMessage;
// compaction changes in msgs are committed afterwards as a COMPACT
// snapshot. For Paimon's dynamic partition overwrite pass the partitions of
// msgs (PartitionsOf). It returns the last snapshot written.
func (c *Committer) Overwrite(ctx context.Context, identifier int64, partitions [][]byte, msgs []Message, opts ...CommitOption) (*snapshot.Snapshot, error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	call := applyOptions(opts)
	appendEntries, compactEntries, changelog, compactLog, err := c.collect(msgs)
	if err != nil {
		return nil, err
	}
	index, err := c.collectIndex(msgs)
	if err != nil {
		return nil, err
	}
	index.bases = nil // the overwrite replaces the partitions' contents and index entries
	var keep func([]byte) bool
	if partitions != nil {
		set := make(map[string]bool, len(partitions))
		for _, p := range partitions {
			if _, err := binrow.Deserialize(c.partTypes, p); err != nil {
				return nil, fmt.Errorf("overwrite %s: %w: partition to overwrite: %w", c.tablePath, ErrInvalidMessage, err)
			}
			set[string(p)] = true
		}
		keep = func(p []byte) bool { return set[string(p)] }
		for i := range appendEntries {
			if !keep(appendEntries[i].Partition) {
				return nil, fmt.Errorf("overwrite %s: %w: file %s is not in the partitions being overwritten",
					c.tablePath, ErrInvalidMessage, appendEntries[i].File.FileName)
			}
		}
	}
	last, err := c.tryCommit(ctx, identifier, snapshot.CommitOverwrite, true,
		withProperties(c.withIndex(c.overwriteChanges(keep, appendEntries, changelog), index), call.properties))
	if err != nil {
		return nil, err
	}
	return c.commitCompaction(ctx, identifier, last, compactEntries, compactLog, collectCompactIndex(msgs), call.properties)
}

// commitCompaction commits the compaction part of a commit, if any, as a
// COMPACT snapshot after last, the snapshot of the append part; the
// compaction's changelog files go into its changelog manifest list and its
// index files (deletion vectors) into its index manifest.
func (c *Committer) commitCompaction(ctx context.Context, identifier int64, last *snapshot.Snapshot, entries, changelog []manifest.Entry,
	index indexChanges, props map[string]string) (*snapshot.Snapshot, error) {
	if len(entries) == 0 && len(changelog) == 0 && index.empty() {
		return last, nil
	}
	s, err := c.tryCommit(ctx, identifier, snapshot.CommitCompact, true, withProperties(c.withIndex(fixedChangesWithLog(entries, changelog), index), props))
	if err != nil {
		if last != nil && errors.Is(err, ErrConflict) {
			// The append part stands; say so without wrapping ErrConflict,
			// which would tell the caller that nothing was committed.
			return last, fmt.Errorf("%w: %v", ErrCompactionConflict, err)
		}
		return last, err
	}
	return s, nil
}

// PartitionsOf returns the distinct partitions of msgs in first-seen order,
// the partitions a dynamic INSERT OVERWRITE replaces.
func PartitionsOf(msgs []Message) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	for _, m := range msgs {
		if !seen[string(m.Partition)] {
			seen[string(m.Partition)] = true
			out = append(out, m.Partition)
		}
	}
	return out
}

// FilterCommitted returns the identifiers (sorted ascending, without
// duplicates) that this committer's user has not committed yet, as
// FileStoreCommitImpl.filterCommitted does: every identifier up to the
// commitIdentifier of the user's latest snapshot counts as committed; when
// the user has no snapshot left (never committed, or expired) nothing is
// filtered. Call it before re-committing after a restart or an
// ErrCommitAmbiguous.
func (c *Committer) FilterCommitted(ctx context.Context, identifiers []int64) ([]int64, error) {
	if len(identifiers) == 0 {
		return identifiers, nil
	}
	for i := 1; i < len(identifiers); i++ {
		if identifiers[i] <= identifiers[i-1] {
			return nil, fmt.Errorf("filter committed identifiers of %s: identifiers must be sorted ascending and distinct, got %d after %d",
				c.tablePath, identifiers[i], identifiers[i-1])
		}
	}
	latest, err := c.snapshots.LatestOfUser(ctx, c.o.CommitUser)
	if err != nil {
		return nil, fmt.Errorf("filter committed identifiers of %s: %w", c.tablePath, err)
	}
	if latest == nil {
		return identifiers, nil
	}
	var out []int64
	for _, id := range identifiers {
		if id > latest.CommitIdentifier {
			out = append(out, id)
		}
	}
	return out, nil
}

// init loads the partition key types once.
func (c *Committer) init(ctx context.Context) error {
	if c.partKnown {
		return nil
	}
	s, err := c.schemas.Latest(ctx)
	if err != nil {
		return fmt.Errorf("commit to %s: %w", c.tablePath, err)
	}
	fields := s.PartitionFields()
	if len(fields) != len(s.PartitionKeys) {
		return fmt.Errorf("commit to %s: schema %d: partition keys %v are not all fields", c.tablePath, s.ID, s.PartitionKeys)
	}
	c.partTypes = make([]types.DataType, len(fields))
	for i, f := range fields {
		c.partTypes[i] = f.Type
	}
	if len(s.PrimaryKeys) > 0 {
		trimmed, err := kv.TrimmedPrimaryKeys(s.PrimaryKeys, s.PartitionKeys)
		if err != nil {
			return fmt.Errorf("commit to %s: schema %d: %w", c.tablePath, s.ID, err)
		}
		idx, err := kv.FieldIndexes(s.Fields, trimmed)
		if err != nil {
			return fmt.Errorf("commit to %s: schema %d: %w", c.tablePath, s.ID, err)
		}
		c.keyTypes = make([]types.DataType, len(idx))
		for i, j := range idx {
			c.keyTypes[i] = s.Fields[j].Type
		}
	}
	c.partKnown = true
	return nil
}

// keyRanges decodes the _MIN_KEY and _MAX_KEY of files.
func (c *Committer) keyRanges(files []*manifest.DataFileMeta) ([][2][]any, error) {
	out := make([][2][]any, len(files))
	for i, f := range files {
		lo, err := binrow.Deserialize(c.keyTypes, f.MinKey)
		if err != nil {
			return nil, fmt.Errorf("data file %s: min key: %w", f.FileName, err)
		}
		hi, err := binrow.Deserialize(c.keyTypes, f.MaxKey)
		if err != nil {
			return nil, fmt.Errorf("data file %s: max key: %w", f.FileName, err)
		}
		out[i] = [2][]any{lo, hi}
	}
	return out, nil
}

// collect turns messages into manifest entries (ManifestEntryChanges.collect):
// the append part (NewFiles ADD, DeletedFiles DELETE) and the compact part
// (CompactBefore DELETE, CompactAfter ADD), and the changelog files of the
// append part (Changelog ADD) and of the compact part (CompactChangelog ADD).
func (c *Committer) collect(msgs []Message) (appendEntries, compactEntries, changelog, compactLog []manifest.Entry, err error) {
	for i := range msgs {
		m := &msgs[i]
		if _, err := binrow.Deserialize(c.partTypes, m.Partition); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("commit to %s: %w: message %d: partition: %w", c.tablePath, ErrInvalidMessage, i, err)
		}
		add := func(dst []manifest.Entry, kind manifest.FileKind, files []manifest.DataFileMeta) []manifest.Entry {
			for _, f := range files {
				dst = append(dst, manifest.Entry{Kind: kind, Partition: m.Partition, Bucket: m.Bucket, TotalBuckets: m.TotalBuckets, File: f})
			}
			return dst
		}
		appendEntries = add(appendEntries, manifest.FileKindAdd, m.NewFiles)
		appendEntries = add(appendEntries, manifest.FileKindDelete, m.DeletedFiles)
		compactEntries = add(compactEntries, manifest.FileKindDelete, m.CompactBefore)
		compactEntries = add(compactEntries, manifest.FileKindAdd, m.CompactAfter)
		changelog = add(changelog, manifest.FileKindAdd, m.Changelog)
		compactLog = add(compactLog, manifest.FileKindAdd, m.CompactChangelog)
	}
	return appendEntries, compactEntries, changelog, compactLog, nil
}

func hasIndexChanges(msgs []Message) bool {
	for i := range msgs {
		if len(msgs[i].NewIndexFiles) > 0 || msgs[i].IndexBase != nil {
			return true
		}
	}
	return false
}

func hasDelete(entries []manifest.Entry) bool {
	for i := range entries {
		if entries[i].Kind == manifest.FileKindDelete {
			return true
		}
	}
	return false
}
