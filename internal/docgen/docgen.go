// Package docgen generates the Markdown reference pages of the components
// a Benthos environment registers beyond Benthos' own bundles: for
// benthos-paimon the paimon input and output, the prometheus metrics
// exporter and whatever else main.go imports. Pages follow Redpanda
// Connect's component layout (summary, common and advanced config,
// description, examples, then every field with its type, default,
// options and examples, nested fields by their full path) and are built
// from each spec's JSON form (service.ConfigView.FormatJSON), so the spec
// stays the one source of the documentation.
//
// `benthos-paimon docs` (make docs) writes them under docs/components;
// a test of package main compares them with what Files renders and fails
// when they are stale.
package docgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Component is one documented component: its kind ("input", "output",
// "metrics", ...), its name and its spec.
type Component struct {
	Kind string
	Name string
	Spec Spec
	// CommonYAML and AdvancedYAML are the example configs with defaults
	// (common fields only, and every field) Benthos derives from the spec.
	CommonYAML   string
	AdvancedYAML string
}

// Spec is the part of a component's JSON spec (FormatJSON, Benthos'
// internal/docs.ComponentSpec) the pages show.
type Spec struct {
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Status      string    `json:"status"`
	Summary     string    `json:"summary"`
	Description string    `json:"description"`
	Categories  []string  `json:"categories"`
	Footnotes   string    `json:"footnotes"`
	Examples    []Example `json:"examples"`
	Config      Field     `json:"config"`
	Version     string    `json:"version"`
}

// Example is a titled config of a component spec.
type Example struct {
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Config  string `json:"config"`
}

// Field is one field of a spec (Benthos' internal/docs.FieldSpec).
type Field struct {
	Name             string      `json:"name"`
	Type             string      `json:"type"`
	Kind             string      `json:"kind"`
	Description      string      `json:"description"`
	IsAdvanced       bool        `json:"is_advanced"`
	IsDeprecated     bool        `json:"is_deprecated"`
	IsOptional       bool        `json:"is_optional"`
	IsSecret         bool        `json:"is_secret"`
	Default          *any        `json:"default"`
	Interpolated     bool        `json:"interpolated"`
	Bloblang         bool        `json:"bloblang"`
	Examples         []any       `json:"examples"`
	AnnotatedOptions [][2]string `json:"annotated_options"`
	Options          []string    `json:"options"`
	Children         []Field     `json:"children"`
	Version          string      `json:"version"`
}

// walker is one Walk method of service.Environment with the kind it walks.
type walker struct {
	kind string
	walk func(func(string, *service.ConfigView))
}

// walkers lists every kind of component an environment holds, so that a
// component of any kind the binary adds gets its page.
func walkers(env *service.Environment) []walker {
	return []walker{
		{"input", env.WalkInputs},
		{"output", env.WalkOutputs},
		{"processor", env.WalkProcessors},
		{"cache", env.WalkCaches},
		{"rate_limit", env.WalkRateLimits},
		{"buffer", env.WalkBuffers},
		{"metrics", env.WalkMetrics},
		{"tracer", env.WalkTracers},
		{"scanner", env.WalkScanners},
	}
}

// Collect returns the components of env that Benthos' own bundles do not
// register, sorted by kind and name. It fails when a spec does not decode.
func Collect(env *service.Environment) ([]Component, error) {
	var out []Component
	var errs []error
	for _, w := range walkers(env) {
		w.walk(func(name string, view *service.ConfigView) {
			if isBenthosCore(w.kind, name) {
				return
			}
			c, err := component(w.kind, name, view)
			if err != nil {
				errs = append(errs, err)
				return
			}
			out = append(out, c)
		})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func component(kind, name string, view *service.ConfigView) (Component, error) {
	raw, err := view.FormatJSON()
	if err != nil {
		return Component{}, fmt.Errorf("spec of %s %s: %w", kind, name, err)
	}
	var spec Spec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return Component{}, fmt.Errorf("decode spec of %s %s: %w", kind, name, err)
	}
	// The example configs with defaults are Benthos' own rendering of the
	// same spec (labels, reserved fields, required fields marked), which
	// TemplateData does correctly; only its RenderDocs template is broken.
	td, err := view.TemplateData()
	if err != nil {
		return Component{}, fmt.Errorf("example config of %s %s: %w", kind, name, err)
	}
	return Component{Kind: kind, Name: name, Spec: spec, CommonYAML: td.CommonConfigYAML, AdvancedYAML: td.AdvancedConfigYAML}, nil
}

// Path is the page of c relative to the docs directory, as Connect lays
// its pages out: inputs/paimon.md, outputs/paimon.md, metrics/prometheus.md.
func (c Component) Path() string {
	dir := c.Kind + "s"
	if c.Kind == "metrics" {
		dir = "metrics"
	}
	return filepath.ToSlash(filepath.Join(dir, c.Name+".md"))
}

// IndexName is the generated index page of a docs directory.
const IndexName = "README.md"

// Files renders the page of every component plus the index, keyed by
// their path relative to the docs directory.
func Files(comps []Component) map[string][]byte {
	files := make(map[string][]byte, len(comps)+1)
	for _, c := range comps {
		files[c.Path()] = Render(c)
	}
	files[IndexName] = renderIndex(comps)
	return files
}

// Write makes dir hold exactly files: it writes each (creating
// directories) and removes the other .md files under dir, the pages of
// components that are gone.
func Write(dir string, files map[string][]byte) error {
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write docs: %w", err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("write docs: %w", err)
		}
	}
	extra, err := mdFiles(dir)
	if err != nil {
		return err
	}
	for _, rel := range extra {
		if _, ok := files[rel]; !ok {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				return fmt.Errorf("remove stale page: %w", err)
			}
		}
	}
	return nil
}

// Stale lists how dir differs from files: pages missing, different or
// left over, one line each; none when dir is up to date.
func Stale(dir string, files map[string][]byte) ([]string, error) {
	var diffs []string
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			diffs = append(diffs, rel+": missing")
		case err != nil:
			return nil, fmt.Errorf("read docs: %w", err)
		case !bytes.Equal(got, want):
			diffs = append(diffs, rel+": differs from the spec "+firstDifference(got, want))
		}
	}
	existing, err := mdFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, rel := range existing {
		if _, ok := files[rel]; !ok {
			diffs = append(diffs, rel+": no such component any more")
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("(line %d: have %q, want %q)", i+1, gl, wl)
		}
	}
	return ""
}

// mdFiles lists the .md files under dir relative to it; none when dir
// does not exist.
func mdFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list docs: %w", err)
	}
	return out, nil
}
