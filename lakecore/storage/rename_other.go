//go:build !linux

package storage

// renameNoReplace is only implemented on Linux; elsewhere link(2) decides.
func renameNoReplace(from, to string) error {
	return errRenameNoReplaceUnsupported
}
