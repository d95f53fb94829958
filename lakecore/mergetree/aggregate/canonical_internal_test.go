package aggregate

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// canon is the canonical JSON form of a value of t shared with
// testdata/oracle/AggOracle.java: integers as numbers, FLOAT/DOUBLE as
// "f:"/"d:" and their raw bits in hex, strings as strings, bytes in base64,
// DECIMAL as plain text, TIMESTAMP as [millis, nanos], ARRAY and ROW as
// lists, MAP and MULTISET as lists of [key, value] in order.
func canon(v any, t types.DataType) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) { return nil, fmt.Errorf("canon: %T is not a %s", v, t) }
	switch t.Kind {
	case types.KindBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		if n, ok := types.SignedInt(v); ok {
			return n, nil
		}
	case types.KindDate:
		if d, ok := v.(types.Date); ok {
			return int64(d), nil
		}
	case types.KindTime:
		if d, ok := v.(types.Time); ok {
			return int64(d), nil
		}
	case types.KindFloat:
		if f, ok := v.(float32); ok {
			return "f:" + strconv.FormatUint(uint64(math.Float32bits(f)), 16), nil
		}
	case types.KindDouble:
		if f, ok := v.(float64); ok {
			return "d:" + strconv.FormatUint(math.Float64bits(f), 16), nil
		}
	case types.KindChar, types.KindVarChar:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case types.KindBinary, types.KindVarBinary:
		if b, ok := v.([]byte); ok {
			return base64.StdEncoding.EncodeToString(b), nil
		}
	case types.KindDecimal:
		if d, ok := v.(types.Decimal); ok {
			return d.String(), nil
		}
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		if ts, ok := v.(types.Timestamp); ok {
			return []any{ts.Millis, int64(ts.NanoOfMilli)}, nil
		}
	case types.KindArray:
		a, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, len(a))
		for i, e := range a {
			c, err := canon(e, *t.Element)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case types.KindMap, types.KindMultiset:
		m, ok := v.(types.Map)
		if !ok {
			return bad()
		}
		kt, vt := t.Key, t.Value
		if t.Kind == types.KindMultiset {
			it := types.IntType()
			kt, vt = t.Element, &it
		}
		out := make([]any, len(m.Keys))
		for i := range m.Keys {
			k, err := canon(m.Keys[i], *kt)
			if err != nil {
				return nil, err
			}
			val, err := canon(m.Values[i], *vt)
			if err != nil {
				return nil, err
			}
			out[i] = []any{k, val}
		}
		return out, nil
	case types.KindRow:
		r, ok := v.([]any)
		if !ok || len(r) != len(t.Fields) {
			return bad()
		}
		out := make([]any, len(r))
		for i, e := range r {
			c, err := canon(e, t.Fields[i].Type)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return bad()
}
