package cdcformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Format is the name of a CDC envelope format, as the cdc_format field and
// Paimon's value.format option spell it.
type Format string

// The formats Decode reads.
const (
	Debezium Format = "debezium-json"
	Canal    Format = "canal-json"
	Maxwell  Format = "maxwell-json"
	Ogg      Format = "ogg-json"
)

var formats = [...]Format{Debezium, Canal, Maxwell, Ogg}

// Formats returns the valid formats, in the order errors name them.
func Formats() []Format { return append([]Format(nil), formats[:]...) }

// ParseFormat returns the format named s (exact spelling); any other name is
// an error listing the valid ones.
func ParseFormat(s string) (Format, error) {
	names := make([]string, len(formats))
	for i, f := range formats {
		if string(f) == s {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", errors.New("unknown CDC format " + strconv.Quote(s) + ": want one of " + strings.Join(names, ", "))
}

// Change is one row of a change event.
type Change struct {
	// Kind is kv.Insert or kv.Delete: Paimon's parsers turn an update into a
	// -D of the old row and a +I of the new one (see the package doc), so
	// UpdateBefore and UpdateAfter never appear.
	Kind kv.RowKind
	// Row maps column names to values in a form rowconv.Converter.Convert
	// accepts for the column's type (see the package doc). It is a fresh map,
	// safe to modify.
	Row map[string]any
}

// Event is what one message holds.
type Event struct {
	// Changes in order; empty for a tombstone (empty message or null) and for
	// a schema-change event (DDL set).
	Changes []Change
	// Database and Table as the envelope names them ("" when it does not):
	// Debezium source.db / source.table, Canal and Maxwell database / table,
	// OGG table split at its first "." into database and table.
	Database, Table string
	// PrimaryKeys as the envelope names them: Debezium payload "pkNames" (the
	// field Paimon reads; Debezium's own key columns are in the Kafka record
	// key, see DebeziumKeyFields), Canal pkNames, Maxwell
	// primary_key_columns, OGG primary_keys. Nil otherwise.
	PrimaryKeys []string
	// Fields are the column types when the envelope carries them (Debezium
	// with a schema, Canal with mysqlType), in envelope order, mapped as
	// Paimon maps them (debezium_types.go, mysql_types.go); nil otherwise.
	// All are nullable; ID is the position.
	Fields []types.DataField
	// DDL is the statement of a Canal or Maxwell schema-change event (which
	// has no changes).
	DDL string
}

// Decode decodes one message of format f. JSON numbers are kept exact
// (json.Number). Errors are *EnvelopeError values wrapping
// ErrInvalidEnvelope; Decode never panics, whatever the input.
func Decode(f Format, data []byte) (Event, error) {
	if !validFormat(f) {
		_, err := ParseFormat(string(f))
		return Event{}, err
	}
	return decodeBytes(f, data, nil)
}

// Decoder decodes messages of one format like Decode, and keeps the parsed
// schema of the last Debezium message for the next one: with Kafka
// Connect's schemas.enable, the schema is most of each message and repeats.
// It is safe for concurrent use; use one per stream of messages (a table),
// as a stream of alternating schemas gains nothing.
type Decoder struct {
	format  Format
	schemas schemaCache
}

// NewDecoder returns a decoder for format f; an unknown format is an error
// listing the valid ones.
func NewDecoder(f Format) (*Decoder, error) {
	if !validFormat(f) {
		_, err := ParseFormat(string(f))
		return nil, err
	}
	return &Decoder{format: f}, nil
}

// Decode decodes one message: the same Event as the function Decode, and an
// error for the same messages (for a malformed schema, its text may name
// "schema" where Decode's names the whole message).
func (d *Decoder) Decode(data []byte) (Event, error) {
	return decodeBytes(d.format, data, &d.schemas)
}

func decodeBytes(f Format, data []byte, cache *schemaCache) (Event, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return Event{}, nil
	}
	// The cached-schema path does not parse the schema it has seen
	// before, so it checks the whole message first: it must refuse what
	// Decode refuses.
	if f == Debezium && cache != nil && json.Valid(trimmed) {
		if msg, ok := splitDebezium(trimmed); ok {
			return decodeDebezium(msg, cache)
		}
	}
	v, err := parseJSON(trimmed)
	if err != nil {
		return Event{}, envErr(f, "", "not valid JSON: %v", err)
	}
	var order []string
	if f == Canal {
		order = objectKeyOrder(trimmed, "mysqlType")
	}
	return decodeValue(f, v, order)
}

// parseJSON parses exactly one JSON value, numbers as json.Number.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the top-level value")
	}
	return v, nil
}

// DecodeValue decodes an already parsed message (a map[string]any, as
// Benthos' AsStructured returns, with numbers as json.Number or float64)
// like Decode; nil is a tombstone. It does not modify v. A Go map has no key
// order, so Canal's Fields come sorted by name here; Decode keeps the
// envelope's order.
func DecodeValue(f Format, v any) (Event, error) {
	if !validFormat(f) {
		_, err := ParseFormat(string(f))
		return Event{}, err
	}
	return decodeValue(f, v, nil)
}

func validFormat(f Format) bool {
	for _, g := range formats {
		if f == g {
			return true
		}
	}
	return false
}

func decodeValue(f Format, v any, canalOrder []string) (Event, error) {
	if v == nil {
		return Event{}, nil
	}
	root, ok := v.(map[string]any)
	if !ok {
		return Event{}, envErr(f, "", "not a JSON object but %s", jsonType(v))
	}
	switch f {
	case Debezium:
		return decodeDebezium(root, nil)
	case Canal:
		return decodeCanal(root, canalOrder)
	case Maxwell:
		return decodeMaxwell(root)
	default:
		return decodeOgg(root)
	}
}

// ---- JSON helpers shared by the formats ----

// field returns o[key], with ok false when it is missing or null (Paimon's
// JsonSerdeUtil.isNull).
func field(o map[string]any, key string) (any, bool) {
	v, ok := o[key]
	return v, ok && v != nil
}

// asText is Jackson's JsonNode.asText for scalars; containers give "".
func asText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return ""
}

// textField reads an optional text field, "" when missing or null.
func textField(o map[string]any, key string) string {
	v, _ := field(o, key)
	return asText(v)
}

// requiredText reads the operation field: missing, null or not a scalar is
// an error naming path.
func requiredText(f Format, o map[string]any, key, path string) (string, error) {
	v, ok := field(o, key)
	if !ok {
		return "", envErr(f, path, "missing")
	}
	switch v.(type) {
	case map[string]any, []any:
		return "", envErr(f, path, "not a string but %s", jsonType(v))
	}
	return asText(v), nil
}

// requiredObject reads a row image; when is the condition that makes it
// required, for the message ("" when always required).
func requiredObject(f Format, o map[string]any, key, path, when string) (map[string]any, error) {
	v, ok := field(o, key)
	if !ok {
		if when != "" {
			return nil, envErr(f, path, "missing (required when %s)", when)
		}
		return nil, envErr(f, path, "missing")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, envErr(f, path, "not an object but %s", jsonType(v))
	}
	return m, nil
}

// stringList reads an optional array of names (pkNames and friends).
func stringList(f Format, o map[string]any, key, path string) ([]string, error) {
	v, ok := field(o, key)
	if !ok {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, envErr(f, path, "not an array but %s", jsonType(v))
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		switch e.(type) {
		case string, json.Number:
		default:
			return nil, envErr(f, path+"["+strconv.Itoa(i)+"]", "not a string but %s", jsonType(e))
		}
		out = append(out, asText(e))
	}
	return out, nil
}

// copyRow returns a shallow copy of a row image.
func copyRow(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// mergeOld is AbstractJsonRecordParser.mergeOldRecord: a copy of data with
// the fields of old laid over it.
func mergeOld(data, old map[string]any) map[string]any {
	out := make(map[string]any, len(data)+len(old))
	for k, v := range data {
		out[k] = v
	}
	for k, v := range old {
		out[k] = v
	}
	return out
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "a Go value"
}

// objectKeyOrder returns the keys, in document order, of the object that is
// the top-level field key of the JSON object data (of data itself when key
// is ""); nil when there is none. Go maps drop the order that Canal's
// mysqlType gives the columns in.
func objectKeyOrder(data []byte, key string) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	if key == "" {
		return objectKeys(dec)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		if name, _ := t.(string); name == key {
			if t, err := dec.Token(); err != nil || t != json.Delim('{') {
				return nil
			}
			return objectKeys(dec)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return nil
}

// objectKeys reads the rest of an object whose '{' dec has just read and
// returns its keys in order; nil on a syntax error.
func objectKeys(dec *json.Decoder) []string {
	keys := []string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return keys
}
