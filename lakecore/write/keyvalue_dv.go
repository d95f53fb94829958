package write

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

// bucketDVs is BucketedDvMaintainer (apache/paimon:
// paimon-core/.../deletionvectors/BucketedDvMaintainer.java): the deletion
// vectors of the data files of one bucket of a deletion-vectors table,
// restored from the bucket's DELETION_VECTORS index file and changed by
// lookup compactions, which mark the rows of older records of the keys they
// merge (notifyNewDeletion) and drop the vectors of the files they rewrite
// (removeDeletionVectorOf).
type bucketDVs struct {
	positions map[string]map[int64]struct{}
	// decoded caches the vector of a file for readers until it changes.
	decoded map[string]*manifest.DeletionVector
	// base is the DELETION_VECTORS file the vectors were restored from or
	// last written to, "" for none.
	base     string
	modified bool
}

func newBucketDVs() *bucketDVs {
	return &bucketDVs{positions: map[string]map[int64]struct{}{}, decoded: map[string]*manifest.DeletionVector{}}
}

// deleted reports whether row pos of file is deleted.
func (d *bucketDVs) deleted(file string, pos int64) bool {
	_, ok := d.positions[file][pos]
	return ok
}

// notifyDeletion marks row pos of file deleted.
func (d *bucketDVs) notifyDeletion(file string, pos int64) {
	s := d.positions[file]
	if s == nil {
		s = map[int64]struct{}{}
		d.positions[file] = s
	}
	if _, ok := s[pos]; !ok {
		s[pos] = struct{}{}
		d.modified = true
		delete(d.decoded, file)
	}
}

// remove drops the vector of a file a compaction rewrote.
func (d *bucketDVs) remove(file string) {
	if _, ok := d.positions[file]; ok {
		delete(d.positions, file)
		delete(d.decoded, file)
		d.modified = true
	}
}

// vectors returns the vectors of files, by file name, for a split that
// reads them.
func (d *bucketDVs) vectors(files []manifest.DataFileMeta) (map[string]*manifest.DeletionVector, error) {
	var out map[string]*manifest.DeletionVector
	for i := range files {
		name := files[i].FileName
		s := d.positions[name]
		if len(s) == 0 {
			continue
		}
		dv := d.decoded[name]
		if dv == nil {
			var err error
			if dv, err = manifest.NewDeletionVector(slices.Collect(mapKeys(s))); err != nil {
				return nil, fmt.Errorf("deletion vector of %s: %w", name, err)
			}
			d.decoded[name] = dv
		}
		if out == nil {
			out = map[string]*manifest.DeletionVector{}
		}
		out[name] = dv
	}
	return out, nil
}

func mapKeys(s map[int64]struct{}) func(func(int64) bool) {
	return func(yield func(int64) bool) {
		for k := range s {
			if !yield(k) {
				return
			}
		}
	}
}

// restoreDVs loads the deletion vectors of b from the bucket's
// DELETION_VECTORS entry in the latest snapshot's index manifest
// (BucketedDvMaintainer.Factory.create with the restored index files).
func (w *KeyValueWriter) restoreDVs(ctx context.Context, b *kvBucket) error {
	b.dvs = newBucketDVs()
	if w.dvRestore == nil {
		return nil
	}
	entries, _, err := w.dvRestore(ctx, b.partition)
	if err != nil {
		return fmt.Errorf("restore deletion vectors of bucket %d of %s: %w", b.bucket, b.dir, err)
	}
	for _, e := range entries {
		if e.Kind != manifest.FileKindAdd || e.Bucket != b.bucket || e.IndexType != manifest.IndexTypeDeletionVectors {
			continue
		}
		if b.dvs.base != "" {
			return fmt.Errorf("restore deletion vectors of bucket %d of %s: %w: two files, %s and %s", b.bucket, b.dir, manifest.ErrCorrupt, b.dvs.base, e.FileName)
		}
		b.dvs.base = e.FileName
		dvs, err := manifest.ReadIndexDeletionVectors(ctx, w.fio, w.tablePath, &e)
		if err != nil {
			return fmt.Errorf("restore deletion vectors of bucket %d of %s: %w", b.bucket, b.dir, err)
		}
		for name, dv := range dvs {
			s := make(map[int64]struct{}, dv.Cardinality())
			for pos := range dv.All() {
				s[pos] = struct{}{}
			}
			b.dvs.positions[name] = s
			b.dvs.decoded[name] = dv
		}
	}
	return nil
}

// writeDVs writes the bucket's new DELETION_VECTORS file if a compaction
// changed its vectors (BucketedDvMaintainer.writeDeletionVectorsIndex:
// one file with every vector of the bucket, an empty one when none is
// left) and adds it to m, with the file the vectors were built on.
func (w *KeyValueWriter) writeDVs(ctx context.Context, b *kvBucket, m *commit.Message) error {
	if b.dvs == nil || !b.dvs.modified {
		return nil
	}
	names := make([]string, 0, len(b.dvs.positions))
	for name, s := range b.dvs.positions {
		if len(s) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	vs := make([]manifest.DataFileVector, len(names))
	for i, name := range names {
		vs[i] = manifest.DataFileVector{DataFile: name, Positions: slices.Collect(mapKeys(b.dvs.positions[name]))}
	}
	data, ranges, err := manifest.EncodeDeletionVectorsFile(vs)
	if err != nil {
		return fmt.Errorf("deletion vectors of bucket %d of %s: %w", b.bucket, b.dir, err)
	}
	name := indexFileName(w.fileUUID, w.indexCounter)
	w.indexCounter++
	p := path.Join(w.tablePath, "index", name)
	if err := w.fio.WriteExclusive(ctx, p, data); err != nil {
		return fmt.Errorf("write deletion vectors %s: %w", p, err)
	}
	w.closed = append(w.closed, p)
	base := b.dvs.base
	m.CompactIndexFiles = append(m.CompactIndexFiles, manifest.IndexEntry{Kind: manifest.FileKindAdd, Partition: b.partition, Bucket: b.bucket,
		IndexType: manifest.IndexTypeDeletionVectors, FileName: name, FileSize: int64(len(data)), RowCount: int64(len(ranges)), DVRanges: ranges})
	m.CompactIndexBase = &base
	b.dvs.base, b.dvs.modified = name, false
	return nil
}
