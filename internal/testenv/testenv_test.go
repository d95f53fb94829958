package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB whose Skipf and Fatalf only record.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestMissing(t *testing.T) {
	const v = "REQUIRE_TESTENV_SELF_TEST"
	for _, c := range []struct {
		value            string
		skipped, failed  bool
		messageMentions1 string
	}{
		{"", true, false, v + "=1 makes this a failure"},
		{"0", true, false, v + "=1 makes this a failure"},
		{"1", false, true, "required by " + v + "=1"},
	} {
		t.Setenv(v, c.value)
		r := &recorder{TB: t}
		Missingf(r, v, "no %s here", "oracle")
		if (r.skipped != "") != c.skipped || (r.failed != "") != c.failed {
			t.Fatalf("%s=%q: skipped %q, failed %q", v, c.value, r.skipped, r.failed)
		}
		msg := r.skipped + r.failed
		if !strings.HasPrefix(msg, "no oracle here") || !strings.Contains(msg, c.messageMentions1) {
			t.Errorf("%s=%q: message %q", v, c.value, msg)
		}
	}
}
