package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/paymentevent"
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
	const notJudged = "not judged: measured at 20,000 rows, the target is at 1,000,000"
	for _, c := range []struct {
		rows, write, bytes, uniqueBytes, read float64
		met                                   [4]string
	}{
		{20_000, 2, 0.5, 0.5, 2, [4]string{notJudged, notJudged, notJudged, notJudged}},
		{1_000_000, 0.46, 1.12, 1.12, 0.55, [4]string{"no", "no", "no", "no"}},
		{1_000_000, 1.0, 1.0, 1.0, 1.2, [4]string{"yes", "yes", "yes", "yes"}},
		{1_000_000, 1.0, 0.83, 1.05, 1.2, [4]string{"yes", "yes", "no", "yes"}},
	} {
		s := &Section{Name: "peers", Figures: map[string]float64{"rows": c.rows, "ratio_write_pypaimon": c.write, "ratio_bytes_java": c.bytes, "ratio_bytes_java_unique": c.uniqueBytes, "ratio_read_pypaimon": c.read}}
		rows := (&Report{Sections: []*Section{s}}).targets().Rows
		if len(rows) != 4 {
			t.Fatalf("rows %v", rows)
		}
		for i, r := range rows {
			if r[0] != "#19" || r[3] != c.met[i] {
				t.Errorf("%v rows, target %q: met %q, want %q", c.rows, r[1], r[3], c.met[i])
			}
		}
	}
}

// TestLakecoreCheck: the row-by-row check of a table against a generator
// finds a wrong value, a missing row and an unexpected one, not only a
// wrong count.
func TestLakecoreCheck(t *testing.T) {
	ctx := context.Background()
	const n, partitions = 200, 4
	wh := t.TempDir()
	if _, err := lakecoreWrite(ctx, wh, uniqueRows.rows(n, partitions)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		d       peerDataset
		n       int
		wantErr string // "" for a pass
	}{
		{"same rows", uniqueRows, n, ""},
		{"other generator", paymentRows, n, " is "},
		{"one user differs", peerDataset{"x", "x", func(i int64, p int) []any {
			r := paymentevent.UniqueRow(i, p)
			if i == 77 {
				r[2] = r[2].(string) + "!"
			}
			return r
		}}, n, "row 77 is "},
		{"a row missing", uniqueRows, n + 1, "200 rows, want 201"},
		{"a row too many", uniqueRows, n - 1, "want 1..199"},
	} {
		err := lakecoreCheck(ctx, wh, c.d, c.n, partitions)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.wantErr)
		}
	}
}
