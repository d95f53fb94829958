package bench

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
)

// TestPeersUnavailable: without the oracles the section is skipped with the
// reason, unless the environment requires them, where it fails.
func TestPeersUnavailable(t *testing.T) {
	why := fmt.Errorf("%w: java is not on PATH", errPeersUnavailable)
	for _, c := range []struct {
		required bool
		wantErr  string // "" for a skip
	}{
		{false, ""},
		{true, "java is not on PATH (required by " + testenv.RequireInterop + "=1)"},
	} {
		s, err := peersUnavailable(why, c.required)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, errPeersUnavailable) || s != nil {
				t.Errorf("required: section %v, error %v; want no section and an error with %q", s, err, c.wantErr)
			}
			continue
		}
		if err != nil || s == nil {
			t.Fatalf("not required: section %v, error %v; want a skipped section", s, err)
		}
		if !strings.Contains(s.Skipped, "java is not on PATH") || !strings.Contains(s.Skipped, testenv.RequireInterop+"=1 makes this a failure") {
			t.Errorf("skip reason %q does not say why and how to require it", s.Skipped)
		}
		if len(s.Figures) != 0 || len(s.Tables) != 0 {
			t.Errorf("a skipped section has figures %v or tables %v", s.Figures, s.Tables)
		}
		md := (&Report{Sections: []*Section{s}}).Markdown()
		if !strings.Contains(md, "**Skipped:** peers unavailable: java is not on PATH") {
			t.Errorf("report does not say the section was skipped:\n%s", md)
		}
	}
}

// TestPeersTargets: the #19 targets are judged only at the issue's
// 1,000,000 rows, each in its direction (bytes: lower is better).
func TestPeersTargets(t *testing.T) {
	for _, c := range []struct {
		rows, write, bytes, read float64
		met                      [3]string
	}{
		{20_000, 2, 0.5, 2, [3]string{"not judged: measured at 20,000 rows, the target is at 1,000,000", "not judged: measured at 20,000 rows, the target is at 1,000,000", "not judged: measured at 20,000 rows, the target is at 1,000,000"}},
		{1_000_000, 0.46, 1.12, 0.55, [3]string{"no", "no", "no"}},
		{1_000_000, 1.0, 1.0, 1.2, [3]string{"yes", "yes", "yes"}},
	} {
		s := &Section{Name: "peers", Figures: map[string]float64{"rows": c.rows, "ratio_write_pypaimon": c.write, "ratio_bytes_java": c.bytes, "ratio_read_pypaimon": c.read}}
		rows := (&Report{Sections: []*Section{s}}).targets().Rows
		if len(rows) != 3 {
			t.Fatalf("rows %v", rows)
		}
		for i, r := range rows {
			if r[0] != "#19" || r[3] != c.met[i] {
				t.Errorf("%v rows, target %q: met %q, want %q", c.rows, r[1], r[3], c.met[i])
			}
		}
	}
}
