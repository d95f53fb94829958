package scantest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// FixtureFIO opens the warehouse of a Java-written fixture table,
// shared/fixtures/paimon/<fixture>/warehouse beside the repository root
// (the directory holding go.mod), or skips the test when the fixtures are
// absent. Tests must not write through it.
func FixtureFIO(t testing.TB, fixture string) storage.FileIO {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test directory")
		}
		dir = parent
	}
	root := filepath.Join(dir, "..", "shared", "fixtures", "paimon", fixture, "warehouse")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("Paimon fixture not found at %s", root)
	}
	fio, err := storage.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	return fio
}

// Render writes a value with its Go type, exactly, for comparing rows:
// decimals with their scale, timestamps to the nanosecond, nested values
// recursively.
func Render(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case types.Decimal:
		return "dec:" + x.String()
	case types.Timestamp:
		return fmt.Sprintf("ts:%s(%d+%d)", x.Time().Format("2006-01-02T15:04:05.000000000"), x.Millis, x.NanoOfMilli)
	case types.Date:
		return fmt.Sprintf("date:%d", int32(x))
	case types.Time:
		return fmt.Sprintf("time:%d", int32(x))
	case []byte:
		return fmt.Sprintf("bytes:%q", x)
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Render(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case types.Map:
		parts := make([]string, len(x.Keys))
		for i := range x.Keys {
			parts[i] = Render(x.Keys[i]) + ": " + Render(x.Values[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return fmt.Sprintf("%T:%v", v, v)
	}
}
