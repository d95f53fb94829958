package retry_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

func TestWait(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{1, 500 * time.Millisecond}, {2, time.Second}, {3, 2 * time.Second}, {6, 16 * time.Second}, {7, 30 * time.Second}, {1000, 30 * time.Second}} {
		if got := retry.Wait(tc.n); got != tc.want {
			t.Errorf("Wait(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	var b retry.Backoff
	cause := errors.New("dial tcp: connection refused")
	for i, want := range []struct {
		wait time.Duration
		msg  string
	}{
		{500 * time.Millisecond, "(failure 1 in a row; retrying in 500ms, backing off exponentially from 500ms to at most 30s)"},
		{time.Second, "(failure 2 in a row; retrying in 1s,"},
		{2 * time.Second, "(failure 3 in a row; retrying in 2s,"},
	} {
		err := b.Transient(cause)
		var bo *service.ErrBackOff
		if !errors.As(err, &bo) || bo.Wait != want.wait || !strings.Contains(err.Error(), want.msg) || !errors.Is(bo.Err, cause) {
			t.Errorf("failure %d: %v; want a wait of %s and %q", i+1, err, want.wait, want.msg)
		}
	}
	b.Reset()
	var bo *service.ErrBackOff
	if err := b.Transient(cause); !errors.As(err, &bo) || bo.Wait != retry.Min {
		t.Errorf("after Reset: %v", err)
	}
	if err := retry.Permanent(cause); !errors.As(err, &bo) || bo.Wait != retry.Max || !strings.HasSuffix(err.Error(), "; retried every 30s") {
		t.Errorf("Permanent: %v", err)
	}
}
