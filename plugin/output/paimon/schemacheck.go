package paimon

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// ErrSchemaMismatch is wrapped by the Connect error of an output whose
// create_table settings do not match the existing table.
var ErrSchemaMismatch = errors.New("the table does not match create_table")

// checkSchema compares the configured table (create_table: columns, partition
// keys, bucket and bucket key) with the table's schema and returns an error
// wrapping ErrSchemaMismatch that lists every difference, or nil. Columns of
// the table that the config does not list are fine (other writers or schema
// evolution added them); column comments are not compared. Without a
// configured schema there is nothing to check.
func checkSchema(ct CreateTable, s *schema.TableSchema) error {
	if len(ct.Fields) == 0 {
		return nil
	}
	var diffs []string
	for _, f := range ct.Fields {
		i := types.FieldByName(s.Fields, f.Name)
		if i < 0 {
			diffs = append(diffs, fmt.Sprintf("column %q (%s) is not in the table", f.Name, f.Type))
			continue
		}
		tf := s.Fields[i]
		if !sameType(f.Type, tf.Type) {
			what := "has type"
			if sameType(f.Type.WithNullable(true), tf.Type.WithNullable(true)) {
				what = "differs in nullability:"
			}
			diffs = append(diffs, fmt.Sprintf("column %q %s %s in the table, %s in create_table.schema", f.Name, what, tf.Type, f.Type))
		}
	}
	if !slices.Equal(ct.PartitionKeys, s.PartitionKeys) {
		diffs = append(diffs, fmt.Sprintf("partition keys are %s in the table, %s in create_table.partition_keys",
			list(s.PartitionKeys), list(ct.PartitionKeys)))
	}
	if !slices.Equal(ct.PrimaryKeys, s.PrimaryKeys) && !(len(ct.PrimaryKeys) == 0 && len(s.PrimaryKeys) == 0) {
		diffs = append(diffs, fmt.Sprintf("primary keys are %s in the table, %s in create_table.primary_keys",
			list(s.PrimaryKeys), list(ct.PrimaryKeys)))
	}
	opts := s.Opts()
	if n, err := opts.Bucket(); err != nil {
		diffs = append(diffs, fmt.Sprintf("the table's bucket option is invalid: %v", err))
	} else if n != ct.Bucket {
		diffs = append(diffs, fmt.Sprintf("bucket is %d in the table, %d in create_table.bucket", n, ct.Bucket))
	} else if n > 0 && (len(ct.BucketKey) > 0 || len(s.PrimaryKeys) == 0) {
		var keys []string
		for _, f := range s.BucketKeyFields() {
			keys = append(keys, f.Name)
		}
		if !slices.Equal(keys, ct.BucketKey) {
			diffs = append(diffs, fmt.Sprintf("bucket key is %s in the table, %s in create_table.bucket_key", list(keys), list(ct.BucketKey)))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w (schema-%d): %s; change create_table to match the table, or write to another table",
		ErrSchemaMismatch, s.ID, strings.Join(diffs, "; "))
}

// sameType compares types as a user sees them: kind, length, precision,
// scale, nullability and nested names and types, ignoring the field ids and
// descriptions of nested ROW fields.
func sameType(a, b types.DataType) bool {
	return stripped(a).Equal(stripped(b))
}

func stripped(t types.DataType) types.DataType {
	if t.Element != nil {
		e := stripped(*t.Element)
		t.Element = &e
	}
	if t.Key != nil {
		k := stripped(*t.Key)
		t.Key = &k
	}
	if t.Value != nil {
		v := stripped(*t.Value)
		t.Value = &v
	}
	if t.Fields != nil {
		fs := make([]types.DataField, len(t.Fields))
		for i, f := range t.Fields {
			fs[i] = types.DataField{Name: f.Name, Type: stripped(f.Type)}
		}
		t.Fields = fs
	}
	return t
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
