//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package lookupfile

import (
	"errors"
	"os"
)

// lockFile cannot lock without flock(2): taking a lock always fails, so no
// directory is ever taken for stale.
func lockFile(_ *os.File, wait bool) error {
	if wait {
		return nil
	}
	return errors.New("no flock(2) on this system")
}
