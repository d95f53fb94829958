package scan_test

import (
	"errors"
	"hash/fnv"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

func TestShardValidate(t *testing.T) {
	cases := []struct {
		shard scan.Shard
		ok    bool
	}{
		{scan.Shard{Count: 1}, true},
		{scan.Shard{Count: 3, Index: 2}, true},
		{scan.Shard{}, false},
		{scan.Shard{Count: -1}, false},
		{scan.Shard{Count: 3, Index: 3}, false},
		{scan.Shard{Count: 3, Index: -1}, false},
	}
	for _, tc := range cases {
		err := tc.shard.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, scan.ErrInvalidOptions)) {
			t.Errorf("%+v: %v", tc.shard, err)
		}
	}
	// An invalid shard fails the stream's start.
	fio := tempFIO(t)
	tb := newPartitioned(t, fio, nil)
	tb.Append([]any{"a"}, rowsOf("a", 0, 1)...)
	s := scan.NewStreamScanner(fio, tb.Path, scan.StreamOptions{Shard: &scan.Shard{Count: 2, Index: 2}})
	if _, err := s.Next(bg); !errors.Is(err, scan.ErrInvalidOptions) {
		t.Errorf("Next with shard index 2 of 2: %v, want ErrInvalidOptions", err)
	}
}

func TestFileShardIsFNV1a(t *testing.T) {
	for _, name := range []string{"data-0d6c6f7e-3a3b-4c1e-9a52-0a2f4b1c9d11-0.parquet", "x", ""} {
		h := fnv.New32a()
		h.Write([]byte(name))
		for _, n := range []int{1, 2, 3, 7} {
			if got, want := scan.FileShard(name, n), int(h.Sum32()%uint32(n)); got != want {
				t.Errorf("FileShard(%q, %d) = %d, want %d", name, n, got, want)
			}
		}
	}
	if !(scan.Shard{Count: 3, Index: 1}).OwnsBucket(4) || (scan.Shard{Count: 3, Index: 1}).OwnsBucket(5) {
		t.Error("OwnsBucket: bucket 4 is shard 1 of 3, bucket 5 is not")
	}
	if !(scan.Shard{Count: 3, Index: 1}).OwnsBucket(-2) {
		t.Error("OwnsBucket: bucket -2 is shard 1 of 3 (non-negative modulo)")
	}
}

// TestStreamShards streams a bucketed and an unaware-bucket table as 3
// shards: every file of every plan (full and delta) is in exactly one
// shard, the one its bucket or name says, and every shard sees a plan for
// every snapshot, with no splits where it has nothing.
func TestStreamShards(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options map[string]string
	}{
		{"fixed-bucket", map[string]string{"bucket": "4", "bucket-key": "v"}},
		{"unaware-bucket", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fio := tempFIO(t)
			tb := newPartitioned(t, fio, tc.options)
			buckets := int32(1)
			if tc.options != nil {
				buckets = 4
			}
			owner := map[string]int{} // file -> shard it must be read by
			const n = 3
			write := func(count int) {
				var entries []manifest.Entry
				for i := range count {
					p := []string{"a", "b"}[i%2]
					b := int32(i) % buckets
					e := tb.WriteFile([]any{p}, b, rowsOf(p, i, 2))
					if buckets > 1 {
						owner[e.File.FileName] = int(b) % n
					} else {
						owner[e.File.FileName] = scan.FileShard(e.File.FileName, n)
					}
					entries = append(entries, e)
				}
				tb.Commit(snapshot.CommitAppend, entries...)
			}
			write(9)
			write(7)
			write(1) // at most one shard has rows here
			write(12)
			seen := map[string]int{}
			for i := range n {
				s := scan.NewStreamScanner(fio, tb.Path, scan.StreamOptions{
					Mode: scan.ModeFromSnapshotFull, SnapshotID: 2, Bounded: true, Shard: &scan.Shard{Count: n, Index: i},
				})
				var ids []int64
				for {
					p, err := s.Next(bg)
					if errors.Is(err, scan.ErrEndOfScan) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, p.Snapshot.ID)
					for _, sp := range p.Splits {
						if len(sp.Files) == 0 {
							t.Errorf("shard %d: snapshot %d: split of bucket %d without files", i, p.Snapshot.ID, sp.Bucket)
						}
						for _, f := range sp.Files {
							seen[f.FileName]++
							if owner[f.FileName] != i {
								t.Errorf("shard %d read file %s of shard %d", i, f.FileName, owner[f.FileName])
							}
						}
					}
				}
				if len(ids) != 3 || ids[0] != 2 || ids[1] != 3 || ids[2] != 4 {
					t.Errorf("shard %d: plans of snapshots %v, want [2 3 4]", i, ids)
				}
			}
			if len(seen) != len(owner) {
				t.Errorf("%d files read, want %d", len(seen), len(owner))
			}
			for f, c := range seen {
				if c != 1 {
					t.Errorf("file %s read by %d shards", f, c)
				}
			}
		})
	}
}
