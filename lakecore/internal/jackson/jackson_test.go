package jackson

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
)

// fixtureFiles returns the Java-written schema and snapshot files of the
// fixtures, or skips.
func fixtureFiles(t testing.TB) []string {
	t.Helper()
	return append(fixturetest.Files(t, "schema/schema-*"), fixturetest.Files(t, "snapshot/snapshot-*")...)
}

func compact(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestPrettyFixtures re-prints every Java-written schema and snapshot file
// from its compact form and requires the original bytes.
func TestPrettyFixtures(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Pretty(compact(t, want))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n--- got\n%s\n--- want\n%s", f, got, want)
		}
	}
}

// TestPrettyJavaEscapes compares with testdata/java142-escapes.json, written
// by Paimon 1.4.2's JsonSerdeUtil.toJson (see
// lakecore/schema/testdata/oracle): every control character, quote,
// backslash, '/', HTML characters, DEL, U+2028/2029 and a supplementary
// character; empty and nested containers; null, booleans, negatives.
func TestPrettyJavaEscapes(t *testing.T) {
	want, err := os.ReadFile("testdata/java142-escapes.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Pretty(compact(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("\n--- got\n%s\n--- want\n%s", got, want)
	}
	// encoding/json's own escaping (\u003c, \u2028, lower-case hex) must be
	// undone: Marshal of the decoded value gives the same bytes.
	var v struct {
		S string `json:"s"`
	}
	if err := json.Unmarshal(want, &v); err != nil {
		t.Fatal(err)
	}
	enc, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	line := bytes.SplitN(want, []byte("\n"), 3)[1]
	wantS := append(append([]byte("{\n"), bytes.TrimSuffix(line, []byte(","))...), "\n}"...)
	if !bytes.Equal(enc, wantS) {
		t.Fatalf("Marshal:\n%s\nwant\n%s", enc, wantS)
	}
}

func TestPretty(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{ }`},
		{`[]`, `[ ]`},
		{`{"a":1}`, "{\n  \"a\" : 1\n}"},
		{`{"a":[]}`, "{\n  \"a\" : [ ]\n}"},
		{`{"a":{}}`, "{\n  \"a\" : { }\n}"},
		{`{"a":[1,"x",null,true,false,-1.5e3]}`, "{\n  \"a\" : [ 1, \"x\", null, true, false, -1.5e3 ]\n}"},
		{`{"f":[{"id":0},{"id":1}]}`, "{\n  \"f\" : [ {\n    \"id\" : 0\n  }, {\n    \"id\" : 1\n  } ]\n}"},
		{`{"t":{"k":{"e":"F"}}}`, "{\n  \"t\" : {\n    \"k\" : {\n      \"e\" : \"F\"\n    }\n  }\n}"},
		{`[[{"a":[{}]}]]`, "[ [ {\n  \"a\" : [ { } ]\n} ] ]"},
		{` { "a" : "\u003c\/" } `, "{\n  \"a\" : \"</\"\n}"},
		{`"s"`, `"s"`},
		{`9223372036854775807`, `9223372036854775807`},
	} {
		got, err := Pretty([]byte(tc.in))
		if err != nil {
			t.Errorf("Pretty(%s): %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("Pretty(%s) =\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a"}`, `{"a":1}{}`, `[1,]`, `{"a":1,}`, `nul`, `{1:2}`} {
		if got, err := Pretty([]byte(bad)); err == nil {
			t.Errorf("Pretty(%q) = %q, want an error", bad, got)
		}
	}
}

func TestObjectAndMembers(t *testing.T) {
	var o Object
	if string(o.Bytes()) != "{}" {
		t.Errorf("empty Object = %s", o.Bytes())
	}
	o.String("b", "x\"y")
	o.Int("a", -3)
	o.Null("n")
	o.Raw("r", []byte(`[1]`))
	if got := string(o.Bytes()); got != `{"b":"x\"y","a":-3,"n":null,"r":[1]}` {
		t.Errorf("Object = %s", got)
	}
	ms, err := Members([]byte(`{"z":1,"a":{"x":[2]},"z":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Key != "z" || string(ms[0].Value) != "3" || ms[1].Key != "a" || string(ms[1].Value) != `{"x":[2]}` {
		t.Errorf("Members = %+v", ms)
	}
	for _, bad := range []string{`[]`, `{"a":1} 2`, `{"a":}`, `"x"`} {
		if _, err := Members([]byte(bad)); err == nil {
			t.Errorf("Members(%s) succeeded", bad)
		}
	}
}

func FuzzPretty(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[{"b":{}}]}`, `"\u0001"`, `[1,[2,[3]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Pretty(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Pretty(%q) = %q is not valid JSON", data, out)
		}
		again, err := Pretty(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("Pretty is not idempotent on %q: %q then %q (%v)", data, out, again, err)
		}
	})
}
