package write

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// TestPartitionIndexAssign replays PartitionIndex.assign decisions: a
// known hash keeps its bucket, new ones fill the first bucket below the
// target (restored buckets in ascending order), then the lowest free id,
// then (at max-buckets) an existing one.
func TestPartitionIndexAssign(t *testing.T) {
	ctx := context.Background()
	part := []byte{0, 0, 0, 0}
	cases := []struct {
		name       string
		restored   map[int32][]int32 // bucket -> hashes of its HASH file
		target     int64
		maxBuckets int
		hashes     []int32
		want       []int32 // -1: any existing bucket
	}{
		{"empty partition fills bucket 0 then 1", nil, 2, -1, []int32{10, 11, 10, 12, 13, 14}, []int32{0, 0, 0, 1, 1, 2}},
		{"restored keys keep their buckets", map[int32][]int32{0: {1, 2}, 1: {3}}, 2, -1, []int32{3, 1, 2}, []int32{1, 0, 0}},
		{"the restored bucket that is not full first", map[int32][]int32{0: {1, 2}, 3: {5}, 1: {3}}, 2, -1, []int32{7, 8, 9}, []int32{1, 3, 2}},
		{"lowest free id", map[int32][]int32{0: {1}, 2: {2}}, 1, -1, []int32{7, 8}, []int32{1, 3}},
		{"max-buckets reached: an existing bucket", map[int32][]int32{0: {1}, 1: {2}}, 1, 2, []int32{7, 8, 7}, []int32{-1, -1, -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fio, err := storage.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var entries []manifest.IndexEntry
			for _, b := range slices.Sorted(func(yield func(int32) bool) {
				for b := range c.restored {
					if !yield(b) {
						return
					}
				}
			}) {
				name := indexFileName("u", int64(b))
				if err := fio.WriteExclusive(ctx, "t/index/"+name, manifest.EncodeHashIndex(c.restored[b])); err != nil {
					t.Fatal(err)
				}
				entries = append(entries, manifest.IndexEntry{Kind: manifest.FileKindAdd, Partition: part, Bucket: b,
					IndexType: manifest.IndexTypeHash, FileName: name, RowCount: int64(len(c.restored[b]))})
			}
			d := newDynamicBuckets(fio, "t", c.target, c.maxBuckets, false, nil)
			d.restore = func(context.Context, []byte) ([]manifest.IndexEntry, int64, error) { return entries, 1, nil }
			var got []int32
			first := map[int32]int32{}
			for i, h := range c.hashes {
				b, err := d.assign(ctx, part, h)
				if err != nil {
					t.Fatal(err)
				}
				if old, ok := first[h]; ok && old != b {
					t.Fatalf("hash %d assigned %d, then %d", h, old, b)
				}
				first[h] = b
				if c.want[i] == -1 {
					if _, ok := c.restored[b]; !ok {
						t.Fatalf("hash %d: bucket %d is not an existing one", h, b)
					}
					b = -1
				}
				got = append(got, b)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("assigned %v, want %v", got, c.want)
			}
		})
	}
}

// TestPartitionIndexTooManyBuckets: with max-buckets -1 the ids end at
// Short.MAX_VALUE - 1, then ErrTooManyBuckets ("increase target bucket row
// number").
func TestPartitionIndexTooManyBuckets(t *testing.T) {
	ctx := context.Background()
	d := newDynamicBuckets(nil, "t", 0, -1, false, nil)
	part := []byte{0, 0, 0, 0}
	for h := range int32(32767) {
		if b, err := d.assign(ctx, part, h); err != nil || b != h {
			t.Fatalf("hash %d: bucket %d, %v", h, b, err)
		}
	}
	if _, err := d.assign(ctx, part, 1<<20); !errors.Is(err, ErrTooManyBuckets) {
		t.Fatalf("bucket 32768: %v, want ErrTooManyBuckets", err)
	}
}
