package schema_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

// FuzzParseSchema feeds schema files (seeded with every fixture) to Parse:
// it must not panic, every error must wrap ErrInvalidSchema, and whatever
// parses must survive Validate and a Marshal/Parse/Marshal round trip.
func FuzzParseSchema(f *testing.F) {
	for _, p := range fixturetest.Files(f, "schema/schema-*") {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"id":0,"fields":[],"highestFieldId":-1,"partitionKeys":[],"primaryKeys":[],"options":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := schema.Parse(data)
		if err != nil {
			if !errors.Is(err, schema.ErrInvalidSchema) {
				t.Fatalf("error %v does not wrap ErrInvalidSchema", err)
			}
			return
		}
		_ = s.Validate()
		_ = s.CheckWritable()
		out, err := s.Marshal()
		if err != nil {
			return // e.g. a nested type without its element cannot be written
		}
		back, err := schema.Parse(out)
		if err != nil {
			t.Fatalf("Marshal output does not parse: %v\n%s", err, out)
		}
		again, err := back.Marshal()
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("round trip differs (%v):\n%s\n%s", err, out, again)
		}
	})
}
