// Package parallel runs indexed work on a bounded number of goroutines, as
// lakecore reads and deletes many small files on object stores where the
// work is I/O bound.
package parallel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// ForEach calls fn for the indexes 0..n-1 on up to limit goroutines and
// waits for them. After the first failure the remaining indexes are skipped
// and the context passed to fn is cancelled.
//
// It returns ctx.Err() when ctx is done once all calls have returned;
// otherwise the first error in index order that is not context.Canceled (a
// call abandoned because another failed reports context.Canceled, so the
// failure that caused it is reported instead), or failing that the first
// context.Canceled one. With n == 0 it returns ctx.Err() without calling fn.
func ForEach(ctx context.Context, limit, n int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return ctx.Err()
	}
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(limit, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || inner.Err() != nil {
					return
				}
				if errs[i] = fn(inner, i); errs[i] != nil {
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	var canceled error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if canceled == nil {
			canceled = err
		}
	}
	return canceled
}
