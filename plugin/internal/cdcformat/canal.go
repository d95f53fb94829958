package cdcformat

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// decodeCanal mirrors CanalRecordParser.extractRecords. "isDdl": true is a
// schema change: no changes, DDL from "sql". Otherwise "data" is an array of
// rows and "type" INSERT / ROW (+I each), DELETE (-D each) or UPDATE (per
// row, -D of old[i] merged over data[i], then +I of data[i]; "old" must have
// an element for each row). Operation names are upper case, as Canal sends
// them.
//
// With "mysqlType", each row has exactly the columns mysqlType names, in
// that order in Fields (types by mysqlColumnType), a column missing from the
// row being null. Values are Canal's text, with these conversions so that
// rowconv reads them as Paimon's TypeUtils.castFromCdcValueString does:
//
//   - ENUM indexes ("1") become the label, SET bitmasks ("3") the array of
//     labels (["a","b"]), as CanalFieldParser; text that is not a number is
//     taken as the label(s) already (Paimon fails on it).
//   - Columns typed BOOLEAN (BOOL, BOOLEAN, TINYINT(1), BIT(1)) take
//     "1"/"0" (and "t"/"f", "y"/"n", "yes"/"no", as BinaryStringUtils.toBoolean)
//     as true/false.
//   - BINARY, VARBINARY and BLOB text, which Canal writes as ISO-8859-1, is
//     re-encoded as base64 of those bytes (Paimon takes the UTF-8 bytes of
//     the text, which changes every byte over 0x7F); text with characters
//     over U+00FF is taken as UTF-8.
//   - Geometry values are kept as sent (Paimon renders GeoJSON); BIT(n > 1)
//     values are kept as sent.
//
// Without mysqlType, rows are kept as sent and Fields is nil.
func decodeCanal(root map[string]any, order []string) (Event, error) {
	const f = Canal
	ev := Event{Database: textField(root, "database"), Table: textField(root, "table")}
	var err error
	if ev.PrimaryKeys, err = stringList(f, root, "pkNames", "pkNames"); err != nil {
		return Event{}, err
	}
	if isDDL, _ := field(root, "isDdl"); jacksonAsBoolean(isDDL) {
		ev.DDL = textField(root, "sql")
		return ev, nil
	}
	dv, ok := field(root, "data")
	if !ok {
		return Event{}, envErr(f, "data", "missing")
	}
	data, ok := dv.([]any)
	if !ok {
		return Event{}, envErr(f, "data", "not an array but %s", jsonType(dv))
	}
	op, err := requiredText(f, root, "type", "type")
	if err != nil {
		return Event{}, err
	}
	var old []any
	switch op {
	case "INSERT", "ROW", "DELETE":
	case "UPDATE":
		ov, ok := field(root, "old")
		if !ok {
			return Event{}, envErr(f, "old", `missing (required when "type" is "UPDATE")`)
		}
		if old, ok = ov.([]any); !ok {
			return Event{}, envErr(f, "old", "not an array but %s", jsonType(ov))
		}
		if len(old) < len(data) {
			return Event{}, envErr(f, "old", `has %d rows, fewer than the %d of "data"`, len(old), len(data))
		}
	default:
		return Event{}, envErr(f, "type", "unknown operation %q (want INSERT, UPDATE, DELETE or ROW)", op)
	}
	cols, err := canalColumns(root, order)
	if err != nil {
		return Event{}, err
	}
	if cols != nil {
		ev.Fields = make([]types.DataField, len(cols))
		for i, c := range cols {
			ev.Fields[i] = types.DataField{ID: i, Name: c.name, Type: c.typ}
		}
	}
	for i, e := range data {
		path := "data[" + strconv.Itoa(i) + "]"
		row, ok := e.(map[string]any)
		if !ok {
			return Event{}, envErr(f, path, "not an object but %s", jsonType(e))
		}
		after, err := canalRow(row, cols, path)
		if err != nil {
			return Event{}, err
		}
		switch op {
		case "INSERT", "ROW":
			ev.Changes = append(ev.Changes, Change{Kind: kv.Insert, Row: after})
		case "DELETE":
			ev.Changes = append(ev.Changes, Change{Kind: kv.Delete, Row: after})
		case "UPDATE":
			opath := "old[" + strconv.Itoa(i) + "]"
			var o map[string]any
			if old[i] != nil {
				if o, ok = old[i].(map[string]any); !ok {
					return Event{}, envErr(f, opath, "not an object but %s", jsonType(old[i]))
				}
			}
			before, err := canalRow(mergeOld(row, o), cols, opath)
			if err != nil {
				return Event{}, err
			}
			ev.Changes = append(ev.Changes, Change{Kind: kv.Delete, Row: before}, Change{Kind: kv.Insert, Row: after})
		}
	}
	return ev, nil
}

// jacksonAsBoolean is JsonNode.asBoolean: true, "true" (any case, trimmed)
// or a non-zero number.
func jacksonAsBoolean(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return strings.EqualFold(strings.TrimSpace(x), "true")
	case json.Number:
		fl, err := x.Float64()
		return err == nil && fl != 0
	case float64:
		return x != 0
	}
	return false
}

// canalColumn is one column of mysqlType.
type canalColumn struct {
	name      string
	mysqlType string // as sent: "enum('a','b')"
	short     string // upper case, without the bracket: "ENUM", "INT UNSIGNED"
	typ       types.DataType
}

// canalColumns reads mysqlType in order (the document order when Decode
// found it, else sorted by name); nil when mysqlType is missing or null.
func canalColumns(root map[string]any, order []string) ([]canalColumn, error) {
	const f = Canal
	mv, ok := field(root, "mysqlType")
	if !ok {
		return nil, nil
	}
	m, ok := mv.(map[string]any)
	if !ok {
		return nil, envErr(f, "mysqlType", "not an object but %s", jsonType(mv))
	}
	names := make([]string, 0, len(m))
	seen := make(map[string]bool, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
	}
	if len(names) != len(m) {
		names = names[:0]
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
	}
	cols := make([]canalColumn, len(names))
	for i, name := range names {
		v := m[name]
		switch v.(type) {
		case string, json.Number:
		default:
			return nil, envErr(f, "mysqlType."+name, "not a string but %s", jsonType(v))
		}
		t := asText(v)
		short, typ := mysqlColumnType(t)
		cols[i] = canalColumn{name: name, mysqlType: t, short: short, typ: typ}
	}
	return cols, nil
}

// canalRow builds one row: as sent without mysqlType, else the mysqlType
// columns with their values converted.
func canalRow(row map[string]any, cols []canalColumn, path string) (map[string]any, error) {
	if cols == nil {
		return copyRow(row), nil
	}
	out := make(map[string]any, len(cols))
	for _, c := range cols {
		v, err := c.value(row[c.name])
		if err != nil {
			return nil, envErr(Canal, path+"."+c.name, "%s", err)
		}
		out[c.name] = v
	}
	return out, nil
}

type reasonError string

func (r reasonError) Error() string { return string(r) }

// value converts one Canal value of the column (see decodeCanal).
func (c canalColumn) value(v any) (any, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		// Canal sends text; a producer that sends numbers gets the same
		// conversions, Paimon taking every value's toString.
		s = string(x)
	default:
		return v, nil
	}
	switch {
	case c.short == "ENUM":
		idx, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return v, nil
		}
		labels := mysqlLabels(c.mysqlType, len("enum('"))
		if idx < 1 || idx > len(labels) {
			return nil, reasonError("enum index " + s + " out of range of " + c.mysqlType)
		}
		return labels[idx-1], nil
	case c.short == "SET":
		bits, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			if s == "" {
				return []any{}, nil
			}
			var out []any
			for _, l := range strings.Split(s, ",") {
				out = append(out, l)
			}
			return out, nil
		}
		labels := mysqlLabels(c.mysqlType, len("set('"))
		out := []any{}
		for i := 0; bits != 0; i, bits = i+1, bits>>1 {
			if bits&1 == 0 {
				continue
			}
			if i >= len(labels) {
				return nil, reasonError("set bits " + s + " out of range of " + c.mysqlType)
			}
			out = append(out, labels[i])
		}
		return out, nil
	case c.typ.Kind == types.KindBoolean:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "1", "t", "true", "y", "yes":
			return true, nil
		case "0", "f", "false", "n", "no":
			return false, nil
		}
		return v, nil
	case (c.typ.Kind == types.KindVarBinary || c.typ.Kind == types.KindBinary) && !mysqlIsBit(c.short):
		return base64.StdEncoding.EncodeToString(latin1Bytes(s)), nil
	}
	return v, nil
}

// mysqlLabels splits "enum('x','y')" (skip is the length of "enum('") into
// its labels, as CanalFieldParser.extractEnumValueByIndex.
func mysqlLabels(mysqlType string, skip int) []string {
	if len(mysqlType) < skip+2 {
		return nil
	}
	return labelSeparator.Split(mysqlType[skip:len(mysqlType)-2], -1)
}

var labelSeparator = regexp.MustCompile(`'\s*,\s*'`)

// latin1Bytes returns the ISO-8859-1 bytes of s, or its UTF-8 bytes if it
// has characters beyond U+00FF.
func latin1Bytes(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			return []byte(s)
		}
		out = append(out, byte(r))
	}
	return out
}
