package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// StatsKind is how much min/max/null-count metadata a column gets in the
// manifests (metadata.stats-mode).
type StatsKind int

// The stats kinds of apache/paimon
// paimon-common/src/main/java/org/apache/paimon/statistics/SimpleColStatsCollector.java.
const (
	// StatsNone collects nothing.
	StatsNone StatsKind = iota
	// StatsCounts collects null counts only.
	StatsCounts
	// StatsTruncate collects null counts and min/max, with strings and
	// binaries truncated to Length characters/bytes.
	StatsTruncate
	// StatsFull collects null counts and exact min/max.
	StatsFull
)

// String returns the option spelling of the kind ("none", "counts",
// "truncate", "full").
func (k StatsKind) String() string {
	switch k {
	case StatsNone:
		return "none"
	case StatsCounts:
		return "counts"
	case StatsTruncate:
		return "truncate"
	case StatsFull:
		return "full"
	}
	return fmt.Sprintf("StatsKind(%d)", int(k))
}

// StatsMode is a parsed metadata.stats-mode value. Length is the truncation
// length for StatsTruncate and 0 otherwise.
type StatsMode struct {
	Kind   StatsKind
	Length int
}

// String returns the option spelling ("truncate(16)", "full", ...).
func (m StatsMode) String() string {
	if m.Kind == StatsTruncate {
		return fmt.Sprintf("truncate(%d)", m.Length)
	}
	return m.Kind.String()
}

// DefaultStatsMode is metadata.stats-mode's default, truncate(16).
var DefaultStatsMode = StatsMode{Kind: StatsTruncate, Length: 16}

// ParseStatsMode parses "none", "counts", "full" or "truncate(<n>)", case
// insensitively and without surrounding whitespace, as
// SimpleColStatsCollector.from does. Errors wrap ErrInvalidOption.
func ParseStatsMode(s string) (StatsMode, error) {
	u := strings.ToUpper(s)
	switch u {
	case "NONE":
		return StatsMode{Kind: StatsNone}, nil
	case "COUNTS":
		return StatsMode{Kind: StatsCounts}, nil
	case "FULL":
		return StatsMode{Kind: StatsFull}, nil
	}
	if digits, ok := strings.CutPrefix(u, "TRUNCATE("); ok {
		if digits, ok = strings.CutSuffix(digits, ")"); ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
			n, err := strconv.ParseInt(digits, 10, 32)
			if err == nil {
				return StatsMode{Kind: StatsTruncate, Length: int(n)}, nil
			}
		}
	}
	return StatsMode{}, fmt.Errorf("%w: stats mode %q (use none, counts, truncate(<n>) or full)", ErrInvalidOption, s)
}
