package bench

import (
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
)

// TestHarnessSkipIsAMessage: a set-up that skips through the harness's
// testing.TB (testenv.Missing, as s3test does without versitygw) ends with
// its reason recorded, not with a nil-pointer panic of the embedded TB.
func TestHarnessSkipIsAMessage(t *testing.T) {
	t.Setenv(testenv.RequireS3, "")
	tb := &harnessTB{name: "bench", dir: t.TempDir()}
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(tbStop); !ok {
					t.Fatalf("panic %v, want the harness's stop", p)
				}
			}
		}()
		testenv.Missing(tb, testenv.RequireS3, "no versitygw here")
		t.Fatal("Missing returned")
	}()
	if len(tb.msgs) != 1 || !strings.Contains(tb.msgs[0], "no versitygw here") {
		t.Fatalf("messages %q, want the reason", tb.msgs)
	}
}
