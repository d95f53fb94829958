//go:build linux

package storage

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to unless to exists (EEXIST). The kernel
// makes the check and the rename one step, and unlike link(2) it leaves no
// second name behind if the process dies right after.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS),
		errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EPERM):
		// EINVAL: the filesystem lacks the flag; ENOSYS: old kernel; EPERM
		// is what some seccomp profiles answer. link(2) decides instead
		// (and fails with EPERM itself if permissions are the cause).
		return errRenameNoReplaceUnsupported
	default:
		return err
	}
}
