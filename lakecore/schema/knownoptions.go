package schema

import (
	_ "embed" // known_options.txt
	"fmt"
	"sort"
	"strings"
)

// knownOptionsText is the list of option names Paimon 1.4 and 2.0 define
// (see the file's header for where they come from).
//
//go:embed known_options.txt
var knownOptionsText string

// knownOptions are the exact names of knownOptionsText; knownTemplates its
// names with a "#" (a class name), split around it.
var knownOptions, knownTemplates = parseKnownOptions(knownOptionsText)

func parseKnownOptions(text string) (map[string]bool, [][2]string) {
	exact := map[string]bool{}
	var templates [][2]string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if before, after, ok := strings.Cut(line, "#"); ok {
			templates = append(templates, [2]string{before, after})
			continue
		}
		exact[line] = true
	}
	return exact, templates
}

// OptionPrefixes are the families of option names Paimon builds at run
// time rather than declares, accepted with any suffix:
//
//   - "fields." per-column options (fields.<column>.aggregate-function,
//     .sequence-group, .default-value, .stats-mode, .ignore-retract, ...);
//   - "file-index." index options (file-index.bloom-filter.columns,
//     file-index.bloom-filter.<column>.fpp, ...);
//   - the file formats' own options, which Paimon hands to the format with
//     the format's identifier as prefix (parquet.block.size,
//     orc.bloom.filter.columns; FileFormat.getIdentifier in
//     apache/paimon: paimon-common/.../format/FileFormat.java).
var OptionPrefixes = []string{
	"fields.", "file-index.",
	"parquet.", "orc.", "avro.", "csv.", "json.", "text.", "lance.", "blob.",
}

// IsKnownOption reports whether key names a table option of Paimon 1.4 or
// 2.0: a declared key (known_options.txt), a "#" template of it
// (commit.callback.<class>.param) or one of the OptionPrefixes families.
func IsKnownOption(key string) bool {
	if knownOptions[key] {
		return true
	}
	for _, p := range OptionPrefixes {
		if strings.HasPrefix(key, p) && len(key) > len(p) {
			return true
		}
	}
	for _, t := range knownTemplates {
		if len(key) > len(t[0])+len(t[1]) && strings.HasPrefix(key, t[0]) && strings.HasSuffix(key, t[1]) {
			return true
		}
	}
	return false
}

// CheckOptionNames returns an error wrapping ErrUnknownOption for the
// first (in sorted order) key of opts that IsKnownOption does not know,
// suggesting the known name it is closest to when one is a few edits away.
// Paimon itself stores any key, so a misspelt option is silently ignored
// there; checking the names a user configures catches the misspelling.
func CheckOptionNames(opts map[string]string) error {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		if !IsKnownOption(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	k := keys[0]
	if s := closestOption(k); s != "" {
		return fmt.Errorf("%w %q (did you mean %q?)", ErrUnknownOption, k, s)
	}
	return fmt.Errorf("%w %q: not an option of Paimon 1.4 or 2.0", ErrUnknownOption, k)
}

// closestOption is the known name at the smallest edit distance from key,
// if that distance is at most 3 (and less than half of key); "" if none.
func closestOption(key string) string {
	best, bestD := "", 4
	for name := range knownOptions {
		if d := editDistance(key, name, bestD+1); d < bestD || (d == bestD && name < best) {
			best, bestD = name, d
		}
	}
	if bestD > 3 || 2*bestD >= len(key) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or max when it is
// at least max (the computation stops early then).
func editDistance(a, b string, max int) int {
	if d := len(a) - len(b); d >= max || -d >= max {
		return max
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= max {
			return max
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], max)
}
