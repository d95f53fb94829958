package schema_test

import (
	"os"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

func benchSchema(b *testing.B) []byte {
	files := fixturetest.Files(b, "schema/schema-*")
	data, err := os.ReadFile(files[1]) // the nested-types schema
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkParse(b *testing.B) {
	data := benchSchema(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := schema.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	s, err := schema.Parse(benchSchema(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}
