package lakecore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// ErrInvalidKey is wrapped by Lookup for a key that does not fit the
// table's primary key: the wrong number of values, or a value of the wrong
// Go type for its column.
var ErrInvalidKey = errors.New("invalid primary key")

// Lookup returns the merged row of one primary key in snapshot id (0 =
// the latest) as the current schema, or nil when the key has no row (never
// written, or deleted). key holds one value per primary-key column, in the
// order of Schema().PrimaryKeys, as lakecore's Go values.
//
// Only the files that can hold the key are read: the key's partition (its
// partition columns are part of the primary key), its bucket for a
// fixed-bucket table, and the files whose key range (_MIN_KEY.._MAX_KEY)
// contains it; they are merged as a batch read merges them. A table
// without primary keys wraps ErrUnsupported; a key that does not fit,
// ErrInvalidKey.
func (t *Table) Lookup(ctx context.Context, id int64, key []any) ([]any, error) {
	s := t.Schema()
	if len(s.PrimaryKeys) == 0 {
		return nil, fmt.Errorf("lookup in %s.%s: %w: the table has no primary key", t.db, t.name, ErrUnsupported)
	}
	if len(key) != len(s.PrimaryKeys) {
		return nil, fmt.Errorf("lookup in %s.%s: %w: %d values for primary key %v", t.db, t.name, ErrInvalidKey, len(key), s.PrimaryKeys)
	}
	pkIdx, err := kv.FieldIndexes(s.Fields, s.PrimaryKeys)
	if err != nil {
		return nil, fmt.Errorf("lookup in %s.%s: %w", t.db, t.name, err)
	}
	value := make([]any, len(s.Fields)) // the key placed in a row of the table
	for i, j := range pkIdx {
		f := s.Fields[j]
		if key[i] == nil {
			return nil, fmt.Errorf("lookup in %s.%s: %w: %s is null", t.db, t.name, ErrInvalidKey, f.Name)
		}
		if _, err := binrow.Encode([]types.DataType{f.Type}, key[i:i+1]); err != nil {
			return nil, fmt.Errorf("lookup in %s.%s: %w: %s: %w", t.db, t.name, ErrInvalidKey, f.Name, err)
		}
		value[j] = key[i]
	}
	snap, err := t.snapshotOrLatest(ctx, id)
	if err != nil || snap == nil {
		return nil, err
	}
	var filter *partition.Predicate
	if parts := s.PartitionFields(); len(parts) > 0 {
		allowed := map[string][]any{}
		for _, p := range parts {
			allowed[p.Name] = []any{value[types.FieldByName(s.Fields, p.Name)]}
		}
		if filter, err = partition.In(parts, allowed); err != nil {
			return nil, fmt.Errorf("lookup in %s.%s: %w", t.db, t.name, err)
		}
	}
	plan, err := t.planner.Full(ctx, snap, filter)
	if err != nil {
		return nil, err
	}
	bucket, fixed, err := t.bucketOf(value)
	if err != nil {
		return nil, fmt.Errorf("lookup in %s.%s: %w", t.db, t.name, err)
	}
	trimmed, err := kv.TrimmedPrimaryKeys(s.PrimaryKeys, s.PartitionKeys)
	if err != nil {
		return nil, err
	}
	keyIdx, _ := kv.FieldIndexes(s.Fields, trimmed)
	keyTypes := make([]types.DataType, len(keyIdx))
	want := make([]any, len(keyIdx))
	for i, j := range keyIdx {
		keyTypes[i], want[i] = s.Fields[j].Type, value[j]
	}
	r, err := t.NewRead(nil)
	if err != nil {
		return nil, err
	}
	for _, split := range plan.Splits {
		if fixed && split.Bucket != bucket {
			continue
		}
		files := split.Files[:0:0]
		for i := range split.Files {
			in, err := keyInRange(&split.Files[i], keyTypes, want)
			if err != nil {
				return nil, fmt.Errorf("lookup in %s.%s: %w", t.db, t.name, err)
			}
			if in {
				files = append(files, split.Files[i])
			}
		}
		if len(files) == 0 {
			continue
		}
		split.Files = files
		row, err := lookupInSplit(ctx, r, split, keyIdx, want)
		if err != nil || row != nil {
			return row, err
		}
	}
	return nil, nil
}

// bucketOf returns the bucket of a row holding a key, and whether the
// table has fixed buckets (otherwise every bucket may hold it).
func (t *Table) bucketOf(value []any) (int32, bool, error) {
	s := t.Schema()
	n, err := s.Opts().Bucket()
	if err != nil || n <= 0 {
		return 0, false, err
	}
	names, err := kv.BucketKeys(s.PrimaryKeys, s.PartitionKeys, s.Opts().BucketKey())
	if err != nil {
		return 0, false, err
	}
	idx, err := kv.FieldIndexes(s.Fields, names)
	if err != nil {
		return 0, false, err
	}
	ts := make([]types.DataType, len(idx))
	vals := make([]any, len(idx))
	for i, j := range idx {
		ts[i], vals[i] = s.Fields[j].Type, value[j]
	}
	row, err := binrow.Encode(ts, vals)
	if err != nil {
		return 0, false, err
	}
	return int32(binrow.Bucket(row, n)), true, nil
}

// keyInRange reports whether a file's key range contains key.
func keyInRange(f *manifest.DataFileMeta, keyTypes []types.DataType, key []any) (bool, error) {
	lo, err := binrow.Deserialize(keyTypes, f.MinKey)
	if err != nil {
		return false, fmt.Errorf("data file %s: min key: %w", f.FileName, err)
	}
	hi, err := binrow.Deserialize(keyTypes, f.MaxKey)
	if err != nil {
		return false, fmt.Errorf("data file %s: max key: %w", f.FileName, err)
	}
	return kv.CompareKeys(lo, key) <= 0 && kv.CompareKeys(key, hi) <= 0, nil
}

// lookupInSplit merges split and returns the row whose key columns equal
// key, or nil.
func lookupInSplit(ctx context.Context, r *read.TableRead, split scan.Split, keyIdx []int, key []any) ([]any, error) {
	it, err := r.Open(ctx, split)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for {
		b, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		for _, row := range b.Rows {
			if slices.EqualFunc(keyIdx, key, func(j int, v any) bool { return kv.CompareValues(row[j], v) == 0 }) {
				return row, nil
			}
		}
	}
}
