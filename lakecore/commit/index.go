package commit

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// indexChanges are the index-manifest part of one commit: the index files
// to add and, per partition, the HASH files the writer assigned buckets
// from.
type indexChanges struct {
	adds []manifest.IndexEntry
	// bases maps a serialized partition to its HASH file names the writer
	// restored; bases[p] present with an empty list means "none".
	bases map[string][]string
	// dvBases maps a bucket to the DELETION_VECTORS file its new vectors
	// were built on ("" for none); see Message.CompactIndexBase.
	dvBases map[dvBucket]string
}

// dvBucket is a (partition, bucket) of deletion vectors.
type dvBucket struct {
	partition string
	bucket    int32
}

func (x indexChanges) empty() bool {
	return len(x.adds) == 0 && len(x.bases) == 0 && len(x.dvBases) == 0
}

// collectCompactIndex gathers the CompactIndexFiles and CompactIndexBase of
// msgs: per (partition, bucket, type) the file of the last message, and per
// bucket the base of the first (the later messages of one writer build on
// its earlier files, which this commit replaces).
func collectCompactIndex(msgs []Message) indexChanges {
	var x indexChanges
	type key struct {
		b   dvBucket
		typ string
	}
	at := map[key]int{}
	for i := range msgs {
		m := &msgs[i]
		b := dvBucket{string(m.Partition), m.Bucket}
		for _, e := range m.CompactIndexFiles {
			e.Kind, e.Partition, e.Bucket = manifest.FileKindAdd, m.Partition, m.Bucket
			k := key{b, e.IndexType}
			if j, ok := at[k]; ok {
				x.adds[j] = e
				continue
			}
			at[k] = len(x.adds)
			x.adds = append(x.adds, e)
		}
		if m.CompactIndexBase == nil {
			continue
		}
		if x.dvBases == nil {
			x.dvBases = map[dvBucket]string{}
		}
		if _, ok := x.dvBases[b]; !ok {
			x.dvBases[b] = *m.CompactIndexBase
		}
	}
	return x
}

// checkDVBases refuses deletion vectors built on a DELETION_VECTORS file of
// a bucket that is no longer the latest snapshot's.
func checkDVBases(latest *snapshot.Snapshot, current []manifest.IndexEntry, bases map[dvBucket]string) error {
	if len(bases) == 0 {
		return nil
	}
	now := map[dvBucket]string{}
	for i := range current {
		e := &current[i]
		if e.Kind == manifest.FileKindAdd && e.IndexType == manifest.IndexTypeDeletionVectors {
			now[dvBucket{string(e.Partition), e.Bucket}] = e.FileName
		}
	}
	for b, base := range bases {
		if got := now[b]; got != base {
			id := int64(0)
			if latest != nil {
				id = latest.ID
			}
			return fmt.Errorf("%w: latest snapshot %d: bucket %d of partition %x has deletion vectors file %q, the compaction built on %q; give up committing",
				ErrConflict, id, b.bucket, []byte(b.partition), got, base)
		}
	}
	return nil
}

// collectIndex gathers the NewIndexFiles and IndexBase of msgs (see
// IndexBase for the rules).
func (c *Committer) collectIndex(msgs []Message) (indexChanges, error) {
	var x indexChanges
	type bucketKey struct {
		partition string
		bucket    int32
		typ       string
	}
	at := map[bucketKey]int{}
	writers := map[string]string{}
	union := map[string]map[string]bool{}
	for i := range msgs {
		m := &msgs[i]
		for _, e := range m.NewIndexFiles {
			if e.IndexType == "" || e.FileName == "" {
				return x, fmt.Errorf("commit to %s: %w: message %d: index file without type or name", c.tablePath, ErrInvalidMessage, i)
			}
			e.Kind, e.Partition, e.Bucket = manifest.FileKindAdd, m.Partition, m.Bucket
			k := bucketKey{string(m.Partition), m.Bucket, e.IndexType}
			if j, ok := at[k]; ok {
				// Two batches of one writer: the later full file holds more.
				if e.RowCount > x.adds[j].RowCount {
					x.adds[j] = e
				}
				continue
			}
			at[k] = len(x.adds)
			x.adds = append(x.adds, e)
		}
		if m.IndexBase == nil {
			continue
		}
		p := string(m.Partition)
		if w, ok := writers[p]; ok && w != m.IndexBase.Writer {
			return x, fmt.Errorf("commit to %s: %w: writers %s and %s both assigned dynamic buckets in partition %x in one commit",
				c.tablePath, ErrIndexConflict, w, m.IndexBase.Writer, m.Partition)
		}
		writers[p] = m.IndexBase.Writer
		if union[p] == nil {
			union[p] = map[string]bool{}
		}
		for _, f := range m.IndexBase.Files {
			union[p][f] = true
		}
	}
	if len(union) == 0 {
		return x, nil
	}
	added := map[string]bool{}
	for i := range msgs {
		for _, e := range msgs[i].NewIndexFiles {
			added[e.FileName] = true
		}
	}
	x.bases = map[string][]string{}
	for p, files := range union {
		base := []string{}
		for f := range files {
			if !added[f] {
				base = append(base, f)
			}
		}
		slices.Sort(base)
		x.bases[p] = base
	}
	return x, nil
}

// withIndex makes every attempt of provide also check the index bases of
// x against the latest snapshot and write the index manifest that adds
// x.adds to the one provide left (the latest snapshot's, or the one an
// overwrite wrote), as FileStoreCommitImpl.tryCommitOnce does with
// IndexManifestFile.writeIndexFiles.
func (c *Committer) withIndex(provide changesFunc, x indexChanges) changesFunc {
	if x.empty() {
		return provide
	}
	var dvFiles map[dvBucket][]string
	for _, e := range x.adds {
		if e.IndexType != manifest.IndexTypeDeletionVectors || len(e.DVRanges) == 0 {
			continue
		}
		if dvFiles == nil {
			dvFiles = map[dvBucket][]string{}
		}
		b := dvBucket{string(e.Partition), e.Bucket}
		for _, r := range e.DVRanges {
			dvFiles[b] = append(dvFiles[b], r.DataFile)
		}
	}
	return func(ctx context.Context, latest *snapshot.Snapshot) (changes, error) {
		ch, err := provide(ctx, latest)
		if err != nil {
			return ch, err
		}
		ch.dvFiles = dvFiles
		var current []manifest.IndexEntry
		if latest != nil && latest.IndexManifest != nil {
			if current, err = c.manifests.ReadIndexEntries(ctx, *latest.IndexManifest); err != nil {
				return ch, err
			}
		}
		if err := checkIndexLanded(latest, current, x.adds); err != nil {
			return ch, err
		}
		if err := checkIndexBases(latest, current, x.bases); err != nil {
			return ch, err
		}
		if err := checkDVBases(latest, current, x.dvBases); err != nil {
			return ch, err
		}
		if len(x.adds) == 0 {
			return ch, nil
		}
		prev := current
		if ch.indexManifest != nil {
			// An overwrite dropped entries: add to what it left.
			if prev, err = c.manifests.ReadIndexEntries(ctx, *ch.indexManifest); err != nil {
				return ch, err
			}
			if ch.newIndex {
				c.deleteManifests(context.WithoutCancel(ctx), []string{*ch.indexManifest})
			}
		}
		data, err := c.encoder.EncodeIndexEntries(manifest.CombineIndexEntries(prev, x.adds))
		if err != nil {
			return ch, err
		}
		name := "index-manifest-" + uuid.NewString() + "-0"
		if err := c.fio.WriteExclusive(ctx, c.manifestPath(name), data); err != nil {
			return ch, fmt.Errorf("write index manifest: %w", err)
		}
		ch.indexManifest, ch.newIndex = &name, true
		return ch, nil
	}
}

// checkIndexLanded refuses index files that the latest snapshot already
// lists: the commit landed before (an attempt with an unknown outcome),
// which a recovered commit must learn as manifest.ErrDuplicateFile, as it
// does for data files, rather than as a stale index base.
func checkIndexLanded(latest *snapshot.Snapshot, current, adds []manifest.IndexEntry) error {
	if len(adds) == 0 || len(current) == 0 {
		return nil
	}
	names := make(map[string]bool, len(current))
	for i := range current {
		names[current[i].FileName] = true
	}
	for i := range adds {
		if names[adds[i].FileName] {
			return fmt.Errorf("%w: latest snapshot %d: %w: index file %s; give up committing",
				ErrConflict, latest.ID, manifest.ErrDuplicateFile, adds[i].FileName)
		}
	}
	return nil
}

// checkIndexBases refuses a commit whose writer assigned dynamic buckets
// from HASH index files of a partition that are no longer the latest
// snapshot's: another writer added keys to the partition meanwhile, and
// without seeing them this writer may have put one of those keys in a
// second bucket (Java: "Dynamic Bucket only support single write job").
func checkIndexBases(latest *snapshot.Snapshot, current []manifest.IndexEntry, bases map[string][]string) error {
	if len(bases) == 0 {
		return nil
	}
	now := map[string][]string{}
	for i := range current {
		e := &current[i]
		if e.Kind != manifest.FileKindAdd || e.IndexType != manifest.IndexTypeHash {
			continue
		}
		if _, ok := bases[string(e.Partition)]; ok {
			now[string(e.Partition)] = append(now[string(e.Partition)], e.FileName)
		}
	}
	for p, base := range bases {
		got := slices.Sorted(slices.Values(now[p]))
		if !slices.Equal(got, base) {
			id := int64(0)
			if latest != nil {
				id = latest.ID
			}
			return fmt.Errorf("%w: latest snapshot %d: partition %x has HASH index files %v, the writer assigned buckets from %v; give up committing",
				ErrIndexConflict, id, []byte(p), got, base)
		}
	}
	return nil
}
