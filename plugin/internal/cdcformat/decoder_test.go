package cdcformat_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
)

var formatOfDir = map[string]cdcformat.Format{
	"debezium": cdcformat.Debezium, "canal": cdcformat.Canal, "maxwell": cdcformat.Maxwell, "ogg": cdcformat.Ogg,
}

// A Decoder gives what Decode gives, message after message (its schema
// cache hit or not), for every test vector and every malformed envelope.
func TestDecoderMatchesDecode(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.txt")
	decoders := map[cdcformat.Format]*cdcformat.Decoder{}
	for _, f := range cdcformat.Formats() {
		d, err := cdcformat.NewDecoder(f)
		if err != nil {
			t.Fatal(err)
		}
		decoders[f] = d
	}
	check := func(name string, f cdcformat.Format, in []byte) {
		want, wantErr := cdcformat.Decode(f, in)
		for pass := 0; pass < 2; pass++ {
			got, err := decoders[f].Decode(in)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Errorf("%s pass %d: Decoder error %v, Decode error %v", name, pass, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s pass %d: Decoder = %+v\nDecode = %+v", name, pass, got, want)
			}
			// Fields are the caller's: changing them leaves the cache alone.
			for i := range got.Fields {
				got.Fields[i].Name = "changed"
			}
		}
	}
	for _, file := range files {
		f := formatOfDir[filepath.Base(filepath.Dir(file))]
		rel, _ := filepath.Rel("testdata", file)
		for i, line := range lines(t, rel) {
			check(rel+":"+string(rune('1'+i)), f, line)
		}
	}
	for _, tt := range errorCases {
		check(tt.in, tt.f, []byte(tt.in))
	}
	// Top-level shapes for the Decoder's own delimiting of the message; a
	// malformed schema may be reported under another field, so only the
	// outcome is compared.
	for _, in := range []string{
		`{}`, ` { "schema" : null , "payload" : {"op":"c","after":{"a":[1,{"b":"}"}]}} } `,
		`{"schema":null,"payload":{"op":"c","after":{}},}`, `{"schema" null}`, `{"schema":{"a" 1},"payload":{}}`,
		`{"sch\u0065ma":null,"payload":{"op":"r","after":{"x":"\"{"}}}`, `{"schema":null,"payload":{"op":"c","after":{}}} x`,
		`{"schema":"\"","payload":{"op":"c","after":{}}}`, `{"schema":1.2.3,"payload":{}}`, `{"schema":[`, `{"op":"c","after":{},"x":tru}`,
	} {
		want, wantErr := cdcformat.Decode(cdcformat.Debezium, []byte(in))
		got, err := decoders[cdcformat.Debezium].Decode([]byte(in))
		if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Decoder = %+v, %v; Decode = %+v, %v", in, got, err, want, wantErr)
		}
	}
	if _, err := cdcformat.NewDecoder("json"); err == nil || !strings.Contains(err.Error(), "debezium-json") {
		t.Errorf("NewDecoder(json) error %v", err)
	}
}

// Concurrent use, alternating two schemas (run with -race).
func TestDecoderConcurrent(t *testing.T) {
	d, err := cdcformat.NewDecoder(cdcformat.Debezium)
	if err != nil {
		t.Fatal(err)
	}
	msgs := [][]byte{lines(t, "debezium/schema-alltype.txt")[0], lines(t, "debezium/schema-include.txt")[0]}
	want := make([]cdcformat.Event, len(msgs))
	for i, m := range msgs {
		if want[i], err = cdcformat.Decode(cdcformat.Debezium, m); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				k := (g + i) % len(msgs)
				ev, err := d.Decode(msgs[k])
				if err != nil || !reflect.DeepEqual(ev, want[k]) {
					select {
					case errs <- "goroutine decode differs":
					default:
					}
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
