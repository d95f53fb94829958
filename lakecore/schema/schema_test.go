package schema_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestFixtureRoundTrip parses every Java-written schema file and requires
// Marshal to reproduce it byte for byte.
func TestFixtureRoundTrip(t *testing.T) {
	for _, f := range fixturetest.Files(t, "schema/schema-*") {
		t.Run(fixturetest.Name(t, f), func(t *testing.T) {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := schema.Parse(want)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := s.Marshal()
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Marshal differs from the Java file\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// TestFixtureJavaHashMapOrder checks the java.util.HashMap emulation that
// orders the options of schemas Go writes: every fixture's option order must
// be the iteration order of a HashMap copied from a map with that order
// (Schema's and generateTableSchema's new HashMap<>(options)).
func TestFixtureJavaHashMapOrder(t *testing.T) {
	for _, f := range fixturetest.Files(t, "schema/schema-*") {
		t.Run(fixturetest.Name(t, f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := schema.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			order := schema.OptionOrder(s)
			if got := schema.JavaCopyOrder(order); !slices.Equal(got, order) {
				t.Fatalf("HashMap order %v, Java wrote %v", got, order)
			}
			// A changed key set takes the HashMap path in Marshal, with the
			// file order as insertion order and new keys last.
			s.Options["x-added"] = "1"
			out, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			back, err := schema.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			want := schema.JavaCopyOrder(append(slices.Clone(order), "x-added"))
			if got := schema.OptionOrder(back); !slices.Equal(got, want) {
				t.Fatalf("options with a new key written as %v, want %v", got, want)
			}
		})
	}
}

func readFixture(t *testing.T, fixture, table, name string) *schema.TableSchema {
	t.Helper()
	data, err := os.ReadFile(fixturetest.Dir(t) + "/" + fixture + "/warehouse/default.db/" + table + "/schema/" + name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFixtureContents(t *testing.T) {
	nested := readFixture(t, "cpp-java11-append-bucket1-nested-types-orc-manifest", "parquet_append_table", "schema-0")
	if nested.Version != 3 || nested.ID != 0 || nested.HighestFieldID != 14 || nested.TimeMillis != 1747878267864 {
		t.Errorf("header = v%d id %d highest %d time %d", nested.Version, nested.ID, nested.HighestFieldID, nested.TimeMillis)
	}
	if got := len(nested.Fields); got != 13 {
		t.Fatalf("%d fields, want 13", got)
	}
	f10 := nested.Fields[9]
	if f10.ID != 9 || f10.Name != "f10" || f10.Type.String() != "MAP<ARRAY<FLOAT>, ROW<`f0` BOOLEAN, `f1` BIGINT>>" {
		t.Errorf("f10 = %d %s %s", f10.ID, f10.Name, f10.Type)
	}
	if row := f10.Type.Value; row == nil || row.Fields[0].ID != 10 || row.Fields[1].ID != 11 {
		t.Errorf("nested ROW ids of f10 = %+v, want 10, 11", f10.Type.Value)
	}
	if f := nested.Fields[12]; f.ID != 14 || f.Type.String() != "DECIMAL(2, 2)" {
		t.Errorf("f13 = %d %s", f.ID, f.Type)
	}
	if err := nested.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if b, err := nested.Opts().Bucket(); b != 1 || err != nil {
		t.Errorf("Bucket = %d, %v", b, err)
	}
	if bk := nested.BucketKeyFields(); len(bk) != 1 || bk[0].Name != "f5" || bk[0].ID != 4 {
		t.Errorf("BucketKeyFields = %+v", bk)
	}
	if err := nested.CheckReadable(); !errors.Is(err, schema.ErrUnsupported) {
		t.Errorf("CheckReadable of an ORC-manifest table = %v, want ErrUnsupported", err)
	}

	evo := readFixture(t, "cpp-java12-append-unaware-schema-evolution", "append_table_with_alter_table", "schema-1")
	var ids []int
	for _, f := range evo.Fields {
		ids = append(ids, f.ID)
	}
	if got := fmt.Sprint(ids); got != "[0 1 6 3 7 5 8]" {
		t.Errorf("schema-1 ids = %s, want [0 1 6 3 7 5 8]", got)
	}
	if evo.HighestFieldID != 8 || evo.Fields[4].Description == nil || *evo.Fields[4].Description != "" {
		t.Errorf("schema-1 highest %d, d description %v", evo.HighestFieldID, evo.Fields[4].Description)
	}
	if pf := evo.PartitionFields(); len(pf) != 2 || pf[0].Name != "key0" || pf[1].Name != "key1" {
		t.Errorf("PartitionFields = %+v", pf)
	}
	if b, _ := evo.Opts().Bucket(); b != -1 {
		t.Errorf("Bucket = %d, want the default -1", b)
	}
	if err := evo.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if err := evo.CheckWritable(); err != nil {
		t.Errorf("CheckWritable: %v", err)
	}

	fixed := readFixture(t, "cpp-java11-append-fixed-bucket-complex-types", "append_complex_data", "schema-0")
	if err := fixed.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if f := fixed.Fields[3]; f.Type.Kind != types.KindTimestamp || f.Type.Precision != 9 {
		t.Errorf("f4 = %s", f.Type)
	}

	pk := readFixture(t, "cpp-java09-pk-table-avro-manifest-reference", "pk_09", "schema-0")
	if err := pk.Validate(); err != nil {
		t.Errorf("Validate of a primary-key table = %v", err)
	}
}
