package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

func testSpec() *service.ConfigSpec {
	return service.NewConfigSpec().Fields(TableFields()...)
}

func TestParseTableDefaults(t *testing.T) {
	conf, err := testSpec().ParseYAML("warehouse: /tmp/lake\ntable: events\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseTable(conf)
	if err != nil {
		t.Fatal(err)
	}
	want := Table{Warehouse: "/tmp/lake", Database: "default", Table: "events"}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got.Path() != "default.db/events" || got.IsS3() || got.String() != "default.events in /tmp/lake" {
		t.Errorf("Path %q IsS3 %v String %q", got.Path(), got.IsS3(), got.String())
	}
}

func TestParseTableS3(t *testing.T) {
	conf, err := testSpec().ParseYAML(`
warehouse: s3://bucket/wh
database: sales
table: orders
s3:
  endpoint: http://127.0.0.1:7070
  region: eu-west-1
  force_path_style: true
  credentials:
    id: AKID
    secret: SECRET
    token: TOKEN
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseTable(conf)
	if err != nil {
		t.Fatal(err)
	}
	want := Table{Warehouse: "s3://bucket/wh", Database: "sales", Table: "orders", S3: storage.S3Config{
		Endpoint: "http://127.0.0.1:7070", Region: "eu-west-1", ForcePathStyle: true,
		AccessKeyID: "AKID", SecretAccessKey: "SECRET", SessionToken: "TOKEN",
	}}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if !got.IsS3() || got.Path() != "sales.db/orders" {
		t.Errorf("IsS3 %v Path %q", got.IsS3(), got.Path())
	}
}

func TestValidate(t *testing.T) {
	base := Table{Warehouse: "/lake", Database: "default", Table: "t"}
	cases := []struct {
		name   string
		mutate func(*Table)
		err    string
	}{
		{"ok", func(*Table) {}, ""},
		{"file uri", func(t *Table) { t.Warehouse = "file:///lake" }, ""},
		{"s3a", func(t *Table) { t.Warehouse = "s3a://b/p" }, ""},
		{"empty warehouse", func(t *Table) { t.Warehouse = " " }, "warehouse must not be empty"},
		{"hdfs", func(t *Table) { t.Warehouse = "hdfs://nn/lake" }, "unsupported storage scheme"},
		{"s3 without bucket", func(t *Table) { t.Warehouse = "s3:///x" }, "bucket"},
		{"empty table", func(t *Table) { t.Table = "" }, "table must not be empty"},
		{"empty database", func(t *Table) { t.Database = "" }, "database must not be empty"},
		{"slash", func(t *Table) { t.Table = "a/b" }, `table "a/b" must not contain '/'`},
		{"dotdot", func(t *Table) { t.Database = ".." }, "not a valid name"},
		{"spaces", func(t *Table) { t.Table = " t" }, "leading or trailing spaces"},
		{"control", func(t *Table) { t.Table = "a\nb" }, "control character"},
		{"system table", func(t *Table) { t.Table = "t$snapshots" }, "system tables"},
		{"id without secret", func(t *Table) { t.S3.AccessKeyID = "x" }, "s3.credentials.secret is required"},
		{"secret without id", func(t *Table) { t.S3.SecretAccessKey = "x" }, "need s3.credentials.id"},
		{"bad endpoint", func(t *Table) { t.S3.Endpoint = "localhost:9000" }, "not an http:// or https:// URL"},
	}
	for _, tc := range cases {
		tb := base
		tc.mutate(&tb)
		err := tb.Validate()
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want %q wrapping ErrInvalid", tc.name, err, tc.err)
		}
	}
}

// lintOutput lints an output config of a stub component that has only the
// shared fields, registered in an isolated environment.
func lintOutput(t *testing.T, yaml string) []string {
	t.Helper()
	env := service.NewEnvironment()
	err := env.RegisterBatchOutput("paimon_config_test", testSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			return nil, service.BatchPolicy{}, 1, errors.New("stub")
		})
	if err != nil {
		t.Fatal(err)
	}
	lints, err := env.NewComponentConfigLinter().LintOutputYAML([]byte("paimon_config_test:\n" + yaml))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lints {
		out = append(out, l.What)
	}
	return out
}

func TestLintRules(t *testing.T) {
	cases := []struct {
		yaml string
		want string
	}{
		{"  warehouse: /lake\n  table: t\n", ""},
		{"  warehouse: s3://b/p\n  table: t\n  s3:\n    credentials:\n      id: a\n      secret: b\n", ""},
		{"  warehouse: ''\n  table: t\n", "warehouse must not be empty"},
		{"  warehouse: hdfs://nn/lake\n  table: t\n", "warehouse scheme is not supported"},
		{"  warehouse: /lake\n  table: ' '\n", "table must not be empty"},
		{"  warehouse: /lake\n", "field table is required"},
		{"  warehouse: s3://b/p\n  table: t\n  s3:\n    credentials:\n      id: a\n", "s3.credentials.secret is required"},
		{"  warehouse: s3://b/p\n  table: t\n  s3:\n    credentials:\n      token: a\n", "need s3.credentials.id"},
		{"  warehouse: /lake\n  table: t\n  s3:\n    endpoit: x\n", "field endpoit not recognised"},
	}
	for _, tc := range cases {
		lints := lintOutput(t, tc.yaml)
		if tc.want == "" {
			if len(lints) != 0 {
				t.Errorf("%q: unexpected lints %v", tc.yaml, lints)
			}
			continue
		}
		if !strings.Contains(strings.Join(lints, "\n"), tc.want) {
			t.Errorf("%q: lints %v, want one containing %q", tc.yaml, lints, tc.want)
		}
	}
}

func TestSecretFieldsAreMarked(t *testing.T) {
	env := service.NewEnvironment()
	if err := env.RegisterBatchOutput("paimon_config_test", testSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			return nil, service.BatchPolicy{}, 1, errors.New("stub")
		}); err != nil {
		t.Fatal(err)
	}
	var secrets []string
	env.WalkOutputs(func(name string, v *service.ConfigView) {
		if name != "paimon_config_test" {
			return
		}
		data, err := v.TemplateData()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range data.Fields {
			if f.IsSecret {
				secrets = append(secrets, f.FullName)
			}
			if f.Description == "" {
				t.Errorf("field %s has no description", f.FullName)
			}
		}
	})
	if strings.Join(secrets, ",") != "s3.credentials.secret,s3.credentials.token" {
		t.Errorf("secret fields %v", secrets)
	}
}

func TestTableStringNamesTheResolvedWarehouse(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ warehouse, want string }{
		{"/lake", "db.t in /lake"},
		{"file:///lake", "db.t in file:///lake"},
		{"s3://b/wh", "db.t in s3://b/wh"},
		{"./wh", "db.t in ./wh (resolved against the working directory to " + filepath.Join(wd, "wh") + ")"},
		{"wh", "db.t in wh (resolved against the working directory to " + filepath.Join(wd, "wh") + ")"},
	} {
		if got := (Table{Warehouse: tc.warehouse, Database: "db", Table: "t"}).String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.warehouse, got, tc.want)
		}
	}
}

func TestDirGuardRemovesOnlyWhatWasMissingAndEmpty(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name   string
		write  string // a file written below the warehouse after the guard, "" for none
		remain []string
		gone   []string
	}{
		{"empty", "", []string{"."}, []string{"a", "a/b", "a/b/wh"}},
		{"written", "db.db/x", []string{"a/b/wh/db.db/x"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(root, tc.name)
			if err := os.Mkdir(base, 0o755); err != nil {
				t.Fatal(err)
			}
			wh := filepath.Join(base, "a", "b", "wh")
			g := GuardWarehouse(Table{Warehouse: wh})
			if err := os.MkdirAll(wh, 0o755); err != nil { // what opening the warehouse does
				t.Fatal(err)
			}
			if tc.write != "" {
				p := filepath.Join(wh, tc.write)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			g.RemoveEmpty()
			for _, p := range tc.remain {
				if _, err := os.Stat(filepath.Join(base, p)); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
			for _, p := range tc.gone {
				if _, err := os.Stat(filepath.Join(base, p)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s still there (%v)", p, err)
				}
			}
		})
	}
	// An existing warehouse is never removed, even when empty.
	wh := filepath.Join(root, "existing")
	if err := os.Mkdir(wh, 0o755); err != nil {
		t.Fatal(err)
	}
	GuardWarehouse(Table{Warehouse: wh}).RemoveEmpty()
	if _, err := os.Stat(wh); err != nil {
		t.Errorf("existing warehouse removed: %v", err)
	}
}
