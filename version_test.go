package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
)

// TestVersionFlagUnstamped runs `benthos-paimon --version` on a plain
// `go build`: it says dev, not a release or Benthos' version.
// TestReleaseScriptHostBinary checks a stamped build.
func TestVersionFlagUnstamped(t *testing.T) {
	out, err := exec.Command(binarytest.Path(t), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	if got, want := string(out), "Version: dev (commit unknown)\nDate: unknown\n"; got != want {
		t.Fatalf("--version printed %q, want %q", got, want)
	}
}

// TestMakeBuildStampsTheCommit runs `make build`, what `make run` builds:
// its --version names the commit it was built from, as a release does.
func TestMakeBuildStampsTheCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary again with make")
	}
	head, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (git rev-parse: %v): make build has no commit to stamp", err)
	}
	bin := filepath.Join(t.TempDir(), "benthos-paimon")
	if out, err := exec.Command("make", "build", "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	if want := "(commit " + strings.TrimSpace(string(head)) + ")"; !strings.Contains(string(out), want) {
		t.Fatalf("--version printed %q, want it to contain %q", out, want)
	}
	if strings.Contains(string(out), "Date: unknown") {
		t.Fatalf("--version printed %q: no commit date", out)
	}
}

// TestHelpNamesThisBinary checks that the CLI help names benthos-paimon
// and points at this project's docs rather than Benthos' site.
func TestHelpNamesThisBinary(t *testing.T) {
	out, err := exec.Command(binarytest.Path(t), "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	help := string(out)
	for _, want := range []string{"benthos-paimon - ", documentationURL, "Either run benthos-paimon as a stream processor", "docs", "paimon", "demo"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "benthos.dev") {
		t.Errorf("help points at benthos.dev:\n%s", help)
	}
}
