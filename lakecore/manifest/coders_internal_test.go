package manifest

import (
	"bytes"
	"reflect"
	"strconv"
	"sync"
	"testing"
)

// TestJavaSchemasParsed: the built-in schemas parse, so files in Java's
// current layout never parse a schema again.
func TestJavaSchemasParsed(t *testing.T) {
	for _, text := range []string{manifestListSchema, manifestSchema, indexManifestSchema} {
		if javaSchemas[text] == nil {
			t.Errorf("built-in schema not parsed: %.60s...", text)
		}
	}
	data, err := EncodeEntries([]Entry{testEntry()}, Codec{})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder()
	if _, err := d.DecodeEntries(data); err != nil {
		t.Fatal(err)
	}
	if len(d.schemas) != 0 {
		t.Errorf("decoder kept %d schemas for Java's own layout", len(d.schemas))
	}
}

// TestDecoderKeepsSchemas: a Decoder parses another writer schema once and
// keeps at most decoderSchemaMax of them; decoding is the same either way.
func TestDecoderKeepsSchemas(t *testing.T) {
	e := testEntry()
	schema, enc := recordOf("record", entryFields(&e, fileFields(&e.File)))
	data := container(t, schema, enc)
	d := NewDecoder()
	for range 2 {
		got, err := d.DecodeEntries(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, []Entry{e}) {
			t.Fatalf("decoded %+v", got)
		}
	}
	if len(d.schemas) != 1 || d.schemas[schema] == nil {
		t.Fatalf("decoder kept %d schemas, want this one", len(d.schemas))
	}
	for i := range decoderSchemaMax + 10 {
		s, enc := recordOf("record"+strconv.Itoa(i), entryFields(&e, fileFields(&e.File)))
		if _, err := d.DecodeEntries(container(t, s, enc)); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.schemas) != decoderSchemaMax {
		t.Fatalf("decoder kept %d schemas, want the bound %d", len(d.schemas), decoderSchemaMax)
	}
}

// TestCodersShared: one Decoder and one Encoder used from several
// goroutines give what a fresh one gives each call (run with -race).
func TestCodersShared(t *testing.T) {
	for _, name := range []string{"zstd", "snappy", "deflate", "null"} {
		t.Run(name, func(t *testing.T) {
			enc, dec := NewEncoder(Codec{Name: name, ZstdLevel: 3}), NewDecoder()
			var wg sync.WaitGroup
			errs := make([]string, 8)
			for g := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					entries := make([]Entry, 50+g)
					for i := range entries {
						entries[i] = testEntry()
						entries[i].File.FileName = "data-" + strconv.Itoa(g) + "-" + strconv.Itoa(i) + ".parquet"
					}
					data, err := enc.EncodeEntries(entries)
					if err != nil {
						errs[g] = err.Error()
						return
					}
					fresh, err := EncodeEntries(entries, Codec{Name: name, ZstdLevel: 3})
					if err != nil {
						errs[g] = err.Error()
						return
					}
					if !bytes.Equal(withoutSync(data), withoutSync(fresh)) {
						errs[g] = "shared encoder wrote other bytes than a fresh one"
						return
					}
					got, err := dec.DecodeEntries(data)
					if err != nil {
						errs[g] = err.Error()
						return
					}
					if !reflect.DeepEqual(got, entries) {
						errs[g] = "decoded entries differ"
					}
				}()
			}
			wg.Wait()
			for g, e := range errs {
				if e != "" {
					t.Errorf("goroutine %d: %s", g, e)
				}
			}
		})
	}
}

// withoutSync zeroes the random sync marker of a container (its last 16
// bytes, repeated after the header and every block), in which alone two
// encodings of the same records differ.
func withoutSync(data []byte) []byte {
	return bytes.ReplaceAll(data, data[len(data)-syncSize:], make([]byte, syncSize))
}
