// Package javaoracle runs the Java Paimon oracle of tests/interop
// (tests/interop/bin/paimon-java, built by tests/interop/setup.sh) for the
// lakecore packages' own interop tests: one JVM per Paimon line in batch
// mode, serving every command of the test.
//
// Those tests carry the build tag interop, so plain `go test ./...` never
// needs Java and `make interop` runs them after setup.sh. An oracle that is
// not built skips the test, or fails it under REQUIRE_INTEROP=1 (as
// `make interop` runs in CI).
package javaoracle

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
)

// Paimon lines of the oracle.
const (
	Paimon1 = "paimon1" // Java Paimon 1.4.2
	Paimon2 = "paimon2" // Java Paimon 2.0.0
)

// Oracle is one running oracle process. Run is safe for concurrent use
// (calls are serialized).
type Oracle struct {
	line   string
	mu     sync.Mutex
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tail
}

// Start starts the oracle of a Paimon line (Paimon1 or Paimon2) for t and
// stops it when t ends. When the oracle is not built, or java is not on
// PATH, t is skipped, or failed under REQUIRE_INTEROP=1.
func Start(t testing.TB, line string) *Oracle {
	t.Helper()
	root := fixturetest.RepoDir(t)
	jar := filepath.Join(root, "tests", "interop", "java", "target", line, "paimon-interop.jar")
	if _, err := exec.LookPath("java"); err != nil {
		testenv.Missing(t, testenv.RequireInterop, "java is not on PATH (run tests/interop/setup.sh for the list of what is missing)")
	}
	if _, err := os.Stat(jar); err != nil {
		testenv.Missingf(t, testenv.RequireInterop, "Java oracle %s not built (run tests/interop/setup.sh): %v", line, err)
	}
	o := &Oracle{line: line, stderr: &tail{}}
	cmd := exec.Command(filepath.Join(root, "tests", "interop", "bin", "paimon-java"), line, "batch")
	cmd.Stderr = o.stderr
	var err error
	if o.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the Java oracle %s: %v", line, err)
	}
	o.out = bufio.NewReaderSize(out, 1<<20)
	t.Cleanup(func() {
		_ = o.in.Close()
		_ = cmd.Wait()
	})
	return o
}

// Run runs one command of the oracle (its arguments after the Paimon line,
// e.g. "read", "--warehouse", dir, ...) and returns its output; a failed
// command fails t.
func (o *Oracle) Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := o.Try(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Try is Run returning the oracle's error (its message, e.g. a Java
// exception) instead of failing the test.
func (o *Oracle) Try(args ...string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	req, _ := json.Marshal(args)
	if _, err := o.in.Write(append(req, '\n')); err != nil {
		return "", fmt.Errorf("paimon-java %s %v: %w; stderr:\n%s", o.line, args, err, o.stderr)
	}
	var b strings.Builder
	for {
		l, err := o.out.ReadString('\n')
		if err != nil {
			return b.String(), fmt.Errorf("paimon-java %s %v: the oracle died (%v); stderr:\n%s", o.line, args, err, o.stderr)
		}
		if strings.HasPrefix(l, `{"__done__":`) {
			var done struct {
				OK    bool   `json:"ok"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal([]byte(l), &done); err != nil {
				return b.String(), fmt.Errorf("paimon-java %s: bad done line %q", o.line, l)
			}
			if !done.OK {
				return b.String(), fmt.Errorf("paimon-java %s %v: %s", o.line, args, done.Error)
			}
			return b.String(), nil
		}
		b.WriteString(l)
	}
}

// tail keeps the last 8 KiB of the oracle's stderr for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tail) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 8192 {
		b.buf = b.buf[len(b.buf)-8192:]
	}
	return len(p), nil
}

func (b *tail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
