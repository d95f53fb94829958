package fixturetest_test

import (
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestRepoRoot(t *testing.T) {
	root, err := fixturetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "fixturetest")); err != nil {
		t.Fatalf("root %s does not hold this package: %v", root, err)
	}
}

func TestFiles(t *testing.T) {
	files := fixturetest.Files(t, "schema/schema-0")
	for _, f := range files {
		if filepath.Base(f) != "schema-0" || fixturetest.Name(t, f) == f {
			t.Errorf("file %s, name %s", f, fixturetest.Name(t, f))
		}
	}
}

func TestRender(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{int32(1), "int32:1"},
		{int64(1), "int64:1"},
		{"a", `"a"`},
		{[]byte("a"), `bytes:"a"`},
		{types.Decimal{Unscaled: big.NewInt(1050), Scale: 3}, "dec:1.050"},
		{types.Timestamp{Millis: 1, NanoOfMilli: 2}, "ts:1970-01-01T00:00:00.001000002(1+2)"},
		{types.Date(3), "date:3"},
		{types.Time(4), "time:4"},
		{[]any{int8(1), nil}, "[int8:1, null]"},
		{types.Map{Keys: []any{"k"}, Values: []any{true}}, `{"k": bool:true}`},
	}
	for _, tc := range cases {
		if got := fixturetest.Render(tc.v); got != tc.want {
			t.Errorf("Render(%#v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}
