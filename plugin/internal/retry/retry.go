// Package retry paces the paimon plugins' Connect after errors: transient
// ones back off exponentially up to a documented maximum, with a message
// that says which failure in a row it is and when the next attempt comes;
// one that retrying cannot fix, when nothing can stop the stream, is
// reported at the slowest pace.
package retry

import (
	"fmt"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// The waits between Connect attempts: after the first transient failure
// in a row Min, then twice the previous wait, at most Max. They are
// documented in the components' descriptions.
const (
	Min = 500 * time.Millisecond
	Max = 30 * time.Second
)

// Wait is the wait after the n-th failed attempt in a row (n >= 1).
func Wait(n int) time.Duration {
	d := Min
	for i := 1; i < n && d < Max; i++ {
		d *= 2
	}
	return min(d, Max)
}

// Backoff counts a component's failed Connects in a row. It is safe for
// concurrent use.
type Backoff struct {
	mu       sync.Mutex
	failures int
}

// Reset starts counting again after a successful Connect.
func (b *Backoff) Reset() {
	b.mu.Lock()
	b.failures = 0
	b.mu.Unlock()
}

// Transient returns err as Connect should return it after a transient
// failure: a service.ErrBackOff with the wait for this failure in a row,
// whose message says so.
func (b *Backoff) Transient(err error) error {
	b.mu.Lock()
	b.failures++
	n := b.failures
	b.mu.Unlock()
	w := Wait(n)
	return service.NewErrBackOff(fmt.Errorf("%w (failure %d in a row; retrying in %s, backing off exponentially from %s to at most %s)",
		err, n, w, Min, Max), w)
}

// Permanent returns err, which retrying cannot fix, as Connect should
// return it when nothing stops the stream (a stream without a
// fatal.Handler): retried at the slowest pace, and saying so.
func Permanent(err error) error {
	return service.NewErrBackOff(fmt.Errorf("%w; retried every %s", err, Max), Max)
}
