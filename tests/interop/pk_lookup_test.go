//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
)

// replayPlans applies the changelog of streaming plans, in order, to a map
// from primary key to canonical row: +I and +U put the row, -U and -D
// remove it. A +I of a key already present, or a -U/-D whose row is not the
// key's current one, is an error: a lookup changelog retracts exactly what
// it emitted before. It returns the rows left, sorted as sortCodePoints
// sorts.
func replayPlans(pks []string, plans []pkPlan) ([]string, error) {
	state := map[string]string{}
	for _, p := range plans {
		for _, r := range p.Records {
			var cols map[string]json.RawMessage
			if err := json.Unmarshal([]byte(r.Row), &cols); err != nil {
				return nil, fmt.Errorf("snapshot %d: row %s: %w", p.Snapshot, r.Row, err)
			}
			var key strings.Builder
			for _, k := range pks {
				key.Write(cols[k])
				key.WriteByte('/')
			}
			k := key.String()
			old, ok := state[k]
			switch r.Kind {
			case "+I":
				if ok {
					return nil, fmt.Errorf("snapshot %d: +I %s of a key holding %s", p.Snapshot, r.Row, old)
				}
				state[k] = r.Row
			case "+U":
				state[k] = r.Row
			case "-U", "-D":
				if !ok || old != r.Row {
					return nil, fmt.Errorf("snapshot %d: %s %s retracts a key holding %q", p.Snapshot, r.Kind, r.Row, old)
				}
				delete(state, k)
			default:
				return nil, fmt.Errorf("snapshot %d: row kind %q", p.Snapshot, r.Kind)
			}
		}
	}
	out := make([]string, 0, len(state))
	for _, row := range state {
		out = append(out, row)
	}
	sortCodePoints(out)
	return out, nil
}

// equalRows reports a difference of two sorted row lists for an error
// message, "" when equal.
func equalRows(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	return fmt.Sprintf("\n got  %d:\n  %s\n want %d:\n  %s", len(got), strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
}

// checkChangelogStream streams tb's changelog from snapshot 1 with
// lakecore and with both Javas: the streams must be the same and replay to
// want (the model's canonical rows, sorted).
func checkChangelogStream(ctx context.Context, t *testing.T, tb *lakecore.Table, ref tableRef, pks, want []string, phase string) {
	t.Helper()
	m := pkMode{Mode: "from-snapshot", Snapshot: 1}
	goPlans, err := goStream(ctx, tb, tb.Schema().Fields, m)
	if err != nil {
		t.Fatalf("after %s: lakecore streams: %v", phase, err)
	}
	replayed, err := replayPlans(pks, goPlans)
	if err != nil {
		t.Fatalf("after %s: lakecore's changelog: %v", phase, err)
	}
	if d := equalRows(replayed, want); d != "" {
		t.Errorf("table %s after %s: the changelog from snapshot 1 replayed differs from the model:%s", ref, phase, d)
	}
	for _, o := range []string{java1, java2} {
		javaPlans, err := javaStream(o, ref, m)
		if err != nil {
			t.Fatalf("after %s: %s streams: %v", phase, o, err)
		}
		if d := diffPlans(pks, javaPlans, goPlans); d != "" {
			t.Errorf("table %s after %s: changelog streams differ (expected: %s's):\n%s", ref, phase, o, d)
		}
	}
}
