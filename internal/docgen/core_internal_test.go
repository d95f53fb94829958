package docgen

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestBenthosCoreList checks benthosCore against the components Benthos'
// pure and io bundles register: this test binary imports nothing else, so
// its global environment is exactly theirs. On a Benthos upgrade it fails
// with the list to paste into core.go.
func TestBenthosCoreList(t *testing.T) {
	got := map[string][]string{}
	for _, w := range walkers(service.GlobalEnvironment()) {
		w.walk(func(name string, _ *service.ConfigView) { got[w.kind] = append(got[w.kind], name) })
	}
	var want, paste []string
	for _, w := range walkers(service.GlobalEnvironment()) {
		names := got[w.kind]
		slices.Sort(names)
		core := slices.Clone(benthosCore[w.kind])
		slices.Sort(core)
		if !slices.Equal(names, core) {
			want = append(want, fmt.Sprintf("%s: core.go has %v, Benthos registers %v", w.kind, core, names))
		}
		paste = append(paste, fmt.Sprintf("\t%q: {%q},", w.kind, names))
	}
	if len(want) > 0 {
		t.Fatalf("benthosCore is not what Benthos' bundles register:\n%s\nbenthosCore in core.go should be:\n%s",
			strings.Join(want, "\n"), strings.Join(paste, "\n"))
	}
	// The list feeds a filter: everything it names must also be filtered.
	if !isBenthosCore("output", "stdout") || isBenthosCore("output", "paimon") || isBenthosCore("input", "stdout") {
		t.Fatal("isBenthosCore does not follow benthosCore")
	}
}
