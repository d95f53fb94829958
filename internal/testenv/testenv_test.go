package testenv

import (
	"strings"
	"testing"
)

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
		r := &Recorder{TB: t}
		Missingf(r, v, "no %s here", "oracle")
		if (r.SkipMessage != "") != c.skipped || (r.FatalMessage != "") != c.failed {
			t.Fatalf("%s=%q: skipped %q, failed %q", v, c.value, r.SkipMessage, r.FatalMessage)
		}
		msg := r.SkipMessage + r.FatalMessage
		if !strings.HasPrefix(msg, "no oracle here") || !strings.Contains(msg, c.messageMentions1) {
			t.Errorf("%s=%q: message %q", v, c.value, msg)
		}
	}
}
