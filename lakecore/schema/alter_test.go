package schema_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestAlterRules: the checks of SchemaManager.checkAlterTableOption and
// checkResetTableOption apply once the table has snapshots; the new
// schema is validated either way. (TestInteropAlterMatchesJava compares
// the written schema files with Java's.)
func TestAlterRules(t *testing.T) {
	ctx := context.Background()
	set := func(kv ...string) schema.Alteration {
		var a schema.Alteration
		for i := 0; i < len(kv); i += 2 {
			a.Set = append(a.Set, [2]string{kv[i], kv[i+1]})
		}
		return a
	}
	for _, tc := range []struct {
		name      string
		opts      map[string]string
		a         schema.Alteration
		snapshots bool
		want      string // "" = accepted
	}{
		{"set", nil, set("snapshot.num-retained.max", "20"), true, ""},
		{"immutable with snapshots", nil, set("merge-engine", "first-row"), true, "change 'merge-engine' is not supported yet"},
		{"immutable without snapshots", nil, set("bucket-key", "k"), false, "bucket-key"}, // then bucket = -1 refuses a bucket key
		{"reset immutable", map[string]string{"data-file.path-directory": "d"}, schema.Alteration{Reset: []string{"data-file.path-directory"}}, true, "change 'data-file.path-directory' is not supported yet"},
		{"bucket from -1", nil, set("bucket", "4"), true, "cannot change bucket when it is -1"},
		{"bucket to -1", map[string]string{"bucket": "2", "bucket-key": "k"}, set("bucket", "-1"), true, "cannot change bucket to -1"},
		{"bucket 2 to 4", map[string]string{"bucket": "2", "bucket-key": "k"}, set("bucket", "4"), true, ""},
		{"reset bucket", map[string]string{"bucket": "2", "bucket-key": "k"}, schema.Alteration{Reset: []string{"bucket"}}, true, "cannot reset bucket"},
		{"deletion vectors", nil, set("deletion-vectors.enabled", "true"), true, "cannot change deletion vectors mode from false to true"},
		{"deletion vectors modifiable", map[string]string{"deletion-vectors.modifiable": "true"}, set("deletion-vectors.enabled", "true"), true, ""},
		{"ignore-delete back", map[string]string{"ignore-delete": "true"}, set("ignore-delete", "false"), true, "cannot change ignore-delete from true to false"},
		{"bad value", nil, set("target-file-size", "big"), false, "target-file-size"},
		{"set and reset", nil, schema.Alteration{Set: [][2]string{{"a", "1"}}, Reset: []string{"a"}}, false, "both set and reset"},
		{"existing column", nil, schema.Alteration{AddColumns: []types.DataField{field("k", "INT")}}, false, `column "k" already exists`},
		{"not null column", nil, schema.Alteration{AddColumns: []types.DataField{field("n", "INT NOT NULL")}}, false, "cannot be NOT NULL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newManager(t)
			if _, err := m.Create(ctx, schema.NewTableSchema([]types.DataField{field("k", "INT"), field("v", "STRING")}, nil, tc.opts, nil)); err != nil {
				t.Fatal(err)
			}
			s, err := m.Alter(ctx, tc.a, tc.snapshots)
			if tc.want == "" {
				if err != nil || s.ID != 1 {
					t.Fatalf("Alter = schema %v, %v; want schema 1", s, err)
				}
				for _, kv := range tc.a.Set {
					if s.Options[kv[0]] != kv[1] {
						t.Fatalf("option %s = %q, want %q", kv[0], s.Options[kv[0]], kv[1])
					}
				}
				return
			}
			if !errors.Is(err, schema.ErrInvalidSchema) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Alter = %v, want ErrInvalidSchema with %q", err, tc.want)
			}
			if ids, _ := m.ListIDs(ctx); fmt.Sprint(ids) != "[0]" {
				t.Fatalf("a refused alter wrote schemas %v", ids)
			}
		})
	}

	// Nothing to change writes nothing.
	m, _ := newManager(t)
	if _, err := m.Create(ctx, schema.NewTableSchema([]types.DataField{field("k", "INT")}, nil, map[string]string{"a": "1"}, nil)); err != nil {
		t.Fatal(err)
	}
	s, err := m.Alter(ctx, schema.Alteration{Set: [][2]string{{"a", "1"}}, Reset: []string{"b"}}, true)
	if err != nil || s.ID != 0 {
		t.Fatalf("no-op Alter = schema %v, %v; want schema 0", s, err)
	}
	s, err = m.Alter(ctx, schema.Alteration{Reset: []string{"a"}, AddColumns: []types.DataField{field("x", "ROW<y INT>")}}, true)
	if _, has := s.Options["a"]; err != nil || has || s.ID != 1 || fmt.Sprint(s.FieldNames()) != "[k x]" || s.HighestFieldID != 2 {
		t.Fatalf("Alter = %+v, %v", s, err)
	}
}
