package kv

import (
	"fmt"
	"math"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The system fields of a KeyValue data file (SpecialFields.java). A file's
// columns are _KEY_<k> for each trimmed primary key k, then
// _SEQUENCE_NUMBER, then _VALUE_KIND, then every table column in schema
// order (paimon-pk.md §1.1).
const (
	// KeyFieldIDStart is added to a primary-key column's id to give the id
	// of its _KEY_ copy (Integer.MAX_VALUE / 2).
	KeyFieldIDStart = math.MaxInt32 / 2
	// KeyFieldPrefix starts the name of every key copy column.
	KeyFieldPrefix = "_KEY_"
	// SequenceNumberName is the column of the record's sequence number.
	SequenceNumberName = "_SEQUENCE_NUMBER"
	// ValueKindName is the column of the record's row kind byte.
	ValueKindName = "_VALUE_KIND"
)

// SequenceNumberField is _SEQUENCE_NUMBER BIGINT NOT NULL, field id
// Integer.MAX_VALUE - 1.
var SequenceNumberField = types.DataField{ID: math.MaxInt32 - 1, Name: SequenceNumberName, Type: types.BigIntType().NotNull()}

// ValueKindField is _VALUE_KIND TINYINT NOT NULL, field id
// Integer.MAX_VALUE - 2.
var ValueKindField = types.DataField{ID: math.MaxInt32 - 2, Name: ValueKindName, Type: types.TinyIntType().NotNull()}

// TrimmedPrimaryKeys returns the primary keys that are not partition keys,
// in primary-key order (TableSchema.trimmedPrimaryKeys). It fails when
// nothing is left, as Java does: the key would be empty.
func TrimmedPrimaryKeys(primaryKeys, partitionKeys []string) ([]string, error) {
	out := make([]string, 0, len(primaryKeys))
	for _, k := range primaryKeys {
		if !slices.Contains(partitionKeys, k) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("primary keys %v must not all be partition keys %v", primaryKeys, partitionKeys)
	}
	return out, nil
}

// FieldIndexes returns the index in fields of each name, failing on a name
// that is not a field.
func FieldIndexes(fields []types.DataField, names []string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		j := types.FieldByName(fields, n)
		if j < 0 {
			return nil, fmt.Errorf("column %q is not a field of the table", n)
		}
		out[i] = j
	}
	return out, nil
}

// KeyFields returns the _KEY_ copies of the trimmed primary-key fields, as
// the writer puts them at the front of a non-thin file
// (PrimaryKeyTableUtils.addKeyNamePrefix): renamed _KEY_<name>, id shifted
// by KeyFieldIDStart, NOT NULL.
func KeyFields(fields []types.DataField, trimmed []string) ([]types.DataField, error) {
	idx, err := FieldIndexes(fields, trimmed)
	if err != nil {
		return nil, err
	}
	out := make([]types.DataField, len(idx))
	for i, j := range idx {
		f := fields[j]
		out[i] = types.DataField{ID: f.ID + KeyFieldIDStart, Name: KeyFieldPrefix + f.Name, Type: f.Type.NotNull()}
	}
	return out, nil
}

// BucketKeys returns the bucket key of a primary-key table: the
// bucket-key option when set, else the trimmed primary keys
// (TableSchema's constructor: tmpBucketKeys = trimmedPrimaryKeys()).
func BucketKeys(primaryKeys, partitionKeys, bucketKeyOption []string) ([]string, error) {
	if len(bucketKeyOption) > 0 {
		return bucketKeyOption, nil
	}
	return TrimmedPrimaryKeys(primaryKeys, partitionKeys)
}
