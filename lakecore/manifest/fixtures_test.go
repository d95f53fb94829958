package manifest_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
)

// fixtureTable is one Java-written table among the fixtures.
type fixtureTable struct {
	name string // fixture directory
	dir  string // table directory
}

// tables lists the fixture tables with Avro manifests (not the ORC one).
func tables(t testing.TB) []fixtureTable {
	root := fixturetest.Dir(t)
	dirs, err := filepath.Glob(filepath.Join(root, "*", "warehouse", "default.db", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fixtureTable
	for _, d := range dirs {
		name := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(d))))
		if strings.Contains(name, "orc-manifest") {
			continue
		}
		out = append(out, fixtureTable{name: name, dir: d})
	}
	if len(out) < 7 {
		t.Fatalf("expected 7 Avro fixture tables, found %d", len(out))
	}
	return out
}

// manifestFiles returns every file under a manifest/ directory of the
// fixtures, Avro or not.
func manifestFiles(t testing.TB) []string {
	root := fixturetest.Dir(t)
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Base(filepath.Dir(p)) == "manifest" {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func i64(v int64) *int64 { return &v }
func i32(v int32) *int32 { return &v }
func str(v string) *string {
	return &v
}

// snapshotJSON is the part of snapshot-N the replay needs.
type snapshotJSON struct {
	ID                    int64   `json:"id"`
	BaseManifestList      string  `json:"baseManifestList"`
	BaseManifestListSize  *int64  `json:"baseManifestListSize"`
	DeltaManifestList     string  `json:"deltaManifestList"`
	DeltaManifestListSize *int64  `json:"deltaManifestListSize"`
	IndexManifest         *string `json:"indexManifest"`
	TotalRecordCount      int64   `json:"totalRecordCount"`
}

func readSnapshot(t testing.TB, table string, id int) snapshotJSON {
	t.Helper()
	var s snapshotJSON
	p := filepath.Join(table, "snapshot", "snapshot-"+strconv.Itoa(id))
	if err := json.Unmarshal(readFile(t, p), &s); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return s
}
