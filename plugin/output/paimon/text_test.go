package paimon

import (
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestTextMatchesInterpolation: every shape of field the shortcuts take,
// and some they do not, over messages whose metadata is a string, another
// type or missing, gives what Benthos' interpolation gives, errors
// included.
func TestTextMatchesInterpolation(t *testing.T) {
	fields := []struct {
		raw      string
		shortcut string // "static", "meta" or "" (the interpolation)
	}{
		{`pg`, "static"},
		{``, "static"},
		{`${! @operation }`, "meta"},
		{`${!@operation}`, "meta"},
		{`${! metadata("operation") }`, "meta"},
		{`${! metadata( "operation" ) }`, "meta"},
		{`${! meta("operation") }`, ""}, // gives null for an empty string
		{`${! @operation.uppercase() }`, ""},
		{`${! @operation }x`, ""},
		{`${! @operation | "insert" }`, ""},
		{`${! this.op }`, ""},
		{`${{! @operation }`, ""},
		{`${! @operation.not_a_method() }`, ""},
	}
	metas := []struct {
		name string
		set  func(*service.Message)
	}{
		{"string", func(m *service.Message) { m.MetaSetMut("operation", "update") }},
		{"empty string", func(m *service.Message) { m.MetaSetMut("operation", "") }},
		{"unicode", func(m *service.Message) { m.MetaSetMut("operation", "ünïcode ${! x }") }},
		{"the text null", func(m *service.Message) { m.MetaSetMut("operation", "null") }},
		{"int", func(m *service.Message) { m.MetaSetMut("operation", int64(42)) }},
		{"bool", func(m *service.Message) { m.MetaSetMut("operation", true) }},
		{"object", func(m *service.Message) { m.MetaSetMut("operation", map[string]any{"a": 1.5}) }},
		{"bytes", func(m *service.Message) { m.MetaSetMut("operation", []byte("raw")) }},
		{"missing", func(*service.Message) {}},
	}
	var batch service.MessageBatch
	for _, m := range metas {
		msg := service.NewMessage([]byte(`{"op":"delete"}`))
		m.set(msg)
		batch = append(batch, msg)
	}
	for _, f := range fields {
		is, err := service.NewInterpolatedString(f.raw)
		if err != nil {
			if f.shortcut != "" {
				t.Fatalf("%q: %v", f.raw, err)
			}
			continue // a parse error is the config's, before any message
		}
		tx := newText(f.raw, is)
		shortcut := ""
		switch {
		case tx.isStatic:
			shortcut = "static"
		case tx.metaKey != "":
			shortcut = "meta"
		}
		if shortcut != f.shortcut {
			t.Errorf("%q takes shortcut %q, want %q", f.raw, shortcut, f.shortcut)
		}
		want, got := batch.InterpolationExecutor(is), tx.over(batch)
		for i, m := range metas {
			w, werr := want.TryString(i)
			g, gerr := got.TryString(i)
			if g != w || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%q with metadata %s: got %q, %v; the interpolation gives %q, %v", f.raw, m.name, g, gerr, w, werr)
			}
		}
	}
}
