package docgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/docgen"
)

// testEnv is Benthos' core environment plus one output, widget, whose
// spec has a field of every shape the pages render.
func testEnv(t *testing.T) *service.Environment {
	t.Helper()
	env := service.NewEnvironment()
	spec := service.NewConfigSpec().
		Beta().
		Categories("Services").
		Version("0.3.0").
		Summary("Writes widgets. See https://example.com/w[the widget site^].").
		Description("Intro.\n\n== Delivery\n\nAcks after xref:configuration:batching.adoc[batching].").
		Fields(
			service.NewStringField("path").Description("Where widgets go.").Example("/var/w").Example("s3://b/w"),
			service.NewInterpolatedStringField("name").Description("Widget name.").Default("w"),
			service.NewStringEnumField("mode", "fast", "safe").Description("How.").Default("safe"),
			service.NewStringAnnotatedEnumField("codec", map[string]string{"raw": "As is.", "json": "A | JSON document."}).Default("raw"),
			service.NewStringField("token").Description("A token.").Secret().Default("").Advanced(),
			service.NewStringField("legacy").Description("Old.").Default("").Deprecated(),
			service.NewObjectListField("columns",
				service.NewStringField("name").Description("Column name."),
				service.NewStringField("type").Description("Column type.").Default("STRING"),
			).Description("The columns.").Default([]any{}),
			service.NewObjectField("tuning",
				service.NewIntField("level").Description("Level.").Default(3).Advanced(),
			).Description("Knobs.").Optional(),
			service.NewStringMapField("options").Description("Options.").Default(map[string]any{}),
		).
		Example("Minimal", "Writes to /var/w.", "output:\n  widget:\n    path: /var/w\n")
	err := env.RegisterOutput("widget", spec, func(*service.ParsedConfig, *service.Resources) (service.Output, int, error) {
		return nil, 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestCollectSkipsBenthosCore checks that of a core environment plus one
// component only that component is documented.
func TestCollectSkipsBenthosCore(t *testing.T) {
	comps, err := docgen.Collect(testEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 1 || comps[0].Kind != "output" || comps[0].Name != "widget" {
		t.Fatalf("Collect = %+v, want the widget output alone", comps)
	}
	if got := comps[0].Path(); got != "outputs/widget.md" {
		t.Fatalf("Path() = %q, want outputs/widget.md", got)
	}
	if comps[0].Spec.Version != "0.3.0" || len(comps[0].Spec.Config.Children) != 9 {
		t.Fatalf("spec decoded as %+v", comps[0].Spec)
	}
}

// TestRender checks the page of widget: layout, AsciiDoc conversion, and
// every field with its type, default, options, examples and nesting.
func TestRender(t *testing.T) {
	comps, err := docgen.Collect(testEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	page := string(docgen.Render(comps[0]))
	for _, want := range []string{
		"---\ntitle: widget\ntype: output\nstatus: beta\ncategories: [Services]\n---\n",
		"# `widget` output\n",
		"Writes widgets. See [the widget site](https://example.com/w).\n",
		"Introduced in version 0.3.0.\n",
		"Common fields, with their defaults:\n\n```yaml\noutput:\n  label: \"\"\n  widget:\n    path: /var/w # No default (required)\n",
		"## Description\n\nIntro.\n\n### Delivery\n\nAcks after [batching](https://docs.redpanda.com/redpanda-connect/configuration/batching/).\n",
		"## Examples\n\n### Minimal\n\nWrites to /var/w.\n\n```yaml\noutput:\n  widget:\n    path: /var/w\n```\n",
		"### `path`\n\nWhere widgets go.\n\n**Type**: `string`  \n**Required**\n\n```yaml\n# Examples\n\npath: /var/w\n\npath: s3://b/w\n```\n",
		"### `name`\n\nWidget name.\n\nThis field supports [interpolation functions]",
		"**Type**: `string`  \n**Default**: `\"w\"`\n",
		"**Options**: `fast`, `safe`\n",
		"| Option | Summary |\n|---|---|\n| `json` | A \\| JSON document. |\n| `raw` | As is. |\n",
		"### `token`\n\nA token.\n\nAdvanced. This field holds a secret",
		"### `columns`\n\nThe columns.\n\n**Type**: `array` of `object`  \n**Default**: `[]`\n",
		"### `columns[].name`\n\nColumn name.\n\n**Type**: `string`  \n**Required**\n",
		"### `columns[].type`\n",
		"### `tuning`\n\nKnobs.\n\n**Type**: `object`  \n**Optional**\n",
		"### `tuning.level`\n\nLevel.\n\nAdvanced.\n\n**Type**: `int`  \n**Default**: `3`\n",
		"### `options`\n\nOptions.\n\n**Type**: `object` (map of `string`)  \n**Default**: `{}`\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "legacy") {
		t.Error("page documents the deprecated field legacy")
	}
	if strings.Index(page, "## Description") > strings.Index(page, "## Examples") ||
		strings.Index(page, "## Examples") > strings.Index(page, "## Fields") {
		t.Error("sections out of order: want Config, Description, Examples, Fields")
	}
}

// TestWriteAndStale checks that Write makes a directory Stale finds up to
// date, and that Stale reports a changed, a missing and a left-over page,
// which the next Write repairs.
func TestWriteAndStale(t *testing.T) {
	comps, err := docgen.Collect(testEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	files := docgen.Files(comps)
	if _, ok := files[docgen.IndexName]; !ok || len(files) != 2 {
		t.Fatalf("Files = %d pages, want the widget page and the index", len(files))
	}
	dir := filepath.Join(t.TempDir(), "components")
	if got, err := docgen.Stale(dir, files); err != nil || len(got) != 2 {
		t.Fatalf("Stale of a missing directory = %q, %v; want both pages missing", got, err)
	}
	if err := docgen.Write(dir, files); err != nil {
		t.Fatal(err)
	}
	if got, err := docgen.Stale(dir, files); err != nil || len(got) != 0 {
		t.Fatalf("Stale after Write = %q, %v; want none", got, err)
	}
	page := filepath.Join(dir, "outputs", "widget.md")
	if err := os.WriteFile(page, []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, docgen.IndexName)); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "inputs", "gone.md")
	if err := os.MkdirAll(filepath.Dir(gone), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gone, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := docgen.Stale(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md: missing",
		"inputs/gone.md: no such component any more",
		`outputs/widget.md: differs from the spec (line 1: have "edited by hand", want "---")`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Stale =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := docgen.Write(dir, files); err != nil {
		t.Fatal(err)
	}
	if got, err := docgen.Stale(dir, files); err != nil || len(got) != 0 {
		t.Fatalf("Stale after the second Write = %q, %v; want none", got, err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Fatalf("Write left the page of a component that is gone: %v", err)
	}
}
