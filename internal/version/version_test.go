package version_test

import (
	"reflect"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/version"
)

// TestUnstampedDefaults checks what a plain `go build` (and `go test`)
// reports: no release, no commit.
func TestUnstampedDefaults(t *testing.T) {
	if version.Version != "dev" || version.Commit != "unknown" || version.Date != "unknown" {
		t.Fatalf("unstamped build: Version %q, Commit %q, Date %q; want dev, unknown, unknown",
			version.Version, version.Commit, version.Date)
	}
	if got, want := version.String(), "dev (commit unknown)"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

// TestPackageIsImportPath keeps Package, which the release script's -X
// flags are built from, equal to this package's import path.
func TestPackageIsImportPath(t *testing.T) {
	type probe struct{}
	if got := reflect.TypeOf(probe{}).PkgPath(); got != version.Package+"_test" {
		t.Fatalf("test package path %q, want %q", got, version.Package+"_test")
	}
}
