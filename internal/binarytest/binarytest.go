// Package binarytest builds the benthos-paimon binary for the tests that
// run it as a user would: the CLI tests of plugin/command, tests/e2e and
// tests/reliability. It is imported by tests only.
package binarytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
)

// The binary of this test process: built once, on first use, so that runs
// which need no binary do not pay for the build.
var (
	once sync.Once
	dir  string
	path string
	err  error
)

// Path returns the benthos-paimon binary, built with `go build` in the
// repository root on the first call of the test process; a failed build
// fails t, and every later call, with the compiler's output. It is safe for
// concurrent use. TestMain removes the binary with Remove.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(build)
	if err != nil {
		t.Fatalf("build benthos-paimon: %v", err)
	}
	return path
}

func build() {
	root, rerr := fixturetest.RepoRoot()
	if rerr != nil {
		err = rerr
		return
	}
	if dir, err = os.MkdirTemp("", "benthos-paimon-bin-"); err != nil {
		return
	}
	path = filepath.Join(dir, "benthos-paimon")
	cmd := exec.Command("go", "build", "-o", path, ".")
	cmd.Dir = root
	if out, berr := cmd.CombinedOutput(); berr != nil {
		err = fmt.Errorf("%v\n%s", berr, out)
	}
}

// Remove deletes the binary Path built, if any. Call it from TestMain
// after m.Run.
func Remove() {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}
