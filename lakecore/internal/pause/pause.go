// Package pause waits for a while unless the context ends first: the
// back-off of lakecore's retry loops and the delays of fault injection.
package pause

import (
	"context"
	"time"
)

// For waits d and returns nil, or returns ctx.Err() as soon as ctx is done.
// Its timer is released either way.
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
