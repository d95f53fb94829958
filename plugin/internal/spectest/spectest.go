// Package spectest checks a plugin's config spec through Benthos' own
// machinery: lint rules through a component linter, the docs rendered from
// the spec, and the spec's examples linted and parsed. It is imported by
// the tests of plugin/input and plugin/output only.
package spectest

import (
	"bytes"
	"strings"
	"testing"
	"text/template"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// CheckLint lints yaml with lint (a component linter's LintInputYAML or
// LintOutputYAML) and checks that it yields a lint containing each of want,
// or no lint at all when want is empty.
func CheckLint(t *testing.T, lint func([]byte) ([]service.Lint, error), yaml string, want ...string) {
	t.Helper()
	lints, err := lint([]byte(yaml))
	if err != nil {
		t.Fatalf("%s: %v", yaml, err)
	}
	var got []string
	for _, l := range lints {
		got = append(got, l.What)
	}
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("%s\n  unexpected lints %q", yaml, got)
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("%s\n  lints %q\n  want one containing %q", yaml, got, w)
		}
	}
}

// docsTemplate renders the component docs from TemplateData (RenderDocs is
// broken in benthos v4.60.0 for components with advanced fields).
var docsTemplate = template.Must(template.New("docs").Parse(`= {{.Name}}
{{.Summary}}
{{.Description}}
== Fields
{{range .Fields}}=== {{.FullName}}{{if .IsSecret}} (secret){{end}}
{{.Description}}
Type: {{.Type}}{{if .DefaultMarshalled}} Default: {{.DefaultMarshalled}}{{end}}
{{range .AnnotatedOptions}}* {{index . 0}}: {{index . 1}}
{{end}}{{end}}
== Examples
{{range .Examples}}=== {{.Title}}
{{.Summary}}
{{.Config}}
{{end}}
== Common config
{{.CommonConfigYAML}}
== Full config
{{.AdvancedConfigYAML}}`))

// CheckDocs renders the docs of the component view describes and checks
// that they contain each of want and that every field has a description.
// It returns the template data, for CheckExamples and further checks.
func CheckDocs(t *testing.T, view *service.ConfigView, want ...string) service.TemplateDataPlugin {
	t.Helper()
	data, err := view.TemplateData()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := docsTemplate.Execute(&buf, data); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("rendered docs lack %q", w)
		}
	}
	for _, f := range data.Fields {
		if strings.TrimSpace(f.Description) == "" {
			t.Errorf("field %s has no description", f.FullName)
		}
	}
	return data
}

// CheckExamples lints the spec's examples (at least three) and its rendered
// common and full configs with env's stream linter, deprecated fields
// rejected and environment variables not checked; the rendered configs may
// leave required fields empty. Every example must also parse: its component
// block, the lines below marker (e.g. "input:\n  paimon:\n") unindented,
// must parse with spec, and parse must accept the result.
func CheckExamples(t *testing.T, env *service.Environment, data service.TemplateDataPlugin, marker string,
	spec *service.ConfigSpec, parse func(*service.ParsedConfig) error,
) {
	t.Helper()
	if len(data.Examples) < 3 {
		t.Fatalf("%d examples", len(data.Examples))
	}
	linter := env.FullConfigSchema("", "").NewStreamConfigLinter()
	linter.SetRejectDeprecated(true)
	linter.SetSkipEnvVarCheck(true)
	for _, ex := range data.Examples {
		lints, err := linter.LintYAML([]byte(ex.Config))
		if err != nil {
			t.Fatalf("example %q: %v", ex.Title, err)
		}
		for _, l := range lints {
			t.Errorf("example %q: %v", ex.Title, l.Error())
		}
		conf, err := spec.ParseYAML(componentBlock(t, ex.Config, marker), env)
		if err != nil {
			t.Fatalf("example %q: %v", ex.Title, err)
		}
		if err := parse(conf); err != nil {
			t.Errorf("example %q: %v", ex.Title, err)
		}
	}
	for _, cfg := range []string{data.CommonConfigYAML, data.AdvancedConfigYAML} {
		lints, err := linter.LintYAML([]byte(cfg))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lints {
			if !strings.Contains(l.What, "must not be empty") { // required fields are rendered empty
				t.Errorf("rendered config: %v\n%s", l.Error(), cfg)
			}
		}
	}
}

// componentBlock extracts the block below marker in an example pipeline,
// whose lines are indented four spaces, without that indentation.
func componentBlock(t *testing.T, pipeline, marker string) string {
	t.Helper()
	_, after, ok := strings.Cut(pipeline, marker)
	if !ok {
		t.Fatalf("no %q in example:\n%s", marker, pipeline)
	}
	var b strings.Builder
	for _, line := range strings.Split(after, "\n") {
		if line != "" && !strings.HasPrefix(line, "    ") {
			break
		}
		b.WriteString(strings.TrimPrefix(line, "    "))
		b.WriteByte('\n')
	}
	return b.String()
}
