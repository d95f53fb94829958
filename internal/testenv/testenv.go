// Package testenv decides what a test does when the machine lacks something
// it needs from outside the module: the Java-written fixtures, an oracle
// (Java Paimon, Apache Avro's Python reader), an S3 server. It skips the
// test with the reason, or fails it when the environment requires that
// thing with REQUIRE_<THING>=1.
//
// A skip is not a pass: .ci/run sets every Require variable, so in CI
// nothing that can be missing is skipped. On a developer's machine a
// missing tool shows as SKIP with the command that installs it.
//
// It also holds LockedBuffer, for the output of the servers and binaries
// the tests start.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// The REQUIRE_* variables: set to 1, each turns the skip for its missing
// thing into a failure.
const (
	// RequireFixtures: shared/fixtures/paimon beside the clone
	// (internal/fixturetest).
	RequireFixtures = "REQUIRE_FIXTURES"
	// RequirePythonAvro: /usr/bin/python3 with Debian's python3-avro,
	// python3-zstandard and python3-snappy (the manifest package's Avro
	// oracle).
	RequirePythonAvro = "REQUIRE_PYTHON_AVRO"
	// RequireInterop: the oracles that tests/interop/setup.sh builds (Java
	// Paimon 1.x and 2.x, pypaimon), used by `make interop`.
	RequireInterop = "REQUIRE_INTEROP"
	// RequireS3: an S3 server (lakecore/storage/s3test).
	RequireS3 = "REQUIRE_S3"
	// RequirePostgres: Debian's postgresql-15 server binaries
	// (/usr/lib/postgresql/15/bin, internal/pgtest).
	RequirePostgres = "REQUIRE_POSTGRES"
)

// Required reports whether the environment requires the thing of the
// variable require (REQUIRE_...=1).
func Required(require string) bool { return os.Getenv(require) == "1" }

// Missing ends t because something it needs is missing: with a failure
// when Required(require), else with a skip. The message is reason followed
// by the variable that makes it a failure.
func Missing(t testing.TB, require, reason string) {
	t.Helper()
	if Required(require) {
		t.Fatalf("%s (required by %s=1)", reason, require)
		return
	}
	t.Skipf("%s (%s=1 makes this a failure instead of a skip)", reason, require)
}

// Missingf is Missing with a formatted reason.
func Missingf(t testing.TB, require, format string, args ...any) {
	t.Helper()
	Missing(t, require, fmt.Sprintf(format, args...))
}

// Recorder is a testing.TB for testing the helpers that call Missing: its
// Skipf and Fatalf record the first call instead of ending the test (a real
// one would have ended there). Everything else goes to the embedded TB.
type Recorder struct {
	testing.TB
	SkipMessage, FatalMessage string
}

// Helper does nothing: the recorded messages carry no location.
func (r *Recorder) Helper() {}

// Skipf records a skip.
func (r *Recorder) Skipf(format string, args ...any) {
	if r.SkipMessage+r.FatalMessage == "" {
		r.SkipMessage = fmt.Sprintf(format, args...)
	}
}

// Fatalf records a failure.
func (r *Recorder) Fatalf(format string, args ...any) {
	if r.SkipMessage+r.FatalMessage == "" {
		r.FatalMessage = fmt.Sprintf(format, args...)
	}
}
