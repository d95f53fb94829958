// Package oracle runs the interop oracles of tests/interop (Java Paimon
// through tests/interop/bin/paimon-java, pypaimon through
// tests/interop/python/paimon_py.py) in their batch mode: one long-lived
// process answers every command of a test run.
//
// The batch protocol: one JSON array of arguments per stdin line, answered
// by the command's output lines and then {"__done__":true,"ok":true} or
// {"__done__":true,"ok":false,"error":"..."}.
//
// tests/interop uses Process for all its oracles; the lakecore packages'
// own interop tests (build tag interop, run by `make interop`) start the
// Java oracle with Java, which skips the test when it is not built, or
// fails it under REQUIRE_INTEROP=1.
package oracle

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
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
)

// Paimon lines of the Java oracle.
const (
	Paimon1 = "paimon1" // Java Paimon 1.4.2
	Paimon2 = "paimon2" // Java Paimon 2.0.0
)

// callTimeout bounds one command: a hung oracle is killed.
const callTimeout = 5 * time.Minute

// Process is one oracle process in batch mode. It starts on the first
// call and again on the next call after it died. Calls are serialized, so
// it is safe for concurrent use.
type Process struct {
	name string
	cmd  []string

	mu     sync.Mutex
	proc   *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *tail
}

// New returns the oracle run by the command cmd (its batch mode); name is
// how errors call it. Nothing starts until the first Call.
func New(name string, cmd ...string) *Process {
	return &Process{name: name, cmd: cmd}
}

func (o *Process) start() error {
	cmd := exec.Command(o.cmd[0], o.cmd[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	o.stderr = &tail{}
	cmd.Stderr = o.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s oracle: %w", o.name, err)
	}
	o.proc, o.stdin, o.stdout = cmd, in, bufio.NewReaderSize(out, 1<<20)
	return nil
}

// Call runs one command (its arguments without the program, e.g. "read",
// "--warehouse", dir, ...) and returns its output lines. A failed command
// returns the oracle's error message (e.g. its Java exception); a process
// that died returns the tail of its stderr and is restarted next time.
func (o *Process) Call(args ...string) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		if err := o.start(); err != nil {
			return nil, err
		}
	}
	req, _ := json.Marshal(args)
	if _, err := o.stdin.Write(append(req, '\n')); err != nil {
		o.kill()
		return nil, fmt.Errorf("%s %s: write request: %w", o.name, args[0], err)
	}
	// A hung oracle is killed, which ends the read below with EOF.
	proc := o.proc
	timer := time.AfterFunc(callTimeout, func() { _ = proc.Process.Kill() })
	defer timer.Stop()
	var lines []string
	for {
		line, err := o.stdout.ReadString('\n')
		if err != nil {
			stderr := o.stderr.String()
			o.kill()
			return lines, fmt.Errorf("%s %s: oracle process died (%v); stderr tail:\n%s", o.name, strings.Join(args, " "), err, stderr)
		}
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, `{"__done__":`) {
			var done struct {
				OK    bool   `json:"ok"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &done); err != nil {
				return lines, fmt.Errorf("%s: bad done line %q", o.name, line)
			}
			if !done.OK {
				return lines, fmt.Errorf("%s %s: %s", o.name, strings.Join(args, " "), done.Error)
			}
			return lines, nil
		}
		lines = append(lines, line)
	}
}

func (o *Process) kill() {
	if o.proc != nil {
		_ = o.proc.Process.Kill()
		_ = o.proc.Wait()
	}
	o.proc = nil
}

// Close ends the process: stdin closed, then killed if it has not exited
// within 30 s.
func (o *Process) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		return
	}
	_ = o.stdin.Close()
	done := make(chan struct{})
	go func() { _ = o.proc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = o.proc.Process.Kill()
		<-done
	}
	o.proc = nil
}

// Java returns the Java oracle of a Paimon line (Paimon1 or Paimon2) for
// t, closed when t ends. When java is not on PATH or the oracle is not
// built (tests/interop/setup.sh), t is skipped, or failed under
// REQUIRE_INTEROP=1.
func Java(t testing.TB, line string) *Process {
	t.Helper()
	root := fixturetest.RepoDir(t)
	if _, err := exec.LookPath("java"); err != nil {
		testenv.Missing(t, testenv.RequireInterop, "java is not on PATH (run tests/interop/setup.sh for the list of what is missing)")
	}
	jar := filepath.Join(root, "tests", "interop", "java", "target", line, "paimon-interop.jar")
	if _, err := os.Stat(jar); err != nil {
		testenv.Missingf(t, testenv.RequireInterop, "Java oracle %s not built (run tests/interop/setup.sh): %v", line, err)
	}
	o := New("java "+line, filepath.Join(root, "tests", "interop", "bin", "paimon-java"), line, "batch")
	t.Cleanup(o.Close)
	return o
}

// Run is Call for a test: it returns the output, one line each, and fails
// t when the command fails.
func (o *Process) Run(t testing.TB, args ...string) string {
	t.Helper()
	lines, err := o.Call(args...)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// tail keeps the last 8 KiB written to it (the oracle's stderr).
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
