package storage

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ValidatePath checks that p names a file the same way on every FileIO: a
// non-empty, slash-separated, relative path of valid UTF-8 without empty,
// "." or ".." elements and without NUL bytes ("db.db/t/snapshot/snapshot-1").
// Any other byte is allowed, including '=', '%', spaces and backslashes,
// since partition directories carry escaped user values. The error wraps
// [ErrInvalidPath].
func ValidatePath(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty", ErrInvalidPath)
	}
	return validateRel(p)
}

// validateDir checks a directory argument of List: "" (the root) or a path
// that ValidatePath accepts, optionally with one trailing slash. It returns
// the directory without the trailing slash.
func validateDir(dir string) (string, error) {
	d := strings.TrimSuffix(dir, "/")
	if d == "" {
		if dir != "" {
			return "", fmt.Errorf("%w %q: absolute", ErrInvalidPath, dir)
		}
		return "", nil
	}
	return d, validateRel(d)
}

func validateRel(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("%w %q: not valid UTF-8", ErrInvalidPath, p)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("%w %q: contains NUL", ErrInvalidPath, p)
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w %q: absolute", ErrInvalidPath, p)
	}
	for elem := range strings.SplitSeq(p, "/") {
		switch elem {
		case "":
			return fmt.Errorf("%w %q: empty element", ErrInvalidPath, p)
		case ".", "..":
			return fmt.Errorf("%w %q: %q element", ErrInvalidPath, p, elem)
		}
	}
	return nil
}

// joinPath joins a directory ("" = root) and a relative name.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
