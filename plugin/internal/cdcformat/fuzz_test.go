package cdcformat_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
)

// fuzzDecode seeds the corpus with every line of testdata/<dir> and checks
// that Decode never panics, that its errors wrap ErrInvalidEnvelope, that a
// successful decode has only +I / -D changes with rows, and that a Decoder
// (reused across inputs, so its cache is exercised) agrees with Decode.
func fuzzDecode(f *testing.F, format cdcformat.Format, dir string, extra ...string) {
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s: %v", dir, err)
	}
	for _, file := range files {
		rel, _ := filepath.Rel("testdata", file)
		for _, l := range lines(f, rel) {
			f.Add(l)
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
	decoder, err := cdcformat.NewDecoder(format)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if format == cdcformat.Debezium {
			if _, err := cdcformat.DebeziumKeyFields(data); err != nil && !errors.Is(err, cdcformat.ErrInvalidEnvelope) {
				t.Fatalf("key error %v does not wrap ErrInvalidEnvelope", err)
			}
		}
		ev, err := cdcformat.Decode(format, data)
		// The Decoder's fast path (Debezium: the schema delimited, not
		// parsed, and cached) must agree; its error may name another field.
		dev, derr := decoder.Decode(data)
		if (err == nil) != (derr == nil) || (err == nil && !reflect.DeepEqual(ev, dev)) {
			t.Fatalf("Decode = %+v, %v\nDecoder.Decode = %+v, %v", ev, err, dev, derr)
		}
		if err != nil {
			if !errors.Is(err, cdcformat.ErrInvalidEnvelope) {
				t.Fatalf("error %v does not wrap ErrInvalidEnvelope", err)
			}
			return
		}
		for i, c := range ev.Changes {
			if c.Kind != kv.Insert && c.Kind != kv.Delete {
				t.Fatalf("change %d: row kind %v", i, c.Kind)
			}
			if c.Row == nil {
				t.Fatalf("change %d: nil row", i)
			}
		}
		if ev.DDL != "" && len(ev.Changes) != 0 {
			t.Fatalf("DDL event with %d changes", len(ev.Changes))
		}
		for i, fd := range ev.Fields {
			if fd.ID != i {
				t.Fatalf("field %d has id %d", i, fd.ID)
			}
		}
	})
}

// FuzzDecodeDebezium also reads each input as a record key.
func FuzzDecodeDebezium(f *testing.F) {
	f.Add([]byte(`{"schema":{"type":"struct","fields":[{"type":"int32","field":"id"}]},"payload":{"id":1}}`))
	fuzzDecode(f, cdcformat.Debezium, "debezium",
		`{"schema":{"fields":[{"field":"after","fields":[{"field":"v","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}}]}]},"payload":{"op":"u","before":{"v":"AQ=="},"after":{"v":"/w=="}}}`,
		`{"schema":{"fields":[{"field":"before","fields":[{"field":"t","type":"int64","name":"io.debezium.time.NanoTime"},{"field":"s","type":"struct","name":"io.debezium.data.VariableScaleDecimal"}]}]},"payload":{"op":"d","before":{"t":1,"s":{"scale":1,"value":"AA=="}}}}`)
}

func FuzzDecodeCanal(f *testing.F) {
	fuzzDecode(f, cdcformat.Canal, "canal",
		`{"data":[{"e":"1","s":"3","b":"1","x":"\u00ff"}],"old":[{"e":"2"}],"mysqlType":{"e":"enum('a','b')","s":"set('a','b')","b":"tinyint(1)","x":"blob"},"type":"UPDATE"}`)
}

func FuzzDecodeMaxwell(f *testing.F) {
	fuzzDecode(f, cdcformat.Maxwell, "maxwell",
		`{"type":"table-alter","database":"d","table":"t","sql":"ALTER TABLE t ADD c INT"}`)
}

func FuzzDecodeOgg(f *testing.F) {
	fuzzDecode(f, cdcformat.Ogg, "ogg")
}
