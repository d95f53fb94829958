package scantest

import (
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// FixtureFIO opens the warehouse of a Java-written fixture table,
// shared/fixtures/paimon/<fixture>/warehouse beside the repository root
// (the directory holding go.mod), or skips the test when the fixtures are
// absent. Tests must not write through it.
func FixtureFIO(t testing.TB, fixture string) storage.FileIO {
	t.Helper()
	fio, err := storage.NewLocal(fixturetest.Warehouse(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	return fio
}
