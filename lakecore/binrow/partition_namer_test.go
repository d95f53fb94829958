package binrow_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestPartitionNamer(t *testing.T) {
	keys := []types.DataField{key("dt", strT), key("h r", intT)}
	ktypes := []types.DataType{strT, intT}
	cases := []struct {
		name       string
		vals       []any
		wantName   string
		wantDir    string
		wantString []string
	}{
		{"plain", []any{"2026-01-01", int32(7)}, "dt=2026-01-01/h r=7", "dt=2026-01-01/h r=7", []string{"2026-01-01", "7"}},
		{"escaped", []any{"a/b=c", int32(-1)}, "dt=a/b=c/h r=-1", "dt=a%2Fb%3Dc/h r=-1", []string{"a/b=c", "-1"}},
		{"null and blank", []any{" ", nil}, "dt=__DEFAULT_PARTITION__/h r=__DEFAULT_PARTITION__",
			"dt=__DEFAULT_PARTITION__/h r=__DEFAULT_PARTITION__", []string{"__DEFAULT_PARTITION__", "__DEFAULT_PARTITION__"}},
	}
	n := binrow.NewPartitionNamer(keys, binrow.DefaultPartitionOptions())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row, err := binrow.Serialize(ktypes, c.vals)
			if err != nil {
				t.Fatal(err)
			}
			p, err := n.Of(row)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != c.wantName || p.Dir != c.wantDir || strings.Join(p.Strings, "|") != strings.Join(c.wantString, "|") {
				t.Errorf("got name %q dir %q strings %q, want %q %q %q", p.Name, p.Dir, p.Strings, c.wantName, c.wantDir, c.wantString)
			}
			if len(p.Values) != 2 || p.Values[1] != c.vals[1] {
				t.Errorf("values %#v, want %#v", p.Values, c.vals)
			}
			again, err := n.Of(row)
			if err != nil || again != p {
				t.Errorf("second Of: %p, %v; want the cached %p", again, err, p)
			}
		})
	}
}

func TestPartitionNamerUnpartitioned(t *testing.T) {
	p, err := binrow.NewPartitionNamer(nil, binrow.DefaultPartitionOptions()).Of([]byte{0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "" || p.Dir != "" || p.Values != nil || p.Strings != nil {
		t.Errorf("unpartitioned: %+v, want all empty", p)
	}
}

func TestPartitionNamerCorruptRow(t *testing.T) {
	n := binrow.NewPartitionNamer([]types.DataField{key("dt", strT)}, binrow.DefaultPartitionOptions())
	_, err := n.Of([]byte{1, 2, 3})
	if err == nil || !strings.Contains(err.Error(), "partition 010203") {
		t.Fatalf("error %v, want one naming partition 010203", err)
	}
}

func TestPartitionNamerConcurrent(t *testing.T) {
	n := binrow.NewPartitionNamer([]types.DataField{key("h", intT)}, binrow.DefaultPartitionOptions())
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				v := int32((g + i) % 10)
				row, err := binrow.Serialize([]types.DataType{intT}, []any{v})
				if err != nil {
					t.Error(err)
					return
				}
				p, err := n.Of(row)
				if err != nil || p.Values[0] != v {
					t.Errorf("Of(%d) = %+v, %v", v, p, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
