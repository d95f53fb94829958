// Package version holds the build stamps of benthos-paimon: the release
// version, the commit it was built from and the commit's date. Release
// builds set them with the linker (scripts/release.sh):
//
//	go build -ldflags "-X github.com/benthos-paimon/benthos-paimon/internal/version.Version=v0.2.0 \
//	  -X github.com/benthos-paimon/benthos-paimon/internal/version.Commit=1a2b3c4 \
//	  -X github.com/benthos-paimon/benthos-paimon/internal/version.Date=2026-12-01T00:00:00Z" .
//
// A plain `go build` leaves Version "dev", Commit "unknown" and Date
// "unknown", so a binary never claims a release it is not.
package version

// The stamps. They are variables, not constants, because `-ldflags -X`
// can only set package-level string variables; nothing else writes them.
var (
	// Version is the release version (a git tag such as v0.2.0), or "dev".
	Version = "dev"
	// Commit is the git commit the binary was built from, or "unknown".
	Commit = "unknown"
	// Date is the commit's date (RFC 3339), or "unknown".
	Date = "unknown"
)

// Package is the import path the linker flags name (-X Package.Version=...).
const Package = "github.com/benthos-paimon/benthos-paimon/internal/version"

// String is the version with its commit, as `benthos-paimon --version`
// prints it: "v0.2.0 (commit 1a2b3c4)", or "dev (commit unknown)".
func String() string {
	return Version + " (commit " + Commit + ")"
}
