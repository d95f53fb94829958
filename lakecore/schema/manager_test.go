package schema_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

const table = "db.db/t"

func newManager(t *testing.T) (*schema.Manager, *storage.Local) {
	t.Helper()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return schema.NewManager(fio, table), fio
}

func ptr[T any](v T) *T { return &v }

func field(name string, typ string) types.DataField {
	return types.DataField{Name: name, Type: types.MustParse(typ)}
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCreateAndAddColumnsMatchJava replays what testdata/Oracle.java did
// with Paimon 1.4.2 (SchemaManager.createTable, then commitChanges with an
// AddColumn of a nested ROW) and requires the same bytes: field ids,
// HashMap option order, escapes and layout.
func TestCreateAndAddColumnsMatchJava(t *testing.T) {
	ctx := context.Background()
	want0 := testdata(t, "java142-create-schema-0")
	want1 := testdata(t, "java142-addcolumn-schema-1")
	j0, err := schema.Parse(want0)
	if err != nil {
		t.Fatal(err)
	}
	j1, err := schema.Parse(want1)
	if err != nil {
		t.Fatal(err)
	}

	m, fio := newManager(t)
	row := func(fs ...types.DataField) types.DataType { return types.RowType(fs...) }
	fields := []types.DataField{
		{Name: "id", Type: types.BigIntType().NotNull()},
		{Name: "name", Type: types.StringType(), Description: ptr("the \"name\" <b>\n\t\x01 é")},
		{Name: "pt", Type: types.IntType()},
		{Name: "nest", Type: row(
			types.DataField{Name: "a", Type: row(
				types.DataField{Name: "x", Type: types.IntType()},
				types.DataField{Name: "y", Type: types.ArrayType(row(types.DataField{Name: "z", Type: types.StringType()}))},
			)},
			types.DataField{Name: "b", Type: types.MapType(types.StringType(), types.DecimalType(10, 2))},
		)},
	}
	opts := map[string]string{
		"bucket": "2", "bucket-key": "id", "file.format": "parquet", "metadata.stats-mode": "full",
		"fields.name.stats-mode": "none", "snapshot.time-retained": "2 h", "target-file-size": "128 mb",
	}
	s := schema.NewTableSchema(fields, []string{"pt"}, opts, ptr("tbl/comment \x7f"))
	s.TimeMillis = j0.TimeMillis
	created, err := m.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	got0, err := fio.ReadFile(ctx, table+"/schema/schema-0")
	if err != nil {
		t.Fatal(err)
	}
	if string(got0) != string(want0) {
		t.Fatalf("schema-0 differs from Java's\n--- got\n%s\n--- want\n%s", got0, want0)
	}
	if created.HighestFieldID != 8 {
		t.Errorf("HighestFieldID = %d, want 8", created.HighestFieldID)
	}

	schema.SetClock(m, func() time.Time { return time.UnixMilli(j1.TimeMillis) })
	extra := types.DataField{Name: "extra", Description: ptr("desc"), Type: row(
		types.DataField{Name: "p", Type: row(types.DataField{Name: "q", Type: types.IntType()})},
		types.DataField{Name: "r", Type: types.IntType()},
	)}
	next, err := m.AddColumns(ctx, []types.DataField{extra})
	if err != nil {
		t.Fatal(err)
	}
	got1, err := fio.ReadFile(ctx, table+"/schema/schema-1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got1) != string(want1) {
		t.Fatalf("schema-1 differs from Java's\n--- got\n%s\n--- want\n%s", got1, want1)
	}
	if next.ID != 1 || next.HighestFieldID != 12 {
		t.Errorf("AddColumns gave schema %d with highest id %d, want 1 and 12", next.ID, next.HighestFieldID)
	}
}

func TestManagerLifecycle(t *testing.T) {
	ctx := context.Background()
	m, fio := newManager(t)
	if _, err := m.Latest(ctx); !errors.Is(err, schema.ErrTableNotFound) {
		t.Fatalf("Latest on an empty table = %v, want ErrTableNotFound", err)
	}
	s := schema.NewTableSchema([]types.DataField{field("a", "INT"), field("b", "STRING")}, nil, nil, nil)
	created, err := m.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if created.Options["bucket"] != "-1" || created.Options["file.format"] != "parquet" || created.TimeMillis == 0 {
		t.Errorf("Create did not add explicit options / time: %+v", created)
	}
	if s.Options["bucket"] != "" {
		t.Error("Create modified its argument")
	}
	if _, err := m.Create(ctx, s); !errors.Is(err, schema.ErrTableExists) {
		t.Errorf("second Create = %v, want ErrTableExists", err)
	}
	got, err := m.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 0 || len(got.Fields) != 2 || got.Fields[1].ID != 1 || got.HighestFieldID != 1 {
		t.Errorf("Latest = %+v", got)
	}

	// A stray temp file and a non-numeric name are not schemas.
	for _, name := range []string{".schema-1.0b0e.tmp", "schema-x", "schema-", "schema-1.bak"} {
		if err := fio.WriteFile(ctx, table+"/schema/"+name, []byte("garbage")); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := m.ListIDs(ctx)
	if err != nil || fmt.Sprint(ids) != "[0]" {
		t.Errorf("ListIDs = %v, %v; want [0]", ids, err)
	}

	next := got.Clone()
	next.ID = 1
	next.Options["snapshot.num-retained.min"] = "5"
	if err := m.Commit(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(ctx, next); !errors.Is(err, schema.ErrSchemaExists) || !errors.Is(err, storage.ErrExist) {
		t.Errorf("Commit of a taken id = %v, want ErrSchemaExists wrapping storage.ErrExist", err)
	}
	bad := next.Clone()
	bad.ID = 2
	bad.Options["bucket"] = "0"
	if err := m.Commit(ctx, bad); !errors.Is(err, schema.ErrInvalidOption) {
		t.Errorf("Commit of an invalid schema = %v, want ErrInvalidOption", err)
	}
	all, err := m.List(ctx)
	if err != nil || len(all) != 2 || all[1].Options["snapshot.num-retained.min"] != "5" {
		t.Fatalf("List = %v, %v", all, err)
	}
	if _, err := m.Get(ctx, 7); !errors.Is(err, schema.ErrSchemaNotFound) {
		t.Errorf("Get(7) = %v, want ErrSchemaNotFound", err)
	}

	// A file whose id disagrees with its name, and one that is not JSON.
	if err := fio.WriteFile(ctx, table+"/schema/schema-5", mustMarshal(t, all[0])); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, 5); !errors.Is(err, schema.ErrInvalidSchema) {
		t.Errorf("Get of a mislabelled schema = %v, want ErrInvalidSchema", err)
	}
	if err := fio.WriteFile(ctx, table+"/schema/schema-6", []byte("{")); err != nil {
		t.Fatal(err)
	}
	_, err = m.Latest(ctx)
	if !errors.Is(err, schema.ErrInvalidSchema) {
		t.Errorf("Latest over a broken schema-6 = %v, want ErrInvalidSchema", err)
	}
	if want := table + "/schema/schema-6"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v does not name %s", err, want)
	}
}

func mustMarshal(t *testing.T, s *schema.TableSchema) []byte {
	t.Helper()
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAddColumns(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	base := schema.NewTableSchema([]types.DataField{field("k", "INT"), field("pt", "STRING")}, []string{"pt"},
		map[string]string{"add-column-before-partition": "true"}, nil)
	if _, err := m.Create(ctx, base); err != nil {
		t.Fatal(err)
	}
	s1, err := m.AddColumns(ctx, []types.DataField{{ID: 99, Name: "v", Type: types.DoubleType()}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s1.FieldNames()); got != "[k v pt]" || s1.Fields[1].ID != 2 || s1.HighestFieldID != 2 {
		t.Errorf("after AddColumns: fields %s, v id %d, highest %d", got, s1.Fields[1].ID, s1.HighestFieldID)
	}
	// Adding what is there is a no-op that writes nothing.
	again, err := m.AddColumns(ctx, []types.DataField{field("v", "DOUBLE")})
	if err != nil || again.ID != 1 {
		t.Errorf("repeated AddColumns = schema %v, %v; want schema 1", again, err)
	}
	if _, err := m.AddColumns(ctx, []types.DataField{field("v", "BIGINT")}); !errors.Is(err, schema.ErrInvalidSchema) {
		t.Errorf("AddColumns with a conflicting type = %v, want ErrInvalidSchema", err)
	}
	if _, err := m.AddColumns(ctx, []types.DataField{field("w", "INT NOT NULL")}); !errors.Is(err, schema.ErrInvalidSchema) {
		t.Errorf("AddColumns NOT NULL = %v, want ErrInvalidSchema", err)
	}
	if _, err := m.AddColumns(ctx, []types.DataField{field("_ROW_ID", "BIGINT")}); !errors.Is(err, schema.ErrInvalidSchema) {
		t.Errorf("AddColumns of a system name = %v, want ErrInvalidSchema", err)
	}
	if _, err := schema.NewManager(m2fio(t), "none").AddColumns(ctx, []types.DataField{field("x", "INT")}); !errors.Is(err, schema.ErrTableNotFound) {
		t.Errorf("AddColumns on a missing table = %v, want ErrTableNotFound", err)
	}
}

func m2fio(t *testing.T) storage.FileIO {
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return fio
}

// TestAddColumnsRace lets two managers on one table add the same column at
// once: both must return the same schema-1 and no schema-2 may appear.
func TestAddColumnsRace(t *testing.T) {
	ctx := context.Background()
	for round := 0; round < 20; round++ {
		fio := m2fio(t)
		first := schema.NewManager(fio, table)
		if _, err := first.Create(ctx, schema.NewTableSchema([]types.DataField{field("a", "INT")}, nil, nil, nil)); err != nil {
			t.Fatal(err)
		}
		managers := []*schema.Manager{first, schema.NewManager(fio, table)}
		results := make([]*schema.TableSchema, len(managers))
		errs := make([]error, len(managers))
		var wg sync.WaitGroup
		for i, m := range managers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = m.AddColumns(ctx, []types.DataField{field("b", "ARRAY<ROW<x INT>>")})
			}()
		}
		wg.Wait()
		for i := range managers {
			if errs[i] != nil {
				t.Fatalf("round %d: manager %d: %v", round, i, errs[i])
			}
			if results[i].ID != 1 {
				t.Fatalf("round %d: manager %d returned schema %d, want 1", round, i, results[i].ID)
			}
		}
		a, b := mustMarshal(t, results[0]), mustMarshal(t, results[1])
		if string(a) != string(b) {
			t.Fatalf("round %d: managers disagree:\n%s\n%s", round, a, b)
		}
		ids, err := first.ListIDs(ctx)
		if err != nil || fmt.Sprint(ids) != "[0 1]" {
			t.Fatalf("round %d: schema ids %v, %v; want [0 1]", round, ids, err)
		}
	}
}
