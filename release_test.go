package main

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestReleaseScriptHostBinary runs scripts/release.sh, what `make release`
// and the Dockerfile run, for the host platform only (the four platforms
// take minutes on two cores), and checks the binary: stamped with the
// given version, commit and date, static, and listed in SHA256SUMS with
// its hash.
func TestReleaseScriptHostBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a release build compiles everything again (-trimpath, CGO_ENABLED=0)")
	}
	out := t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	cmd := exec.Command("bash", "scripts/release.sh", "-o", out, platform)
	cmd.Env = append(os.Environ(), "VERSION=v9.8.7-test", "COMMIT=0123456789ab", "DATE=2026-01-02T03:04:05Z")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, b)
	}
	name := "benthos-paimon-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(out, name)

	b, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", name, err, b)
	}
	if got, want := string(b), "Version: v9.8.7-test (commit 0123456789ab)\nDate: 2026-01-02T03:04:05Z\n"; got != want {
		t.Fatalf("--version printed %q, want %q", got, want)
	}

	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got, want := string(sums), hex.EncodeToString(sum[:])+"  "+name+"\n"; got != want {
		t.Fatalf("SHA256SUMS = %q, want %q", got, want)
	}

	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Fatal("the release binary has a dynamic loader (PT_INTERP): not static, CGO_ENABLED=0 not honoured")
			}
		}
	}
}

// dockerfile is the Dockerfile as instructions: one per logical line
// (continuations joined), comments dropped.
func dockerfile(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			cur += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		lines = append(lines, cur+l)
		cur = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestDockerfileBuildsWithReleaseScript parses the Dockerfile: its build
// stage must run scripts/release.sh for linux with the stamps, as `make
// release` does, and the image must be the static binary alone, on a
// static base with CA certificates, as a non-root user.
func TestDockerfileBuildsWithReleaseScript(t *testing.T) {
	lines := dockerfile(t)
	var stages [][]string
	for _, l := range lines {
		if strings.HasPrefix(l, "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], l)
		}
	}
	if len(stages) != 2 {
		t.Fatalf("%d stages, want a build stage and the image", len(stages))
	}
	build, image := stages[0], stages[1]
	if !regexp.MustCompile(`^FROM golang:\S+ AS build$`).MatchString(build[0]) {
		t.Errorf("build stage %q, want FROM golang:... AS build", build[0])
	}
	runRelease := regexp.MustCompile(`^RUN VERSION="\$VERSION" COMMIT="\$COMMIT" DATE="\$DATE" bash scripts/release\.sh -o (/\S+) linux/\$TARGETARCH$`)
	var outDir string
	for _, l := range build {
		if m := runRelease.FindStringSubmatch(l); m != nil {
			outDir = m[1]
		} else if strings.Contains(l, "go build") {
			t.Errorf("build stage runs go build itself (%q): it must go through scripts/release.sh", l)
		}
	}
	if outDir == "" {
		t.Fatalf("build stage does not run scripts/release.sh for linux/$TARGETARCH with the stamps:\n%s", strings.Join(build, "\n"))
	}
	for _, arg := range []string{"VERSION", "COMMIT", "DATE", "TARGETARCH"} {
		if !containsPrefix(build, "ARG "+arg) {
			t.Errorf("build stage has no ARG %s", arg)
		}
	}
	want := map[string]bool{
		"FROM gcr.io/distroless/static-debian12:nonroot":                                      false,
		"COPY --from=build " + outDir + "/benthos-paimon-linux-${TARGETARCH} /benthos-paimon": false,
		"USER nonroot:nonroot":           false,
		`ENTRYPOINT ["/benthos-paimon"]`: false,
	}
	lastUser := ""
	for _, l := range image {
		if _, ok := want[l]; ok {
			want[l] = true
		}
		if strings.HasPrefix(l, "USER ") {
			lastUser = l
		}
	}
	if lastUser != "USER nonroot:nonroot" {
		t.Errorf("the image's user is %q, want USER nonroot:nonroot", lastUser)
	}
	for l, seen := range want {
		if !seen {
			t.Errorf("image stage lacks %q:\n%s", l, strings.Join(image, "\n"))
		}
	}

	// make release runs the same script; make image passes the stamps.
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^release:\n\tVERSION=\$\(VERSION\) COMMIT=\$\(COMMIT\) DATE=\$\(DATE\) bash scripts/release\.sh -o dist`).Match(mk) {
		t.Error("Makefile: release does not run scripts/release.sh with the stamps")
	}
	if !strings.Contains(string(mk), "docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg DATE=$(DATE)") {
		t.Error("Makefile: image does not pass VERSION, COMMIT and DATE to docker build")
	}
}

// TestDockerignoreKeepsTheBuildInputs checks that .dockerignore keeps .git
// and build output out of the context but not what the build reads.
func TestDockerignoreKeepsTheBuildInputs(t *testing.T) {
	b, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	patterns := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns[l] = true
		}
	}
	for _, p := range []string{".git", "bin", "dist", "warehouse"} {
		if !patterns[p] {
			t.Errorf(".dockerignore does not exclude %s", p)
		}
	}
	for p := range patterns {
		for _, needed := range []string{"go.mod", "go.sum", "main.go", "scripts/release.sh", "scripts/stamp.sh", "lakecore/x.go", "plugin/x.go", "config/x.go", "internal/version/version.go", "examples/demo.yaml"} {
			if ok, _ := filepath.Match(strings.TrimPrefix(p, "/"), needed); ok || strings.HasPrefix(needed, strings.TrimPrefix(p, "/")+"/") {
				t.Errorf(".dockerignore pattern %q excludes %s, which the build needs", p, needed)
			}
		}
	}
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
