package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
)

// apache2SHA256 is the SHA-256 of the Apache License 2.0 text as GitHub's
// licence template and most Go modules ship it (prometheus/client_golang's
// LICENSE; apache.org's LICENSE-2.0.txt less its leading blank line).
const apache2SHA256 = "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"

// TestLicenseIsApache2 checks LICENSE is the unmodified Apache-2.0 text.
func TestLicenseIsApache2(t *testing.T) {
	b, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != apache2SHA256 {
		t.Fatalf("LICENSE is not the Apache License 2.0 text (sha256 %x)", sum)
	}
}

// TestNoticeCoversLinkedModules checks NOTICE against the modules linked
// into the binary (go version -m): each is named with its licence, and
// the NOTICE file of each module that ships one is reproduced, as
// Apache-2.0 section 4(d) asks. A new dependency fails here until NOTICE
// says what it is.
func TestNoticeCoversLinkedModules(t *testing.T) {
	notice, err := os.ReadFile("NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "version", "-m", binarytest.Path(t)).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	linked := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "dep" {
			linked[f[1]+"@"+f[2]] = true
		}
	}
	if len(linked) < 50 {
		t.Fatalf("go version -m lists %d modules; expected the binary's ~100:\n%s", len(linked), out)
	}
	dirs := moduleDirs(t)
	// Names of modules end at a comma, space, parenthesis or line end.
	named := func(path string) bool {
		return regexp.MustCompile(`(?m)(^|[\s,])` + regexp.QuoteMeta(path) + `($|[\s,(])`).Match(notice)
	}
	for mv := range linked {
		path := mv[:strings.LastIndex(mv, "@")]
		if !named(path) && !namedUnder(notice, path, named) {
			t.Errorf("NOTICE does not name %s (add it under its licence)", path)
		}
		dir := dirs[mv]
		if dir == "" {
			continue
		}
		for _, name := range []string{"NOTICE", "NOTICE.txt", "NOTICE.md"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if line = strings.TrimSpace(line); line != "" && !bytes.Contains(notice, []byte(line)) {
					t.Errorf("NOTICE lacks %q of %s/%s", line, path, name)
				}
			}
		}
	}
}

// namedUnder reports whether a parent module of path is named as covering
// its submodules ("github.com/aws/aws-sdk-go-v2 (and its submodules ...").
func namedUnder(notice []byte, path string, named func(string) bool) bool {
	for p := filepath.Dir(path); p != "." && p != "/"; p = filepath.Dir(p) {
		if named(p) && bytes.Contains(notice, []byte(p+" (and its submodules")) {
			return true
		}
	}
	return false
}

// moduleDirs maps path@version to the module's directory in the module
// cache, for the modules of the build list that are downloaded.
func moduleDirs(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", "all").Output()
	if err != nil {
		t.Fatalf("go list -m -json all: %v", err)
	}
	dirs := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m struct{ Path, Version, Dir string }
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		dirs[m.Path+"@"+m.Version] = m.Dir
	}
	return dirs
}
