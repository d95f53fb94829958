package paimon

import (
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// TestParseRowKind: every name in any case and with surrounding space,
// and the names it refuses.
func TestParseRowKind(t *testing.T) {
	want := map[string]kv.RowKind{
		"": kv.Insert, "+I": kv.Insert, "insert": kv.Insert, "read": kv.Insert, "create": kv.Insert, "c": kv.Insert, "r": kv.Insert,
		"-U": kv.UpdateBefore, "update_before": kv.UpdateBefore,
		"+U": kv.UpdateAfter, "update": kv.UpdateAfter, "update_after": kv.UpdateAfter, "u": kv.UpdateAfter,
		"-D": kv.Delete, "delete": kv.Delete, "d": kv.Delete,
	}
	for name, kind := range want {
		for _, s := range []string{name, strings.ToUpper(name), strings.ToLower(name), " " + name + "\t"} {
			got, err := ParseRowKind(s)
			if err != nil || got != kind {
				t.Errorf("ParseRowKind(%q) = %v, %v; want %v", s, got, err, kind)
			}
		}
	}
	for _, s := range []string{"upsert", "+X", "I", "updat", "insert2", "truncate", "null"} {
		if got, err := ParseRowKind(s); err == nil || !strings.Contains(err.Error(), "is none of") {
			t.Errorf("ParseRowKind(%q) = %v, %v; want an error", s, got, err)
		}
	}
}
