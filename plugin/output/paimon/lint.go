package paimon

import (
	"encoding/json"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// lintMethod is the Bloblang method the create_table lint rule calls, so
// that `benthos-paimon lint` reports what only Go code can check (column
// types, table option names and values, Paimon's schema validation) with
// the same code and messages as start-up. Lint rules can call only
// Bloblang; Benthos compiles them with the global Bloblang environment
// when the spec is built, so the method is registered there first.
const lintMethod = "paimon_create_table_errors"

var (
	lintOnce sync.Once
	lintErr  error
)

// registerLintMethod registers lintMethod once; it reports whether the
// method is available (registering twice in one process is not an error).
func registerLintMethod() bool {
	lintOnce.Do(func() {
		spec := bloblang.NewPluginSpec().
			Category("paimon").
			Description("Used by the lint rule of the paimon output's create_table field: the problems of a " +
				"create_table object that only the output's own checks find (column types, table option names and " +
				"values, Paimon's schema validation), as a list of messages. The field combinations are the " +
				"output's other lint rules.")
		lintErr = bloblang.RegisterMethodV2(lintMethod, spec, func(*bloblang.ParsedParams) (bloblang.Method, error) {
			return func(v any) (any, error) { return createTableLint(v), nil }, nil
		})
	})
	return lintErr == nil
}

// createTableLintRule is the create_table field's lint rule, "" when the
// method could not be registered.
func createTableLintRule() string {
	if !registerLintMethod() {
		return ""
	}
	return `root = this.` + lintMethod + `()`
}

// createTableLint checks a create_table value as the output checks it when
// it is constructed, leaving out the field combinations outputLintRule
// reports, and returns the messages ([] when there is nothing to report).
func createTableLint(v any) []any {
	out := []any{}
	raw, err := json.Marshal(v)
	if err != nil {
		return out
	}
	conf, err := service.NewConfigSpec().Fields(createTableChildren()...).ParseYAML(string(raw), nil)
	if err != nil {
		return out // a malformed value is reported by Benthos' own lints
	}
	ct, err := readCreateTable(conf)
	if err != nil {
		return append(out, err.Error())
	}
	if err := ct.checkOptions(); err != nil {
		return append(out, err.Error())
	}
	if ct.Validate() != nil {
		return out // a field combination: outputLintRule's message
	}
	if err := ct.checkSpec(); err != nil {
		out = append(out, err.Error())
	}
	return out
}
