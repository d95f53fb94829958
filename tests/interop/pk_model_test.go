//go:build interop

package interop

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The map-based model of a primary-key table: the merged state after each
// commit of a PK spec, computed from the changes alone by applying them in
// order (by sequence.field first when set), with the merge engine's rules
// as Java's merge functions state them (paimon-pk.md §5.4). It is what the
// differential test compares Java's reads (and lakecore's) with.
//
// It covers: deduplicate (ignore-delete, one sequence.field ascending),
// partial-update without sequence groups (ignore-delete,
// partial-update.remove-record-on-delete), aggregation (sum, product, min,
// max, last_value, last_non_null_value, first_value, first_non_null_value,
// listagg, bool_and, bool_or, collect, merge_map, ignore-retract,
// aggregation.remove-record-on-delete; retractions only of sum, last_value
// and last_non_null_value: Java's other retractions are not associative
// when the write buffer pre-merges a retraction without its accumulator,
// README finding P3), first-row (ignore-delete). Anything else returns an
// error naming it: the test then compares Java with Java only.

type modelRow struct {
	vals       []any
	exists     bool
	seq        any    // deduplicate with sequence.field: the winner's sequence value
	firstSet   []bool // aggregation first_value: the field saw its first record
	seenRecord bool
}

type pkModel struct {
	spec    *pkSpec
	fields  []types.DataField
	engine  string
	opts    map[string]string
	isPK    map[string]bool
	rows    map[string]*modelRow
	seqIdx  int // sequence.field column, -1 if none
	ignDel  bool
	aggFunc []string
	ignRet  []bool
}

// modelStates returns the canonical lines of the merged state after each
// commit step of s (index = step), or an error when the model does not
// cover s.
func modelStates(s *pkSpec) ([][]string, error) {
	if s.Model != nil && !*s.Model {
		return nil, fmt.Errorf("the spec says model: false")
	}
	m := &pkModel{spec: s, opts: map[string]string{}, isPK: map[string]bool{}, rows: map[string]*modelRow{}}
	for k, v := range s.Options {
		m.opts[k] = v
	}
	for _, k := range s.PrimaryKeys {
		m.isPK[k] = true
	}
	m.engine = m.opts["merge-engine"]
	if m.engine == "" {
		m.engine = "deduplicate"
	}
	m.ignDel = m.opts["ignore-delete"] == "true" || m.opts["partial-update.ignore-delete"] == "true" ||
		m.opts["first-row.ignore-delete"] == "true" || m.opts["deduplicate.ignore-delete"] == "true"
	for k := range m.opts {
		if strings.Contains(k, "sequence-group") || k == "partial-update.remove-record-on-sequence-group" ||
			strings.HasPrefix(k, "sequence.field.sort-order") || k == "sequence.snapshot-ordering" ||
			strings.HasSuffix(k, ".distinct") || strings.HasSuffix(k, ".nested-key") {
			return nil, fmt.Errorf("option %s", k)
		}
	}
	if err := m.setFields(s.Schema); err != nil {
		return nil, err
	}
	var out [][]string
	for i, c := range s.Commits {
		switch c.Kind {
		case "changes":
			for j, ch := range c.Changes {
				if err := m.apply(ch); err != nil {
					return nil, fmt.Errorf("commit %d change %d: %w", i, j, err)
				}
			}
		case "alter":
			if len(c.SetOptions) > 0 || len(c.RemoveOptions) > 0 {
				return nil, fmt.Errorf("alter of options")
			}
			all := append(append([]pkField{}, m.schemaFields()...), c.AddColumns...)
			if err := m.setFields(all); err != nil {
				return nil, err
			}
			for _, r := range m.rows {
				r.vals = append(r.vals, make([]any, len(c.AddColumns))...)
				r.firstSet = append(r.firstSet, make([]bool, len(c.AddColumns))...)
			}
		}
		lines, err := m.render()
		if err != nil {
			return nil, err
		}
		out = append(out, lines)
	}
	return out, nil
}

func (m *pkModel) schemaFields() []pkField {
	out := make([]pkField, len(m.fields))
	for i, f := range m.fields {
		out[i] = pkField{Name: f.Name, Type: f.Type.String()}
	}
	return out
}

func (m *pkModel) setFields(fs []pkField) error {
	fields, err := pkFields(fs)
	if err != nil {
		return err
	}
	m.fields = fields
	m.seqIdx = -1
	if sf := m.opts["sequence.field"]; sf != "" {
		if strings.Contains(sf, ",") {
			return fmt.Errorf("sequence.field with several fields")
		}
		if m.engine != "deduplicate" {
			return fmt.Errorf("sequence.field with %s", m.engine)
		}
		m.seqIdx = types.FieldByName(fields, sf)
	}
	m.aggFunc = make([]string, len(fields))
	m.ignRet = make([]bool, len(fields))
	if m.engine == "aggregation" {
		def := m.opts["fields.default-aggregate-function"]
		if def == "" {
			def = "last_non_null_value"
		}
		for i, f := range fields {
			if m.isPK[f.Name] {
				continue
			}
			fn := m.opts["fields."+f.Name+".aggregate-function"]
			if fn == "" {
				fn = def
			}
			switch fn {
			case "sum", "product", "min", "max", "last_value", "last_non_null_value", "first_value",
				"first_non_null_value", "first_not_null_value", "listagg", "bool_and", "bool_or", "collect", "merge_map":
			default:
				return fmt.Errorf("aggregate function %s", fn)
			}
			m.aggFunc[i] = fn
			m.ignRet[i] = m.opts["fields."+f.Name+".ignore-retract"] == "true"
		}
	}
	return nil
}

func (m *pkModel) key(row []any) (string, error) {
	var b strings.Builder
	for i, f := range m.fields {
		if m.isPK[f.Name] {
			if err := canonicalValue(&b, f.Type, row[i]); err != nil {
				return "", err
			}
			b.WriteByte(0)
		}
	}
	return b.String(), nil
}

func (m *pkModel) apply(ch pkChange) error {
	if len(ch.Row) != len(m.fields) {
		return fmt.Errorf("row has %d values for %d columns", len(ch.Row), len(m.fields))
	}
	row := make([]any, len(m.fields))
	for i, f := range m.fields {
		v, err := valueFromJSON(f.Type, ch.Row[i])
		if err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
		row[i] = v
	}
	retract := ch.Kind == "-U" || ch.Kind == "-D"
	if !retract && ch.Kind != "+I" && ch.Kind != "+U" {
		return fmt.Errorf("row kind %q", ch.Kind)
	}
	k, err := m.key(row)
	if err != nil {
		return err
	}
	r := m.rows[k]
	if r == nil {
		r = &modelRow{vals: make([]any, len(m.fields)), firstSet: make([]bool, len(m.fields))}
		m.rows[k] = r
	}
	switch m.engine {
	case "deduplicate":
		if retract && m.ignDel {
			return nil
		}
		if m.seqIdx >= 0 {
			s := row[m.seqIdx]
			if r.seenRecord && compareModel(s, r.seq) < 0 {
				return nil // an older sequence loses (ties: the later arrival wins)
			}
			r.seq = s
		}
		r.seenRecord = true
		r.vals, r.exists = row, !retract
	case "first-row":
		if retract {
			if m.ignDel {
				return nil
			}
			return fmt.Errorf("first-row without ignore-delete gets %s (Java refuses)", ch.Kind)
		}
		if !r.exists {
			r.vals, r.exists = row, true
		}
	case "partial-update":
		if retract {
			switch {
			case m.ignDel:
			case m.opts["partial-update.remove-record-on-delete"] == "true":
				if ch.Kind == "-D" {
					// the row restarts from the -D's values (initRow), deleted
					r.vals, r.exists = row, false
				}
			default:
				return fmt.Errorf("partial-update gets %s without ignore-delete (Java refuses)", ch.Kind)
			}
			return nil
		}
		for i, f := range m.fields {
			if m.isPK[f.Name] || row[i] != nil {
				r.vals[i] = row[i]
			}
		}
		r.exists = true
	case "aggregation":
		if ch.Kind == "-D" && m.opts["aggregation.remove-record-on-delete"] == "true" {
			r.vals, r.exists, r.firstSet = make([]any, len(m.fields)), false, make([]bool, len(m.fields))
			return nil
		}
		for i, f := range m.fields {
			if m.isPK[f.Name] {
				r.vals[i] = row[i]
				continue
			}
			if retract && m.ignRet[i] {
				continue
			}
			v, err := aggregate(m.aggFunc[i], m.opts["fields."+f.Name+".list-agg-delimiter"], r.vals[i], row[i], retract, &r.firstSet[i])
			if err != nil {
				return fmt.Errorf("column %s: %w", f.Name, err)
			}
			r.vals[i] = v
		}
		if !retract {
			r.exists = true
		}
	default:
		return fmt.Errorf("merge-engine %s", m.engine)
	}
	return nil
}

func (m *pkModel) render() ([]string, error) {
	var rows [][]any
	for _, r := range m.rows {
		if r.exists {
			rows = append(rows, r.vals)
		}
	}
	return canonicalRows(m.fields, rows)
}

// aggregate is one field aggregator's agg (or retract) of Java 1.4/2.0.
func aggregate(fn, delim string, acc, in any, retract bool, firstSet *bool) (any, error) {
	if retract {
		switch fn {
		case "sum":
			if in == nil {
				return acc, nil
			}
			if acc == nil {
				return negate(in)
			}
			n, err := negate(in)
			if err != nil {
				return nil, err
			}
			return add(acc, n)
		case "last_value":
			return nil, nil
		case "last_non_null_value":
			if in != nil {
				return nil, nil
			}
			return acc, nil
		}
		return nil, fmt.Errorf("retraction of %s (not modelled)", fn)
	}
	switch fn {
	case "sum", "product", "bool_and", "bool_or", "listagg", "collect", "merge_map", "min", "max":
		if in == nil {
			return acc, nil
		}
		if acc == nil {
			return in, nil
		}
	}
	switch fn {
	case "sum":
		return add(acc, in)
	case "product":
		switch a := acc.(type) {
		case int8:
			return a * in.(int8), nil
		case int16:
			return a * in.(int16), nil
		case int32:
			return a * in.(int32), nil
		case int64:
			return a * in.(int64), nil
		case float64:
			return a * in.(float64), nil
		}
		return nil, fmt.Errorf("product of %T", acc)
	case "min", "max":
		c := compareModel(in, acc)
		if (fn == "min" && c < 0) || (fn == "max" && c > 0) {
			return in, nil
		}
		return acc, nil
	case "bool_and":
		return acc.(bool) && in.(bool), nil
	case "bool_or":
		return acc.(bool) || in.(bool), nil
	case "listagg":
		if delim == "" {
			delim = ","
		}
		return acc.(string) + delim + in.(string), nil
	case "collect":
		return append(append([]any{}, acc.([]any)...), in.([]any)...), nil
	case "merge_map":
		a, b := acc.(types.Map), in.(types.Map)
		out := types.Map{Keys: append([]any{}, a.Keys...), Values: append([]any{}, a.Values...)}
		for i, k := range b.Keys {
			found := false
			for j, ak := range out.Keys {
				if compareModel(ak, k) == 0 {
					out.Values[j], found = b.Values[i], true
				}
			}
			if !found {
				out.Keys, out.Values = append(out.Keys, k), append(out.Values, b.Values[i])
			}
		}
		return out, nil
	case "last_value":
		return in, nil
	case "last_non_null_value":
		if in != nil {
			return in, nil
		}
		return acc, nil
	case "first_value":
		if !*firstSet {
			*firstSet = true
			return in, nil
		}
		return acc, nil
	case "first_non_null_value", "first_not_null_value":
		if acc == nil {
			return in, nil
		}
		return acc, nil
	}
	return nil, fmt.Errorf("aggregate function %s", fn)
}

func add(a, b any) (any, error) {
	switch x := a.(type) {
	case int8:
		return x + b.(int8), nil
	case int16:
		return x + b.(int16), nil
	case int32:
		return x + b.(int32), nil
	case int64:
		return x + b.(int64), nil
	case float32:
		return x + b.(float32), nil
	case float64:
		return x + b.(float64), nil
	case types.Decimal:
		y := b.(types.Decimal)
		if x.Scale != y.Scale {
			return nil, fmt.Errorf("decimal scales %d and %d", x.Scale, y.Scale)
		}
		return types.Decimal{Unscaled: new(big.Int).Add(x.Unscaled, y.Unscaled), Scale: x.Scale}, nil
	}
	return nil, fmt.Errorf("sum of %T", a)
}

func negate(a any) (any, error) {
	switch x := a.(type) {
	case int8:
		return -x, nil
	case int16:
		return -x, nil
	case int32:
		return -x, nil
	case int64:
		return -x, nil
	case float32:
		return -x, nil
	case float64:
		return -x, nil
	case types.Decimal:
		return types.Decimal{Unscaled: new(big.Int).Neg(x.Unscaled), Scale: x.Scale}, nil
	}
	return nil, fmt.Errorf("negate %T", a)
}

// compareModel orders two values of one type, nulls first.
func compareModel(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	cmp := func(x, y float64) int {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	switch x := a.(type) {
	case int8:
		return cmp(float64(x), float64(b.(int8)))
	case int16:
		return cmp(float64(x), float64(b.(int16)))
	case int32:
		return cmp(float64(x), float64(b.(int32)))
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case float32:
		return cmp(float64(x), float64(b.(float32)))
	case float64:
		return cmp(x, b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		return cmp(float64(boolInt(x)), float64(boolInt(b.(bool))))
	case types.Decimal:
		y := b.(types.Decimal)
		return new(big.Rat).SetFrac(x.Unscaled, pow10(x.Scale)).Cmp(new(big.Rat).SetFrac(y.Unscaled, pow10(y.Scale)))
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func pow10(n int) *big.Int {
	v, _ := new(big.Int).SetString("1"+strings.Repeat("0", n), 10)
	return v
}
