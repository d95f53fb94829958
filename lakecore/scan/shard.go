package scan

import (
	"context"
	"fmt"
	"hash/fnv"
)

// Shard selects one of Count disjoint parts of a table, so that Count
// readers can share one stream of it, each reading every row of its part
// and no row of another's:
//
//   - on a bucketed table (a fixed bucket number, or a primary-key table
//     with dynamic buckets) a split belongs to shard bucket mod Count, so
//     the rows of one bucket, and their order, stay with one reader;
//   - on an append table without buckets (bucket = -1) a data file belongs
//     to shard FNV-1a-32(file name) mod Count (FileShard). Data file names
//     hold a UUID and are unique in a table, so the name alone identifies
//     the file whatever partition it is in.
//
// The zero value is not valid; Count 1 reads the whole table.
type Shard struct {
	// Count is the number of shards, at least 1.
	Count int
	// Index is this reader's shard, 0 <= Index < Count.
	Index int
}

// Validate reports a Shard whose Count or Index is out of range; the error
// wraps ErrInvalidOptions.
func (s Shard) Validate() error {
	if s.Count < 1 {
		return fmt.Errorf("%w: shard count %d, want at least 1", ErrInvalidOptions, s.Count)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("%w: shard index %d, want 0 <= index < count %d", ErrInvalidOptions, s.Index, s.Count)
	}
	return nil
}

// OwnsBucket reports whether bucket b belongs to the shard (b mod Count,
// made non-negative for the special buckets below 0).
func (s Shard) OwnsBucket(b int32) bool {
	n := int64(s.Count)
	return ((int64(b)%n)+n)%n == int64(s.Index)
}

// OwnsFile reports whether the data file named name of an unaware-bucket
// table belongs to the shard.
func (s Shard) OwnsFile(name string) bool {
	return FileShard(name, s.Count) == s.Index
}

// FileShard is the shard of an unaware-bucket table's data file among
// count: the FNV-1a 32-bit hash of its name (the manifest's file name, no
// directory) modulo count.
func FileShard(name string, count int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return int(h.Sum32() % uint32(count))
}

// shardSplits keeps the splits (or, without buckets, the files) of a plan
// of snap that belong to shard, in place; a split left without files is
// dropped. A nil shard keeps everything.
func (p *Planner) shardSplits(ctx context.Context, snap int64, schemaID int64, shard *Shard, splits []Split) ([]Split, error) {
	if shard == nil || shard.Count == 1 {
		return splits, nil
	}
	rules, err := p.rules(ctx, schemaID)
	if err != nil {
		return nil, fmt.Errorf("shard plan of snapshot %d of %s: %w", snap, p.tablePath, err)
	}
	out := splits[:0]
	for _, sp := range splits {
		if !rules.unaware {
			if shard.OwnsBucket(sp.Bucket) {
				out = append(out, sp)
			}
			continue
		}
		files := sp.Files[:0:0]
		for _, f := range sp.Files {
			if shard.OwnsFile(f.FileName) {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			sp.Files = files
			out = append(out, sp)
		}
	}
	return out, nil
}
