package pgcdc

import (
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/plugin/internal/spectest"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon" // the examples' output
)

func TestConfigLint(t *testing.T) {
	linter := service.GlobalEnvironment().NewComponentConfigLinter()
	head := "pg_cdc:\n  dsn: postgres://x\n  slot_name: s\n"
	spectest.CheckLint(t, linter.LintInputYAML, head+"  tables: [ public.a ]\n")
	spectest.CheckLint(t, linter.LintInputYAML, head, "one of tables or schema is required")
	spectest.CheckLint(t, linter.LintInputYAML, head+"  schema: public\n  snapshot: sometimes\n", "sometimes")
	spectest.CheckLint(t, linter.LintInputYAML, head+"  schema: public\n  slot: x\n", "field slot not recognised")
}

func TestParseConfigErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"dsn: x\nslot_name: s\ntables: [ orders ]\n":                  "not schema-qualified",
		"dsn: x\nslot_name: Bad-Name\ntables: [ public.orders ]\n":    "lower-case letters",
		"dsn: x\nslot_name: s\nschema: public\nsnapshot_workers: 0\n": "must be positive",
		"dsn: x\nslot_name: s\n":                                      "one of tables or schema",
	} {
		conf, err := ConfigSpec().ParseYAML(yaml, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseConfig(conf); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", yaml, err, want)
		}
	}
	conf, _ := ConfigSpec().ParseYAML("dsn: x\nslot_name: s\nschema: public\n", nil)
	c, err := ParseConfig(conf)
	if err != nil || c.Publication != "s" || c.SnapshotWorkers != 2 || c.Snapshot != SnapshotInitial || c.Toast != ToastError || c.Truncate != TruncateError {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
}

func TestDocsRenderAndExamplesLint(t *testing.T) {
	env := service.GlobalEnvironment()
	var view *service.ConfigView
	env.WalkInputs(func(name string, v *service.ConfigView) {
		if name == Name {
			view = v
		}
	})
	if view == nil {
		t.Fatal("pg_cdc not registered")
	}
	data := spectest.CheckDocs(t, view, "== Delivery", "== Metadata", "lsn_position", "=== slot_name", "=== dsn (secret)", "=== auto_replay_nacks")
	spectest.CheckExamples(t, env, data, "input:\n  pg_cdc:\n", ConfigSpec(), func(conf *service.ParsedConfig) error {
		_, err := ParseConfig(conf)
		return err
	})
}
