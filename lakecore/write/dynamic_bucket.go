package write

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// ErrTooManyBuckets is wrapped by KeyValueWriter.Write when a partition of
// a dynamic-bucket table with dynamic-bucket.max-buckets = -1 has used
// every bucket id below 32767 and needs one more: raise
// dynamic-bucket.target-row-num (PartitionIndex.assign: "Too more bucket").
var ErrTooManyBuckets = errors.New("too many dynamic buckets")

// IndexRestorer returns the index entries of a partition (serialized
// partition row) in the latest snapshot's index manifest, with the id of
// that snapshot (0 for an empty table); a dynamic-bucket writer keeps the
// HASH ones and restores its key → bucket assignment from their files.
// Nil means an empty table.
type IndexRestorer func(ctx context.Context, partition []byte) (entries []manifest.IndexEntry, snapshotID int64, err error)

// BucketLister returns the buckets of a partition (serialized partition
// row) that hold live data files in snapshot snapshotID, the one the
// index was restored from: another writer's commit after it may add a
// bucket with its index, which the restored index would not show. A
// dynamic-bucket writer given one (SetBucketLister) refuses a partition
// with a bucket that holds data but has no HASH index file: the buckets
// of that bucket's keys are unknown, and writing them would put them in a
// second bucket. snapshotID 0 is an empty table: no buckets.
type BucketLister func(ctx context.Context, snapshotID int64, partition []byte) ([]int32, error)

// LatestIndexRestorer answers from the index manifest of the table's
// latest snapshot at the time of each call (decoded once per snapshot).
// It is not safe for concurrent use.
func LatestIndexRestorer(fio storage.FileIO, tablePath string) IndexRestorer {
	snaps := snapshot.NewManager(fio, tablePath)
	var (
		cached  string
		entries []manifest.IndexEntry
	)
	return func(ctx context.Context, partition []byte) ([]manifest.IndexEntry, int64, error) {
		s, err := snaps.LatestExisting(ctx)
		if err != nil || s == nil {
			return nil, 0, err
		}
		if s.IndexManifest == nil {
			return nil, s.ID, nil
		}
		if *s.IndexManifest != cached {
			if entries, err = manifest.ReadIndexEntries(ctx, fio, tablePath, *s.IndexManifest); err != nil {
				cached = ""
				return nil, 0, err
			}
			cached = *s.IndexManifest
		}
		var out []manifest.IndexEntry
		for _, e := range entries {
			if string(e.Partition) == string(partition) {
				out = append(out, e)
			}
		}
		return out, s.ID, nil
	}
}

// dynamicBuckets assigns the keys of a dynamic-bucket table (bucket = -1,
// primary key containing every partition key) to buckets and maintains the
// HASH index of every bucket, as one Java assigner and its writers do
// (apache/paimon: paimon-core/src/main/java/org/apache/paimon/index/
// HashBucketAssigner.java with numAssigners = 1, PartitionIndex.java,
// DynamicBucketIndexMaintainer.java, HashIndexFile.java).
//
// The hash of a key is BinaryRow.hashCode of its trimmed primary key. Each
// partition's state is restored on first use from the partition's HASH
// index files in the latest snapshot and kept for the writer's life, with
// the hashes this writer added: about 25 bytes per key of every partition
// the writer touched (BenchmarkDynamicBucketWrite; Java: ~1 GB per 100
// million keys).
type dynamicBuckets struct {
	fio       storage.FileIO
	tablePath string
	restore   IndexRestorer
	lister    BucketLister
	// target is dynamic-bucket.target-row-num; limit is one above the
	// highest bucket id (dynamic-bucket.max-buckets, or Short.MAX_VALUE).
	target    int64
	limit     int32
	unlimited bool
	inDataDir bool
	// dir returns the directory of a bucket (for index-file-in-data-file-dir).
	dir   func(partition []byte, bucket int32) (string, error)
	parts map[string]*partitionIndex
	rand  *rand.Rand
}

// partitionIndex is PartitionIndex plus the DynamicBucketIndexMaintainer
// of each of its buckets.
type partitionIndex struct {
	partition   []byte
	hash2Bucket map[int32]int16
	// counts is nonFullBucketInformation without the lazy removal: the
	// hashes of each bucket; order is totalBucketArray, ids as created.
	counts map[int32]int64
	order  []int32
	// nonFull are the buckets that may take more keys, ascending (Java
	// iterates a HashMap of small Integer keys, which is ascending).
	nonFull []int32
	buckets map[int32]*bucketIndex
	// full is set once no bucket id is left (bucketUpperBoundReached).
	full bool
	// freeFrom is no higher than the lowest free bucket id.
	freeFrom int32
	// accessed: a key of the partition was assigned since forgetIdle.
	accessed bool
}

// bucketIndex is the HASH index of one bucket: the hashes in file order,
// the current file and whether hashes were added since it was written.
type bucketIndex struct {
	hashes   []int32
	file     string
	modified bool
}

func newDynamicBuckets(fio storage.FileIO, tablePath string, target int64, maxBuckets int, inDataDir bool,
	dir func([]byte, int32) (string, error)) *dynamicBuckets {
	d := &dynamicBuckets{fio: fio, tablePath: tablePath, target: target, inDataDir: inDataDir, dir: dir,
		parts: map[string]*partitionIndex{}, rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	if maxBuckets == -1 {
		d.limit, d.unlimited = math.MaxInt16, true
	} else {
		d.limit = int32(min(maxBuckets, math.MaxInt16))
	}
	return d
}

// assign returns the bucket of a key of partition with hash, recording the
// hash in the bucket's index when it is new (PartitionIndex.assign with the
// fix of apache/paimon#9193, which makes the bucket limit per partition:
// 1.4.2 and 2.0.0 compare against the largest bucket id of any partition).
func (d *dynamicBuckets) assign(ctx context.Context, partition []byte, hash int32) (int32, error) {
	p, err := d.partition(ctx, partition)
	if err != nil {
		return 0, err
	}
	p.accessed = true
	// 1. a key seen before keeps its bucket.
	if b, ok := p.hash2Bucket[hash]; ok {
		return int32(b), nil
	}
	// 2. the first bucket that is not full.
	for len(p.nonFull) > 0 {
		b := p.nonFull[0]
		if p.counts[b] < d.target {
			p.counts[b]++
			return p.add(hash, b), nil
		}
		p.nonFull = p.nonFull[1:]
	}
	// 3. the lowest free bucket id.
	if !p.full {
		// Ids are never freed, so the lowest free one only grows.
		for b := p.freeFrom; b < d.limit; b++ {
			p.freeFrom = b
			if _, used := p.counts[b]; !used {
				p.counts[b] = 1
				p.order = append(p.order, b)
				p.nonFull = append(p.nonFull, b)
				return p.add(hash, b), nil
			}
		}
		if d.unlimited {
			return 0, fmt.Errorf("%w: partition %x has %d buckets; increase dynamic-bucket.target-row-num (%d)", ErrTooManyBuckets, partition, len(p.order), d.target)
		}
		p.full = true
	}
	// 4. every bucket id is taken: a random bucket.
	return p.add(hash, p.order[d.rand.IntN(len(p.order))]), nil
}

// forgetIdle drops the partitions no key was assigned to since the last
// call and with no hash waiting for prepare (HashBucketAssigner.prepareCommit
// clearing partitions whose last change is committed); it returns how
// many it dropped.
func (d *dynamicBuckets) forgetIdle() int {
	n := 0
	for k, p := range d.parts {
		idle := !p.accessed
		for _, bi := range p.buckets {
			idle = idle && !bi.modified
		}
		if idle {
			delete(d.parts, k)
			n++
		}
		p.accessed = false
	}
	return n
}

// add records a new hash in bucket b (DynamicBucketIndexMaintainer.notifyNewRecord).
func (p *partitionIndex) add(hash, b int32) int32 {
	p.hash2Bucket[hash] = int16(b)
	bi := p.buckets[b]
	if bi == nil {
		bi = &bucketIndex{}
		p.buckets[b] = bi
	}
	bi.hashes = append(bi.hashes, hash)
	bi.modified = true
	return b
}

// partition returns the index of partition, loading it on first use
// (PartitionIndex.loadIndex).
func (d *dynamicBuckets) partition(ctx context.Context, partition []byte) (*partitionIndex, error) {
	if p, ok := d.parts[string(partition)]; ok {
		return p, nil
	}
	partition = slices.Clone(partition) // the caller's may be reused
	p := &partitionIndex{partition: partition, hash2Bucket: map[int32]int16{}, counts: map[int32]int64{}, buckets: map[int32]*bucketIndex{}}
	var entries []manifest.IndexEntry
	var restoredFrom int64
	if d.restore != nil {
		var err error
		if entries, restoredFrom, err = d.restore(ctx, partition); err != nil {
			return nil, fmt.Errorf("restore the dynamic-bucket index of partition %x: %w", partition, err)
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Kind != manifest.FileKindAdd || e.IndexType != manifest.IndexTypeHash {
			continue
		}
		if e.Bucket < 0 || e.Bucket > math.MaxInt16 {
			return nil, fmt.Errorf("restore the dynamic-bucket index of partition %x: %w: HASH index %s of bucket %d", partition, manifest.ErrCorrupt, e.FileName, e.Bucket)
		}
		if _, dup := p.buckets[e.Bucket]; dup {
			return nil, fmt.Errorf("restore the dynamic-bucket index of partition %x: %w: bucket %d has two HASH index files", partition, manifest.ErrCorrupt, e.Bucket)
		}
		hashes, err := d.read(ctx, partition, e)
		if err != nil {
			return nil, err
		}
		for _, h := range hashes {
			p.hash2Bucket[h] = int16(e.Bucket)
		}
		if len(hashes) > 0 {
			p.counts[e.Bucket] += int64(len(hashes))
			p.order = append(p.order, e.Bucket)
		}
		p.buckets[e.Bucket] = &bucketIndex{hashes: hashes, file: e.FileName}
	}
	if d.lister != nil {
		withData, err := d.lister(ctx, restoredFrom, partition)
		if err != nil {
			return nil, fmt.Errorf("restore the dynamic-bucket index of partition %x: %w", partition, err)
		}
		for _, b := range withData {
			if _, ok := p.buckets[b]; !ok {
				return nil, fmt.Errorf("restore the dynamic-bucket index of partition %x: %w: bucket %d holds data files but no HASH index file, "+
					"so the buckets of its keys are unknown (was it written by a writer that keeps no dynamic-bucket index?); "+
					"rewrite the partition with an Overwrite by a writer that ignores the index (SetIndexRestorer(nil), SetBucketLister(nil))", partition, ErrUnsupportedTable, b)
			}
		}
	}
	p.nonFull = slices.Sorted(slices.Values(p.order))
	d.parts[string(partition)] = p
	return p, nil
}

// read reads the hashes of a HASH index file (HashIndexFile.read).
func (d *dynamicBuckets) read(ctx context.Context, partition []byte, e *manifest.IndexEntry) ([]int32, error) {
	if e.ExternalPath != nil {
		return nil, fmt.Errorf("restore the dynamic-bucket index of partition %x: %w: HASH index %s has external path %s",
			partition, ErrUnsupportedTable, e.FileName, *e.ExternalPath)
	}
	p, err := d.indexPath(partition, e.Bucket, e.FileName)
	if err != nil {
		return nil, err
	}
	data, err := d.fio.ReadFile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read HASH index %s: %w", p, err)
	}
	hashes, err := manifest.DecodeHashIndex(data)
	if err != nil {
		return nil, fmt.Errorf("read HASH index %s: %w", p, err)
	}
	if int64(len(hashes)) != e.RowCount {
		return nil, fmt.Errorf("read HASH index %s: %w: %d hashes, the index manifest says %d", p, manifest.ErrCorrupt, len(hashes), e.RowCount)
	}
	return hashes, nil
}

// indexPath is where an index file of (partition, bucket) lives:
// index/<name>, or the bucket's directory with index-file-in-data-file-dir
// (FileStorePathFactory.indexFileFactory).
func (d *dynamicBuckets) indexPath(partition []byte, bucket int32, name string) (string, error) {
	if !d.inDataDir {
		return path.Join(d.tablePath, "index", name), nil
	}
	dir, err := d.dir(partition, bucket)
	if err != nil {
		return "", err
	}
	return path.Join(dir, name), nil
}

// prepare writes a new full HASH file for every bucket that got new
// hashes since the last prepare (DynamicBucketIndexMaintainer.prepareCommit)
// and returns their index entries by partition and bucket, and the index
// base of every partition with such a file: the HASH files the writer's
// assignment rests on. name returns a new file
// name; written collects the paths written, for cleanup on failure.
func (d *dynamicBuckets) prepare(ctx context.Context, name func() string, written *[]string) (map[string]map[int32]manifest.IndexEntry, map[string][]string, error) {
	files := map[string]map[int32]manifest.IndexEntry{}
	bases := map[string][]string{}
	for pk, p := range d.parts {
		for b, bi := range p.buckets {
			if !bi.modified {
				continue
			}
			n := name()
			fp, err := d.indexPath(p.partition, b, n)
			if err != nil {
				return nil, nil, err
			}
			data := manifest.EncodeHashIndex(bi.hashes)
			if err := d.fio.WriteExclusive(ctx, fp, data); err != nil {
				return nil, nil, fmt.Errorf("write HASH index %s: %w", fp, err)
			}
			*written = append(*written, fp)
			if files[pk] == nil {
				files[pk] = map[int32]manifest.IndexEntry{}
			}
			files[pk][b] = manifest.IndexEntry{Kind: manifest.FileKindAdd, Partition: p.partition, Bucket: b,
				IndexType: manifest.IndexTypeHash, FileName: n, FileSize: int64(len(data)), RowCount: int64(len(bi.hashes))}
		}
		if files[pk] == nil {
			continue
		}
		// The base is what the committer must find in the latest
		// snapshot: the files restored or written by this writer's earlier
		// batches. The new files replace them from the next batch on.
		bases[pk] = []string{}
		for b, bi := range p.buckets {
			if bi.file != "" {
				bases[pk] = append(bases[pk], bi.file)
			}
			if e, ok := files[pk][b]; ok {
				bi.file, bi.modified = e.FileName, false
			}
		}
	}
	return files, bases, nil
}

// attachIndex adds the index files and bases of prepare to msgs, one
// message per (partition, bucket), adding messages for buckets that have
// an index file but no data change.
func attachIndex(msgs []commit.Message, writer string, files map[string]map[int32]manifest.IndexEntry, bases map[string][]string) []commit.Message {
	for i := range msgs {
		m := &msgs[i]
		byBucket := files[string(m.Partition)]
		if e, ok := byBucket[m.Bucket]; ok {
			m.NewIndexFiles = []manifest.IndexEntry{e}
			delete(byBucket, m.Bucket)
		}
		if base, ok := bases[string(m.Partition)]; ok {
			m.IndexBase = &commit.IndexBase{Writer: writer, Files: base}
		}
	}
	for pk, byBucket := range files {
		for _, b := range slices.Sorted(func(yield func(int32) bool) {
			for b := range byBucket {
				if !yield(b) {
					return
				}
			}
		}) {
			msgs = append(msgs, commit.Message{Partition: []byte(pk), Bucket: b, TotalBuckets: -1,
				NewIndexFiles: []manifest.IndexEntry{byBucket[b]}, IndexBase: &commit.IndexBase{Writer: writer, Files: bases[pk]}})
		}
	}
	return msgs
}

// indexFileName is HashIndexFile's name: index-<uuid>-<n>.
func indexFileName(uuid string, n int64) string {
	return manifest.HashIndexPrefix + uuid + "-" + strconv.FormatInt(n, 10)
}
