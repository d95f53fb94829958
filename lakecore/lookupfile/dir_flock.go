//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package lookupfile

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on f, waiting for it when wait.
func lockFile(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	return syscall.Flock(int(f.Fd()), how)
}
