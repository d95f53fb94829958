// Package fatal lets a component end the stream it runs in because of an
// error that retrying cannot fix (a missing table, a schema mismatch, a
// missing bucket, access denied).
//
// Benthos v4 has no such call: an error from Connect is logged and Connect
// is retried, forever, and a stream ends only when its inputs end
// (ErrEndOfInput) or it is stopped from outside. So the program that runs
// the stream installs a Handler in the stream's resources, and a component
// reports its permanent error to it with Stop; the handler stops the stream
// (gracefully, so that what other components already wrote is committed
// and acknowledged) and makes the program fail with the error. The
// benthos-paimon binary installs one that exits non-zero (main.go); a test
// running a StreamBuilder may install one that calls Stream.Stop.
package fatal

import (
	"fmt"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Handler is told of a permanent error of a component of the stream. It
// is called once per error, from the component's goroutine, and must not
// block.
type Handler func(err error)

// key is the resources' generic key of the Handler.
type key struct{}

// Install makes h the handler of the stream that res belongs to (every
// component of a stream shares its resources' generic values). Install it
// before the stream runs.
func Install(res *service.Resources, h Handler) { res.SetGeneric(key{}, h) }

// Installed reports whether a handler is installed for res's stream, so
// that a component can log its error before the handler stops the stream.
func Installed(res *service.Resources) bool {
	v, ok := res.GetGeneric(key{})
	if !ok {
		return false
	}
	_, ok = v.(Handler)
	return ok
}

// Stop reports err to the handler installed for res's stream and reports
// whether there was one. Without one (a StreamBuilder that installed none)
// the component cannot end the stream; it should keep failing with err, as
// slowly as its retries allow, so that the error stays visible.
func Stop(res *service.Resources, err error) bool {
	v, ok := res.GetGeneric(key{})
	if !ok {
		return false
	}
	h, ok := v.(Handler)
	if !ok {
		return false
	}
	h(err)
	return true
}

// Report is how a component ends the stream because of err, which
// retrying cannot fix: it logs err once, with "(retrying cannot fix this)"
// appended, and reports it to the handler installed for res's stream.
// Without a handler it does nothing and returns false; the component then
// keeps failing with err (retry.Permanent), since ending an input would
// make its read look complete.
func Report(res *service.Resources, err error) bool {
	if !Installed(res) {
		return false
	}
	err = fmt.Errorf("%w (retrying cannot fix this)", err)
	res.Logger().Errorf("%v", err)
	return Stop(res, err)
}

// First records the first error it is told of and calls stop once, when
// the first error arrives. Its Handle method is a Handler; it is safe for
// concurrent use.
type First struct {
	stop func()

	mu  sync.Mutex
	err error
}

// NewFirst returns a First that calls stop on the first error.
func NewFirst(stop func()) *First { return &First{stop: stop} }

// Handle records err if it is the first and then calls stop.
func (f *First) Handle(err error) {
	f.mu.Lock()
	first := f.err == nil
	if first {
		f.err = err
	}
	f.mu.Unlock()
	if first {
		f.stop()
	}
}

// Err returns the first error, nil if none arrived.
func (f *First) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
