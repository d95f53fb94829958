package paimon

import (
	"errors"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func fields(t *testing.T, row string) []types.DataField {
	t.Helper()
	fs := types.MustParse(row).Fields
	types.AssignFieldIDs(fs, 0)
	return fs
}

func TestCheckSchema(t *testing.T) {
	table := schema.NewTableSchema(fields(t, "ROW<id BIGINT NOT NULL, name STRING, r ROW<a INT, b STRING>, dt STRING, extra INT>"),
		[]string{"dt"}, map[string]string{"bucket": "-1"}, nil)
	bucketed := schema.NewTableSchema(fields(t, "ROW<id BIGINT NOT NULL, name STRING, dt STRING>"),
		[]string{"dt"}, map[string]string{"bucket": "4", "bucket-key": "id"}, nil)
	cases := []struct {
		name  string
		ct    CreateTable
		table *schema.TableSchema
		want  []string // substrings of the error; none: no error
	}{
		{name: "no schema configured", ct: CreateTable{Bucket: 4}, table: table},
		{name: "same, table has an extra column",
			ct:    CreateTable{Fields: fields(t, "ROW<id BIGINT NOT NULL, r ROW<a INT, b STRING>, dt STRING>"), PartitionKeys: []string{"dt"}, Bucket: -1},
			table: table},
		{name: "every difference listed",
			ct: CreateTable{Fields: fields(t, "ROW<id BIGINT, name INT, missing DATE, r ROW<a INT, c STRING>, dt STRING>"),
				PartitionKeys: []string{"name"}, Bucket: 2, BucketKey: []string{"id"}},
			table: table,
			want: []string{
				`column "id" differs in nullability: BIGINT NOT NULL in the table, BIGINT in create_table.schema`,
				`column "name" has type STRING in the table, INT in create_table.schema`,
				`column "missing" (DATE) is not in the table`,
				`column "r" has type ROW<`,
				`partition keys are ["dt"] in the table, ["name"] in create_table.partition_keys`,
				`bucket is -1 in the table, 2 in create_table.bucket`,
			}},
		{name: "bucket key differs",
			ct:    CreateTable{Fields: fields(t, "ROW<id BIGINT NOT NULL>"), PartitionKeys: []string{"dt"}, Bucket: 4, BucketKey: []string{"name"}},
			table: bucketed,
			want:  []string{`bucket key is ["id"] in the table, ["name"] in create_table.bucket_key`}},
		{name: "bucketed, same",
			ct:    CreateTable{Fields: fields(t, "ROW<id BIGINT NOT NULL>"), PartitionKeys: []string{"dt"}, Bucket: 4, BucketKey: []string{"id"}},
			table: bucketed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkSchema(c.ct, c.table)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrSchemaMismatch) {
				t.Fatalf("error %v does not wrap ErrSchemaMismatch", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if n := strings.Count(err.Error(), "; ") + 1; n != len(c.want)+1 { // + the closing advice
				t.Errorf("%d parts, want %d: %v", n, len(c.want)+1, err)
			}
		})
	}
}

func TestSameTypeIgnoresNestedIDsAndComments(t *testing.T) {
	a := types.MustParse("ROW<x INT, y ARRAY<ROW<z STRING>>>")
	b := types.MustParse("ROW<x INT, y ARRAY<ROW<z STRING>>>")
	types.AssignFieldIDs(a.Fields, 0)
	types.AssignFieldIDs(b.Fields, 10)
	d := "comment"
	b.Fields[0].Description = &d
	if !sameType(a, b) {
		t.Error("types differing only in ids and comments compare unequal")
	}
	if sameType(a, types.MustParse("ROW<x INT, y ARRAY<ROW<z INT>>>")) {
		t.Error("different nested types compare equal")
	}
}
