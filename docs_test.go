package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/internal/docgen"
)

// TestComponentDocsUpToDate fails when docs/components is not what the
// specs of this binary's components render: a spec changed, or a
// component was added or removed, without `make docs`.
func TestComponentDocsUpToDate(t *testing.T) {
	files, err := componentDocs()
	if err != nil {
		t.Fatal(err)
	}
	stale, err := docgen.Stale(componentDocsDir, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("%s is stale; run `make docs` and commit the result:\n%s", componentDocsDir, strings.Join(stale, "\n"))
	}
}

// TestComponentDocsCoverThisBinary checks that discovery finds the
// components main.go registers, and no Benthos core one.
func TestComponentDocsCoverThisBinary(t *testing.T) {
	comps, err := docgen.Collect(service.GlobalEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range comps {
		got[c.Path()] = true
	}
	for _, want := range []string{"inputs/paimon.md", "outputs/paimon.md", "metrics/prometheus.md"} {
		if !got[want] {
			t.Errorf("no page %s among %v", want, got)
		}
	}
	for _, core := range []string{"inputs/stdin.md", "outputs/stdout.md", "metrics/json_api.md", "processors/mapping.md"} {
		if got[core] {
			t.Errorf("page %s of a Benthos core component", core)
		}
	}
}

// TestComponentExamplesLint lints every example on the pages with the
// binary's own linter, so the docs never show a config it rejects.
func TestComponentExamplesLint(t *testing.T) {
	comps, err := docgen.Collect(service.GlobalEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	linter := service.GlobalEnvironment().FullConfigSchema("", "").NewStreamConfigLinter()
	linter.SetSkipEnvVarCheck(true)
	n := 0
	for _, c := range comps {
		for _, e := range c.Spec.Examples {
			n++
			lints, err := linter.LintYAML([]byte(e.Config))
			if err != nil || len(lints) > 0 {
				t.Errorf("%s example %q: lints %v, error %v", c.Path(), e.Title, lints, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no examples to lint")
	}
}

// TestDocsCommand runs `benthos-paimon docs` as make docs does, into a
// fresh directory: it writes the pages the checked-in ones are, --check
// passes on them and fails, naming the page, once one is edited.
func TestDocsCommand(t *testing.T) {
	bin := binarytest.Path(t)
	dir := filepath.Join(t.TempDir(), "components")
	if out, err := exec.Command(bin, "docs", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("docs: %v\n%s", err, out)
	}
	for _, rel := range []string{"README.md", "inputs/paimon.md", "outputs/paimon.md", "metrics/prometheus.md"} {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(componentDocsDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs wrote a %s that differs from the checked-in one", rel)
		}
	}
	if out, err := exec.Command(bin, "docs", "--check", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("docs --check on fresh pages: %v\n%s", err, out)
	}
	page := filepath.Join(dir, "outputs", "paimon.md")
	if err := os.WriteFile(page, []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "docs", "--check", "--dir", dir).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("docs --check on an edited page: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "outputs/paimon.md: differs from the spec") || !strings.Contains(string(out), "run `make docs`") {
		t.Fatalf("docs --check output does not name the page and the fix:\n%s", out)
	}
}
