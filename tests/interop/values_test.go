//go:build interop

package interop

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Canonical JSON (as the write specs accept it, README.md "Write specs") to
// Go values of lakecore/types: the inverse of canonicalValue, lenient as the
// spec readers are (numbers as strings for FLOAT/DOUBLE, DECIMAL as a
// number, DATE as a day count, timestamps with 0-9 fraction digits or a
// space, MAP pairs in any order, ROW as an object or an array).

// decodeJSON decodes one JSON value keeping numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// rowFromJSON converts a JSON object keyed by column name to a row of
// fields (absent columns are NULL).
func rowFromJSON(fields []types.DataField, obj map[string]any) ([]any, error) {
	for k := range obj {
		if types.FieldByName(fields, k) < 0 {
			return nil, fmt.Errorf("no column %q", k)
		}
	}
	row := make([]any, len(fields))
	for i, f := range fields {
		v, err := valueFromJSON(f.Type, obj[f.Name])
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		row[i] = v
	}
	return row, nil
}

func valueFromJSON(t types.DataType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	text := func() (string, error) {
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		}
		return "", fmt.Errorf("%v (%T) for %s", v, v, t)
	}
	switch t.Kind {
	case types.KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%v for BOOLEAN", v)
		}
		return b, nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt, types.KindFloat, types.KindDouble,
		types.KindChar, types.KindVarChar, types.KindTime, types.KindTimestamp, types.KindLocalZonedTimestamp:
		s, err := text()
		if err != nil {
			return nil, err
		}
		return parseCanonicalScalar(t, s)
	case types.KindDecimal:
		s, err := text()
		if err != nil {
			return nil, err
		}
		return types.ParseDecimal(s, t.Precision, t.Scale)
	case types.KindBinary, types.KindVarBinary:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%v for %s", v, t)
		}
		return base64.StdEncoding.DecodeString(s)
	case types.KindDate:
		if n, ok := v.(json.Number); ok {
			d, err := strconv.ParseInt(n.String(), 10, 32)
			return types.Date(d), err
		}
		s, err := text()
		if err != nil {
			return nil, err
		}
		return parseCanonicalScalar(t, s)
	case types.KindArray:
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%v for %s", v, t)
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			ev, err := valueFromJSON(*t.Element, e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = ev
		}
		return out, nil
	case types.KindMap, types.KindMultiset:
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%v for %s", v, t)
		}
		kt, vt := t.Key, t.Value
		if t.Kind == types.KindMultiset {
			it := types.IntType().NotNull()
			kt, vt = t.Element, &it
		}
		m := types.Map{Keys: make([]any, len(arr)), Values: make([]any, len(arr))}
		for i, p := range arr {
			pair, ok := p.([]any)
			if !ok || len(pair) != 2 {
				return nil, fmt.Errorf("entry %d: %v is not a [key, value] pair", i, p)
			}
			k, err := valueFromJSON(*kt, pair[0])
			if err != nil {
				return nil, fmt.Errorf("key %d: %w", i, err)
			}
			val, err := valueFromJSON(*vt, pair[1])
			if err != nil {
				return nil, fmt.Errorf("value %d: %w", i, err)
			}
			m.Keys[i], m.Values[i] = k, val
		}
		return m, nil
	case types.KindRow:
		out := make([]any, len(t.Fields))
		switch x := v.(type) {
		case map[string]any:
			for i, f := range t.Fields {
				fv, err := valueFromJSON(f.Type, x[f.Name])
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", f.Name, err)
				}
				out[i] = fv
			}
		case []any:
			if len(x) != len(t.Fields) {
				return nil, fmt.Errorf("%d values for %s", len(x), t)
			}
			for i, f := range t.Fields {
				fv, err := valueFromJSON(f.Type, x[i])
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", f.Name, err)
				}
				out[i] = fv
			}
		default:
			return nil, fmt.Errorf("%v for %s", v, t)
		}
		return out, nil
	}
	return nil, fmt.Errorf("no Go value for %s", t)
}
