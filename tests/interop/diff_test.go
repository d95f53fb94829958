//go:build interop

package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// where names one comparison for the failure message: the table, the
// snapshot (0 = latest), who wrote and who read, and the filter or the
// query (a SQL engine's).
type where struct {
	table    string
	snapshot int64
	writer   string
	reader   string
	filter   string
	query    string
}

func (w where) String() string {
	snap := "latest"
	if w.snapshot > 0 {
		snap = fmt.Sprint(w.snapshot)
	}
	s := fmt.Sprintf("table %s, snapshot %s, written by %s, read by %s", w.table, snap, w.writer, w.reader)
	if w.filter != "" {
		s += ", filter [" + w.filter + "]"
	}
	if w.query != "" {
		s += ", query [" + w.query + "]"
	}
	return s
}

// multisetDiff returns the lines of want that got lacks and the lines of
// got that want lacks, counted as multisets, each in the order of its list.
func multisetDiff(want, got []string) (missing, extra []string) {
	count := map[string]int{}
	for _, l := range got {
		count[l]++
	}
	for _, l := range want {
		if count[l] > 0 {
			count[l]--
		} else {
			missing = append(missing, l)
		}
	}
	for _, l := range got {
		if count[l] > 0 {
			count[l]--
			extra = append(extra, l)
		}
	}
	return missing, extra
}

// diffLines compares two sorted lists of canonical lines as multisets and
// returns "" when equal, else a readable report: each expected row that is
// missing paired with the unexpected row most like it (same values in most
// columns), column by column with the expected and actual value; rows
// without a partner are listed whole.
func diffLines(w where, want, got []string) string {
	if equalLines(want, got) {
		return ""
	}
	missing, extra := multisetDiff(want, got)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: rows differ (expected %d rows, got %d; %d missing, %d unexpected)\n",
		w, len(want), len(got), len(missing), len(extra))
	used := make([]bool, len(extra))
	shown := 0
	for _, m := range missing {
		if shown >= 25 {
			fmt.Fprintf(&b, "  ... (%d more)\n", len(missing)+len(extra)-shown)
			return b.String()
		}
		shown++
		mc := parseColumns(m)
		best, bestScore := -1, 0
		for i, e := range extra {
			if used[i] {
				continue
			}
			ec := parseColumns(e)
			score := 0
			for k, v := range mc.values {
				if ev, ok := ec.values[k]; ok && ev == v {
					score++
				}
			}
			if score > bestScore {
				best, bestScore = i, score
			}
		}
		if best < 0 || bestScore*2 < len(mc.names) {
			fmt.Fprintf(&b, "  missing row: %s\n", m)
			continue
		}
		used[best] = true
		ec := parseColumns(extra[best])
		fmt.Fprintf(&b, "  row %s:\n", rowKey(mc))
		for _, k := range mc.names {
			if ev, ok := ec.values[k]; !ok {
				fmt.Fprintf(&b, "    column %s: expected %s, actual (absent)\n", k, mc.values[k])
			} else if ev != mc.values[k] {
				fmt.Fprintf(&b, "    column %s: expected %s, actual %s\n", k, mc.values[k], ev)
			}
		}
		for _, k := range ec.names {
			if _, ok := mc.values[k]; !ok {
				fmt.Fprintf(&b, "    column %s: expected (absent), actual %s\n", k, ec.values[k])
			}
		}
	}
	for i, e := range extra {
		if used[i] {
			continue
		}
		if shown >= 25 {
			fmt.Fprintf(&b, "  ... (more)\n")
			break
		}
		shown++
		fmt.Fprintf(&b, "  unexpected row: %s\n", e)
	}
	return b.String()
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// columns are the top-level columns of a canonical line, in order, with
// their raw JSON text.
type columns struct {
	names  []string
	values map[string]string
	line   string
}

func parseColumns(line string) columns {
	c := columns{values: map[string]string{}, line: line}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		c.names = []string{"(line)"}
		c.values["(line)"] = line
		return c
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		c.names = append(c.names, k)
		c.values[k] = string(bytes.TrimSpace(raw))
	}
	return c
}

// rowKey identifies a row in a report by its first two columns.
func rowKey(c columns) string {
	var parts []string
	for i, k := range c.names {
		if i == 2 {
			break
		}
		v := c.values[k]
		if len(v) > 60 {
			v = v[:60] + "..."
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ", ")
}
