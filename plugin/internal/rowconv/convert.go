package rowconv

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Message to row conversion.
//
// A message is a JSON object (msg.AsStructured); its fields are matched to the
// table's columns by exact, case-sensitive name. Each value is converted to
// the Go value lakecore/types defines for the column's type. The rules, which
// the output's documentation repeats for users (see conversionDocs):
//
//   - null, or a missing field, is NULL; for a NOT NULL column (or a NOT NULL
//     element, map key/value or nested field) it is an error.
//   - Integers (TINYINT, SMALLINT, INT, BIGINT) take JSON numbers and numeric
//     strings whose value is a whole number in the type's range ("1e3" and
//     "2.0" are whole; "2.5" is not). Numbers arrive from Benthos' JSON parser
//     as json.Number text, so big integers are exact. A float64 (from a
//     Bloblang computation, or with BENTHOS_USE_NUMBER=false) is accepted only
//     up to ±2^53, beyond which it may already have lost digits.
//   - FLOAT and DOUBLE take numbers, numeric strings and the strings "NaN",
//     "Infinity", "+Infinity" and "-Infinity" (Java's spelling; JSON has no
//     literal for them). A finite value too large for the type is an error.
//   - DECIMAL(p, s) takes numbers and numeric strings, converted from their
//     text without going through binary floating point, so 0.1 is exactly 0.1;
//     a float64 is first written as its shortest decimal text. A value needing
//     more than s fraction digits, or more than p digits in all, is an error:
//     nothing is rounded.
//   - BOOLEAN takes true/false and the strings "true"/"false" (any case).
//   - CHAR/VARCHAR/STRING take strings (valid UTF-8; CHAR(n)/VARCHAR(n) at most
//     n characters, no padding added). Other JSON values are stored as their
//     compact JSON text: numbers as written, true/false, objects (keys sorted)
//     and arrays. This keeps columns added by schema_evolution for object or
//     array fields writable.
//   - BINARY/VARBINARY/BYTES take base64 strings (standard or URL alphabet,
//     padded or not) and raw bytes; BINARY(n)/VARBINARY(n) at most n bytes.
//   - DATE takes "YYYY-MM-DD" or a whole number of days since 1970-01-01.
//   - TIME(p) takes "HH:MM[:SS[.fraction]]" or a whole number of milliseconds
//     of the day; it holds milliseconds, truncated to p fraction digits.
//   - TIMESTAMP(p) and TIMESTAMP(p) WITH LOCAL TIME ZONE take RFC 3339 text
//     ("T", "t" or a space between date and time; 0 to 9 fraction digits; an
//     offset Z or ±HH:MM, or none; a date alone is midnight) or an epoch number
//     in timestamp_unit (s, ms, us or ns; fractions allowed). Text with an
//     offset is converted to UTC; text without one is read as UTC. A TIMESTAMP
//     therefore holds the UTC wall clock of the instant, an LTZ the instant
//     itself: the same number, rendered differently by the input (without or
//     with "Z"). Digits beyond p are truncated. Years 0000-9999 only.
//   - ARRAY<T> takes a JSON array.
//   - MAP<K, V> takes a JSON object (keys converted from their text to K; keys
//     are sorted), an array of [key, value] pairs, or an array of
//     {"key": k, "value": v} objects. Duplicate keys are an error.
//   - MULTISET<T> takes an array of elements (each occurrence counts one) or
//     the map forms above with positive INT counts as values.
//   - ROW<...> takes a JSON object by field name or an array by position.
//
// time.Time values (from Bloblang's ts_parse and friends) are accepted for
// DATE (UTC day), TIME (UTC clock), TIMESTAMP (UTC wall clock) and LTZ
// (instant).

// UnknownFields says what to do with a message field that is not a column.
type UnknownFields string

// The values of unknown_fields.
const (
	UnknownFieldsError  UnknownFields = "error"
	UnknownFieldsIgnore UnknownFields = "ignore"
)

// TimeUnit is the unit of epoch numbers given for TIMESTAMP columns.
type TimeUnit string

// The values of timestamp_unit.
const (
	UnitSeconds TimeUnit = "s"
	UnitMillis  TimeUnit = "ms"
	UnitMicros  TimeUnit = "us"
	UnitNanos   TimeUnit = "ns"
)

// nanosExp is the power of ten that turns the unit into nanoseconds.
func (u TimeUnit) nanosExp() (int, bool) {
	switch u {
	case UnitSeconds:
		return 9, true
	case UnitMillis, "":
		return 6, true
	case UnitMicros:
		return 3, true
	case UnitNanos:
		return 0, true
	}
	return 0, false
}

// ConvertOptions are the conversion settings of the output.
type ConvertOptions struct {
	// UnknownFields: UnknownFieldsError (also the zero value) or
	// UnknownFieldsIgnore. It applies to nested ROW fields always, and to
	// top-level fields when SchemaEvolution is off.
	UnknownFields UnknownFields
	// SchemaEvolution reports unknown top-level fields with a non-null value
	// as new columns instead of applying UnknownFields.
	SchemaEvolution bool
	// TimestampUnit of epoch numbers for TIMESTAMP and LTZ columns; the zero
	// value is milliseconds.
	TimestampUnit TimeUnit
}

// NewColumn is a column that schema evolution should add for an unknown
// top-level field: always nullable, typed by InferType from the field's
// value.
type NewColumn struct {
	Name string
	Type types.DataType
}

// Converter turns structured messages into rows of one table schema. It is
// immutable and safe for concurrent use.
type Converter struct {
	fields []types.DataField
	opts   ConvertOptions
	unitNs int
	// index maps a column name to its position, for convertRaw.
	index map[string]int
}

// NewConverter returns a converter for rows of fields (the table's schema
// fields in order).
func NewConverter(fields []types.DataField, o ConvertOptions) (*Converter, error) {
	if o.UnknownFields == "" {
		o.UnknownFields = UnknownFieldsError
	}
	if o.UnknownFields != UnknownFieldsError && o.UnknownFields != UnknownFieldsIgnore {
		return nil, fmt.Errorf("new converter: unknown_fields %q is not error or ignore", o.UnknownFields)
	}
	exp, ok := o.TimestampUnit.nanosExp()
	if !ok {
		return nil, fmt.Errorf("new converter: timestamp_unit %q is not s, ms, us or ns", o.TimestampUnit)
	}
	index := make(map[string]int, len(fields))
	for i, f := range fields {
		if _, dup := index[f.Name]; dup {
			return nil, fmt.Errorf("new converter: duplicate column %q", f.Name)
		}
		index[f.Name] = i
	}
	return &Converter{fields: fields, opts: o, unitNs: exp, index: index}, nil
}

// Fields returns the schema fields the converter was built for.
func (c *Converter) Fields() []types.DataField { return c.fields }

// ConvertMessage converts the message's structured content (parsing its bytes
// as JSON if needed) with Convert. A message that is not JSON gives a
// *ConvertError wrapping ErrNotObject; one whose bytes are not valid UTF-8
// where a converted string came from, a *ConvertError wrapping
// ErrInvalidValue (see utf8.go).
//
// A message that holds only bytes (no structured value a processor set or
// a parse cached) is converted from its bytes in one pass when it can be
// (convertRaw); the result is the same.
func (c *Converter) ConvertMessage(msg *service.Message) ([]any, []NewColumn, error) {
	return c.ConvertMessageBoxed(msg, nil)
}

// ConvertMessageBoxed is ConvertMessage with the row of a message converted
// from its bytes, and the row's values, boxed from slab (nil: each its own
// allocation): many rows then cost a few allocations instead of one per
// value. The slab is not safe for concurrent use; the rows keep its arrays
// alive.
func (c *Converter) ConvertMessageBoxed(msg *service.Message, slab *boxes.Slab) ([]any, []NewColumn, error) {
	if msg.HasBytes() && !msg.HasStructured() {
		if raw, err := msg.AsBytes(); err == nil {
			if row, ok := c.convertRaw(raw, slab); ok {
				return row, nil, nil
			}
		}
	}
	return c.convertStructured(msg)
}

// convertStructured is ConvertMessage by way of the message's structured
// value: the path every message took before convertRaw, and the one that
// gives the errors.
func (c *Converter) convertStructured(msg *service.Message) ([]any, []NewColumn, error) {
	v, err := msg.AsStructured()
	if err != nil {
		return nil, nil, &ConvertError{Msg: "message is not valid JSON: " + err.Error(), Err: ErrNotObject}
	}
	row, added, err := c.Convert(v)
	if err == nil && row != nil {
		if err := c.checkUTF8(msg, row); err != nil {
			return nil, nil, err
		}
	}
	return row, added, err
}

// Convert converts one structured message (a map[string]any, as
// msg.AsStructured returns for a JSON object) into a row: one Go value per
// schema field, in schema order.
//
// With SchemaEvolution on, unknown top-level fields with non-null values are
// returned as new columns, sorted by name, and are not in the row; the caller
// adds them to the schema and converts the message again with a converter
// for the new schema. Unknown fields whose value is null add nothing (their
// type is unknown). Errors are *ConvertError values; the row is nil then.
func (c *Converter) Convert(v any) ([]any, []NewColumn, error) {
	obj, ok := asObject(v)
	if !ok {
		return nil, nil, &ConvertError{Msg: "message is not a JSON object but " + describe(v), Err: ErrNotObject}
	}
	row := make([]any, len(c.fields))
	found := 0
	for i := range c.fields {
		f := &c.fields[i]
		raw, present := obj[f.Name]
		if present {
			found++
		}
		val, err := c.value(f.Type, raw, present)
		if err != nil {
			return nil, nil, prefixPath(err, f.Name)
		}
		row[i] = val
	}
	if found == len(obj) {
		return row, nil, nil
	}
	var added []NewColumn
	for _, name := range c.unknownNames(obj, c.fields) {
		raw := obj[name]
		if c.opts.SchemaEvolution {
			if raw == nil {
				continue
			}
			if name == "" {
				return nil, nil, &ConvertError{Msg: "cannot add a column with an empty name", Err: ErrUnknownField}
			}
			t, _ := InferType(raw)
			added = append(added, NewColumn{Name: name, Type: t})
			continue
		}
		if c.opts.UnknownFields == UnknownFieldsError {
			return nil, nil, &ConvertError{Path: name, Msg: "not a column of the table (unknown_fields: error)", Err: ErrUnknownField}
		}
	}
	return row, added, nil
}

// unknownNames returns the keys of obj that are not field names, sorted.
func (c *Converter) unknownNames(obj map[string]any, fields []types.DataField) []string {
	var names []string
	for k := range obj {
		if types.FieldByName(fields, k) < 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

// ConvertValue converts one value to the Go value of type t with the rules of
// Convert. Errors are *ConvertError values without a path. It is what the
// input uses to type its partition_filter values.
func ConvertValue(t types.DataType, v any, o ConvertOptions) (any, error) {
	c, err := NewConverter(nil, o)
	if err != nil {
		return nil, err
	}
	return c.value(t, v, true)
}

// value converts raw to type t; present is false for a missing field.
func (c *Converter) value(t types.DataType, raw any, present bool) (any, error) {
	if raw == nil {
		if !t.Nullable {
			msg := "cannot convert null to " + t.String()
			if !present {
				msg = "missing, and the column is " + t.String()
			}
			return nil, &ConvertError{Msg: msg, Err: ErrNotNull}
		}
		return nil, nil
	}
	switch t.Kind {
	case types.KindBoolean:
		return convBool(t, raw)
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return convInt(t, raw)
	case types.KindFloat, types.KindDouble:
		return convFloat(t, raw)
	case types.KindDecimal:
		return convDecimal(t, raw)
	case types.KindChar, types.KindVarChar:
		return convString(t, raw)
	case types.KindBinary, types.KindVarBinary:
		return convBytes(t, raw)
	case types.KindDate:
		return convDate(t, raw)
	case types.KindTime:
		return convTime(t, raw)
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		return c.convTimestamp(t, raw)
	case types.KindArray:
		return c.convArray(t, raw)
	case types.KindMap:
		return c.convMap(t, raw)
	case types.KindMultiset:
		return c.convMultiset(t, raw)
	case types.KindRow:
		return c.convRow(t, raw)
	}
	return nil, &ConvertError{Msg: "unsupported column type " + t.String(), Err: ErrInvalidValue}
}

// invalid builds the standard conversion error.
func invalid(raw any, t types.DataType, reason string) error {
	msg := "cannot convert " + describe(raw) + " to " + t.String()
	if reason != "" {
		msg += ": " + reason
	}
	return &ConvertError{Msg: msg, Err: ErrInvalidValue}
}

// ---- scalars ----

func convBool(t types.DataType, raw any) (any, error) {
	switch v := raw.(type) {
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(trimSpace(v)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, invalid(raw, t, `expected true or false`)
	}
	return nil, invalid(raw, t, "")
}

var intRanges = map[types.Kind][2]int64{
	types.KindTinyInt:  {math.MinInt8, math.MaxInt8},
	types.KindSmallInt: {math.MinInt16, math.MaxInt16},
	types.KindInt:      {math.MinInt32, math.MaxInt32},
	types.KindBigInt:   {math.MinInt64, math.MaxInt64},
}

// maxExactFloat is 2^53: every integer up to it is exact in a float64.
const maxExactFloat = 1 << 53

func convInt(t types.DataType, raw any) (any, error) {
	n, reason := wholeNumber(raw)
	if reason != "" {
		return nil, invalid(raw, t, reason)
	}
	r := intRanges[t.Kind]
	if n < r[0] || n > r[1] {
		return nil, invalid(raw, t, fmt.Sprintf("out of range [%d, %d]", r[0], r[1]))
	}
	switch t.Kind {
	case types.KindTinyInt:
		return int8(n), nil
	case types.KindSmallInt:
		return int16(n), nil
	case types.KindInt:
		return int32(n), nil
	}
	return n, nil
}

// wholeNumber reads an int64 from a number or numeric string; reason is
// non-empty when it cannot.
func wholeNumber(raw any) (int64, string) {
	switch v := raw.(type) {
	case json.Number:
		return wholeFromText(string(v))
	case string:
		return wholeFromText(trimSpace(v))
	case float64:
		return wholeFromFloat(v)
	case float32:
		return wholeFromFloat(float64(v))
	case bool, nil:
		return 0, "not a number"
	}
	if i, ok := types.SignedInt(raw); ok {
		return i, ""
	}
	if u, ok := types.UnsignedInt(raw); ok {
		if u > math.MaxInt64 {
			return 0, "out of range of BIGINT"
		}
		return int64(u), ""
	}
	return 0, "not a number"
}

func wholeFromText(s string) (int64, string) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, ""
	}
	d, err := parseDecText(s)
	if err != nil {
		return 0, err.Error()
	}
	if !d.isInt() {
		return 0, "not a whole number"
	}
	digits, _, overflow := d.scaled(0, 19)
	if overflow {
		return 0, "out of range of BIGINT"
	}
	if d.neg {
		digits = "-" + digits
	}
	i, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, "out of range of BIGINT"
	}
	return i, ""
}

func wholeFromFloat(f float64) (int64, string) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, "not a finite number"
	case f != math.Trunc(f):
		return 0, "not a whole number"
	case f > maxExactFloat || f < -maxExactFloat:
		return 0, "a floating-point number beyond ±2^53 may have lost digits; send it as a JSON number or a string"
	}
	return int64(f), ""
}

func convFloat(t types.DataType, raw any) (any, error) {
	bits := 64
	if t.Kind == types.KindFloat {
		bits = 32
	}
	var f float64
	switch v := raw.(type) {
	case json.Number:
		s := string(v)
		if !validNumberText(s) {
			return nil, invalid(raw, t, "not a number")
		}
		var err error
		if f, err = strconv.ParseFloat(s, bits); err != nil {
			return nil, invalid(raw, t, "out of range")
		}
	case string:
		s := trimSpace(v)
		switch s {
		case "NaN":
			f = math.NaN()
		case "Infinity", "+Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		default:
			if !validNumberText(s) {
				return nil, invalid(raw, t, `not a number (or "NaN", "Infinity", "-Infinity")`)
			}
			var err error
			if f, err = strconv.ParseFloat(s, bits); err != nil {
				return nil, invalid(raw, t, "out of range")
			}
		}
	case float64:
		f = v
	case float32:
		f = float64(v)
	default:
		i, ok := types.SignedInt(raw)
		if !ok {
			u, ok := types.UnsignedInt(raw)
			if !ok {
				return nil, invalid(raw, t, "")
			}
			f = float64(u)
		} else {
			f = float64(i)
		}
	}
	if bits == 32 {
		f32 := float32(f)
		if math.IsInf(float64(f32), 0) && !math.IsInf(f, 0) {
			return nil, invalid(raw, t, "out of range")
		}
		return f32, nil
	}
	return f, nil
}

func convDecimal(t types.DataType, raw any) (any, error) {
	var s string
	switch v := raw.(type) {
	case json.Number:
		s = string(v)
	case string:
		s = trimSpace(v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, invalid(raw, t, "not a finite number")
		}
		s = strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, invalid(raw, t, "not a finite number")
		}
		s = strconv.FormatFloat(float64(v), 'g', -1, 32)
	default:
		if i, ok := types.SignedInt(raw); ok {
			s = strconv.FormatInt(i, 10)
		} else if u, ok := types.UnsignedInt(raw); ok {
			s = strconv.FormatUint(u, 10)
		} else {
			return nil, invalid(raw, t, "")
		}
	}
	v, reason := decimalFromText(t, s, nil)
	if reason != "" {
		return nil, invalid(raw, t, reason)
	}
	return v, nil
}

// decimalFromText converts numeric text to a types.Decimal of t, boxed
// from slab (nil: on the heap) when its unscaled value fits an int64;
// reason says why it cannot.
func decimalFromText(t types.DataType, s string, slab *boxes.Slab) (v any, reason string) {
	d, err := parseDecText(s)
	if err != nil {
		return nil, "not a decimal number"
	}
	var n int64
	if shift := d.exp + t.Scale; shift >= 0 && len(d.digits)+shift <= min(18, t.Precision) {
		// value × 10^scale is the digits followed by shift zeros, of at
		// most 18 digits: scaled's exact result, without its string.
		n, _ = strconv.ParseInt(d.digits, 10, 64) // "" for zero gives 0
		for range shift {
			n *= 10
		}
	} else {
		digits, exact, overflow := d.scaled(t.Scale, t.Precision)
		if !exact {
			return nil, fmt.Sprintf("more than %d fraction digits (values are never rounded)", t.Scale)
		}
		if overflow {
			return nil, fmt.Sprintf("more than %d digits", t.Precision)
		}
		if len(digits) > 18 {
			u, _ := new(big.Int).SetString(digits, 10)
			if d.neg {
				u.Neg(u)
			}
			return types.Decimal{Unscaled: u, Scale: t.Scale}, ""
		}
		n, _ = strconv.ParseInt(digits, 10, 64)
	}
	if d.neg {
		n = -n
	}
	return slab.Decimal(n, t.Scale), ""
}

func convString(t types.DataType, raw any) (any, error) {
	var s string
	switch v := raw.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	case json.Number:
		s = string(v)
	case bool:
		s = strconv.FormatBool(v)
	case time.Time:
		s = v.Format(time.RFC3339Nano)
	default:
		b, err := compactJSON(raw)
		if err != nil {
			return nil, invalid(raw, t, err.Error())
		}
		s = string(b)
	}
	if !utf8.ValidString(s) {
		return nil, invalid(raw, t, "not valid UTF-8")
	}
	if t.Length < types.MaxLength {
		if n := utf8.RuneCountInString(s); n > t.Length {
			return nil, invalid(raw, t, fmt.Sprintf("%d characters, more than %d", n, t.Length))
		}
	}
	return s, nil
}

// compactJSON writes v as compact JSON with map keys sorted and without
// HTML escaping.
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

var base64Encodings = []*base64.Encoding{
	base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding,
}

func convBytes(t types.DataType, raw any) (any, error) {
	var b []byte
	switch v := raw.(type) {
	case []byte:
		b = v
	case string:
		var err error
		for _, enc := range base64Encodings {
			if b, err = enc.DecodeString(v); err == nil {
				break
			}
		}
		if err != nil {
			return nil, invalid(raw, t, "not base64")
		}
	default:
		return nil, invalid(raw, t, "")
	}
	if t.Length < types.MaxLength && len(b) > t.Length {
		return nil, invalid(raw, t, fmt.Sprintf("%d bytes, more than %d", len(b), t.Length))
	}
	return b, nil
}

func convDate(t types.DataType, raw any) (any, error) {
	switch v := raw.(type) {
	case string:
		s := trimSpace(v)
		if len(s) == 10 && s[4] == '-' {
			y, m, d, err := parseDatePart(s)
			if err != nil {
				return nil, invalid(raw, t, err.Error())
			}
			return types.Date(types.EpochDay(y, m, d)), nil
		}
		if _, err := parseDecText(s); err != nil {
			return nil, invalid(raw, t, "expected YYYY-MM-DD or a number of days since 1970-01-01")
		}
	case time.Time:
		u := v.UTC()
		return types.Date(types.EpochDay(u.Year(), int(u.Month()), u.Day())), nil
	case bool:
		return nil, invalid(raw, t, "")
	}
	n, reason := wholeNumber(raw)
	if reason != "" {
		return nil, invalid(raw, t, reason)
	}
	if n < minEpochDay || n > maxEpochDay {
		return nil, invalid(raw, t, "outside the years 0000-9999")
	}
	return types.Date(n), nil
}

func convTime(t types.DataType, raw any) (any, error) {
	var ms int64
	switch v := raw.(type) {
	case string:
		s := trimSpace(v)
		if len(s) >= 5 && s[2] == ':' {
			var h, mi, sec, nanos int
			n, err := parseClock(s, &h, &mi, &sec, &nanos)
			if err == nil && n != len(s) {
				err = errTimeSyntax
			}
			if err != nil {
				return nil, invalid(raw, t, err.Error())
			}
			ms = int64(h)*3600000 + int64(mi)*60000 + int64(sec)*1000 + int64(nanos/1e6)
			return truncTime(ms, t.Precision), nil
		}
		if _, err := parseDecText(s); err != nil {
			return nil, invalid(raw, t, "expected HH:MM:SS[.fraction] or milliseconds of the day")
		}
	case time.Time:
		u := v.UTC()
		ms = int64(u.Hour())*3600000 + int64(u.Minute())*60000 + int64(u.Second())*1000 + int64(u.Nanosecond()/1e6)
		return truncTime(ms, t.Precision), nil
	case bool:
		return nil, invalid(raw, t, "")
	}
	ms, reason := wholeNumber(raw)
	if reason != "" {
		return nil, invalid(raw, t, reason)
	}
	if ms < 0 || ms >= 86400000 {
		return nil, invalid(raw, t, "milliseconds of the day out of range [0, 86399999]")
	}
	return truncTime(ms, t.Precision), nil
}

func truncTime(ms int64, precision int) types.Time {
	if precision < 3 {
		unit := types.Pow10(3 - precision)
		ms -= ms % unit
	}
	return types.Time(ms)
}

func (c *Converter) convTimestamp(t types.DataType, raw any) (any, error) {
	switch v := raw.(type) {
	case string:
		s := trimSpace(v)
		if isDateText(s) {
			ts, err := timestampFromText(t, s)
			if err != nil {
				return nil, invalid(raw, t, err.Error())
			}
			return ts, nil
		}
		d, err := parseDecText(s)
		if err != nil {
			return nil, invalid(raw, t, "expected RFC 3339 text or an epoch number in "+string(c.unitName()))
		}
		return c.epochTimestamp(raw, t, d)
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return c.epochInt(raw, t, i)
		}
		d, err := parseDecText(string(v))
		if err != nil {
			return nil, invalid(raw, t, "not a number")
		}
		return c.epochTimestamp(raw, t, d)
	case float64, float32:
		f, _ := v.(float64)
		bits := 64
		if f32, ok := v.(float32); ok {
			f, bits = float64(f32), 32
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, invalid(raw, t, "not a finite number")
		}
		d, _ := parseDecText(strconv.FormatFloat(f, 'g', -1, bits))
		return c.epochTimestamp(raw, t, d)
	case time.Time:
		ts := types.TimestampOf(v)
		return checkTimestamp(raw, t, ts.Millis, ts.NanoOfMilli)
	case bool:
		return nil, invalid(raw, t, "")
	}
	if i, ok := types.SignedInt(raw); ok {
		return c.epochInt(raw, t, i)
	}
	if u, ok := types.UnsignedInt(raw); ok {
		if u > math.MaxInt64 {
			return nil, invalid(raw, t, "outside the years 0000-9999")
		}
		return c.epochInt(raw, t, int64(u))
	}
	return nil, invalid(raw, t, "")
}

// isDateText reports whether a (trimmed) string for a TIMESTAMP is read
// as RFC 3339 text rather than as an epoch number.
func isDateText(s string) bool { return len(s) >= 10 && s[4] == '-' }

// errOutsideYears is the reason for an instant outside the years 0000-9999.
var errOutsideYears = errors.New("outside the years 0000-9999")

// timestampFromText converts RFC 3339 text (isDateText) to t.
func timestampFromText(t types.DataType, s string) (types.Timestamp, error) {
	dt, err := parseDateTimeText(s)
	if err != nil {
		return types.Timestamp{}, err
	}
	ms, nom := dt.epochMillis()
	if ms < minEpochMillis || ms > maxEpochMillis {
		return types.Timestamp{}, errOutsideYears
	}
	return truncTimestamp(types.Timestamp{Millis: ms, NanoOfMilli: nom}, t.Precision), nil
}

func (c *Converter) unitName() TimeUnit {
	if c.opts.TimestampUnit == "" {
		return UnitMillis
	}
	return c.opts.TimestampUnit
}

// epochInt is the fast path for whole epoch numbers.
func (c *Converter) epochInt(raw any, t types.DataType, n int64) (any, error) {
	switch c.unitNs {
	case 6:
		return checkTimestamp(raw, t, n, 0)
	case 9:
		if n > maxEpochMillis/1000+1 || n < minEpochMillis/1000-1 {
			return nil, invalid(raw, t, "outside the years 0000-9999")
		}
		return checkTimestamp(raw, t, n*1000, 0)
	case 3:
		ms := types.FloorDiv(n, 1000)
		return checkTimestamp(raw, t, ms, int32(n-ms*1000)*1000)
	default:
		ms := types.FloorDiv(n, 1e6)
		return checkTimestamp(raw, t, ms, int32(n-ms*1e6))
	}
}

var (
	bigMillion = big.NewInt(1e6)
)

// epochTimestamp converts an exact epoch number in the converter's unit;
// digits below a nanosecond are dropped (floor).
func (c *Converter) epochTimestamp(raw any, t types.DataType, d decText) (any, error) {
	nanos, ok := d.bigFloor(c.unitNs, 24)
	if !ok {
		return nil, invalid(raw, t, "outside the years 0000-9999")
	}
	ms, nom := new(big.Int).DivMod(nanos, bigMillion, new(big.Int))
	if !ms.IsInt64() {
		return nil, invalid(raw, t, "outside the years 0000-9999")
	}
	return checkTimestamp(raw, t, ms.Int64(), int32(nom.Int64()))
}

// checkTimestamp range-checks the instant and truncates it to t's precision.
func checkTimestamp(raw any, t types.DataType, ms int64, nanoOfMilli int32) (any, error) {
	if ms < minEpochMillis || ms > maxEpochMillis {
		return nil, invalid(raw, t, "outside the years 0000-9999")
	}
	return truncTimestamp(types.Timestamp{Millis: ms, NanoOfMilli: nanoOfMilli}, t.Precision), nil
}

// truncTimestamp drops the digits beyond precision p (toward the past, which
// is truncation of the written fraction for every instant).
func truncTimestamp(ts types.Timestamp, p int) types.Timestamp {
	switch {
	case p >= 9:
	case p >= 3:
		unit := int32(types.Pow10(9 - p))
		ts.NanoOfMilli -= ts.NanoOfMilli % unit
	default:
		unit := types.Pow10(3 - p)
		ts.NanoOfMilli = 0
		ts.Millis = types.FloorDiv(ts.Millis, unit) * unit
	}
	return ts
}

// ---- nested ----

func (c *Converter) convArray(t types.DataType, raw any) (any, error) {
	arr, ok := asArray(raw)
	if !ok {
		return nil, invalid(raw, t, "")
	}
	out := make([]any, len(arr))
	for i, e := range arr {
		v, err := c.value(*t.Element, e, true)
		if err != nil {
			return nil, prefixPath(err, "["+strconv.Itoa(i)+"]")
		}
		out[i] = v
	}
	return out, nil
}

// entries converts the map forms to parallel key and value slices, checking
// for duplicate keys. valueType is the value type (INT NOT NULL counts for a
// MULTISET).
func (c *Converter) entries(t types.DataType, keyType, valueType types.DataType, raw any) (keys, values []any, err error) {
	if obj, ok := asObject(raw); ok {
		names := make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		sort.Strings(names)
		keys = make([]any, 0, len(names))
		values = make([]any, 0, len(names))
		seen := make(map[any]bool, len(names))
		for _, name := range names {
			k, err := c.value(keyType, name, true)
			if err != nil {
				return nil, nil, prefixPath(err, "["+name+"]")
			}
			if id := valueKey(k); seen[id] {
				return nil, nil, prefixPath(&ConvertError{Msg: "duplicate map key " + describe(name) + " after conversion to " + keyType.String(), Err: ErrInvalidValue}, "["+name+"]")
			} else {
				seen[id] = true
			}
			v, err := c.value(valueType, obj[name], true)
			if err != nil {
				return nil, nil, prefixPath(err, "["+name+"]")
			}
			keys = append(keys, k)
			values = append(values, v)
		}
		return keys, values, nil
	}
	arr, ok := asArray(raw)
	if !ok {
		return nil, nil, invalid(raw, t, "expected an object, an array of [key, value] pairs or an array of {\"key\", \"value\"} objects")
	}
	keys = make([]any, 0, len(arr))
	values = make([]any, 0, len(arr))
	seen := make(map[any]bool, len(arr))
	for i, e := range arr {
		seg := "[" + strconv.Itoa(i) + "]"
		var rk, rv any
		if pair, ok := asArray(e); ok && len(pair) == 2 {
			rk, rv = pair[0], pair[1]
		} else if o, ok := asObject(e); ok {
			var hasKey bool
			rk, hasKey = o["key"]
			rv = o["value"]
			_, hasValue := o["value"]
			extra := len(o) - 1
			if hasValue {
				extra--
			}
			if !hasKey || extra > 0 {
				return nil, nil, prefixPath(invalid(e, t, `an entry object needs "key" and "value" and nothing else`), seg)
			}
		} else {
			return nil, nil, prefixPath(invalid(e, t, `an entry must be a [key, value] pair or a {"key", "value"} object`), seg)
		}
		k, err := c.value(keyType, rk, true)
		if err != nil {
			return nil, nil, prefixPath(prefixPath(err, "key"), seg)
		}
		if id := valueKey(k); seen[id] {
			return nil, nil, prefixPath(&ConvertError{Path: "key", Msg: "duplicate map key " + describe(rk), Err: ErrInvalidValue}, seg)
		} else {
			seen[id] = true
		}
		v, err := c.value(valueType, rv, true)
		if err != nil {
			return nil, nil, prefixPath(prefixPath(err, "value"), seg)
		}
		keys = append(keys, k)
		values = append(values, v)
	}
	return keys, values, nil
}

func (c *Converter) convMap(t types.DataType, raw any) (any, error) {
	keys, values, err := c.entries(t, *t.Key, *t.Value, raw)
	if err != nil {
		return nil, err
	}
	return types.Map{Keys: keys, Values: values}, nil
}

// multisetCount is the type of a MULTISET's counts.
var multisetCount = types.IntType().NotNull()

func (c *Converter) convMultiset(t types.DataType, raw any) (any, error) {
	arr, isArr := asArray(raw)
	if isArr && !isEntryList(arr) {
		var keys, counts []any
		index := make(map[any]int, len(arr))
		for i, e := range arr {
			v, err := c.value(*t.Element, e, true)
			if err != nil {
				return nil, prefixPath(err, "["+strconv.Itoa(i)+"]")
			}
			id := valueKey(v)
			if j, ok := index[id]; ok {
				counts[j] = counts[j].(int32) + 1
				continue
			}
			index[id] = len(keys)
			keys = append(keys, v)
			counts = append(counts, int32(1))
		}
		return types.Map{Keys: keys, Values: counts}, nil
	}
	keys, counts, err := c.entries(t, *t.Element, multisetCount, raw)
	if err != nil {
		return nil, err
	}
	for i, n := range counts {
		if n.(int32) < 1 {
			return nil, &ConvertError{Path: "[" + strconv.Itoa(i) + "]", Msg: fmt.Sprintf("multiset count %d is not positive", n), Err: ErrInvalidValue}
		}
	}
	return types.Map{Keys: keys, Values: counts}, nil
}

// isEntryList reports whether a MULTISET array is in the {"key", "value"}
// entry form: every element an object with exactly those keys. A plain array
// of elements is the other form. ([element, count] pairs are not recognised,
// as they are indistinguishable from ARRAY elements.)
func isEntryList(arr []any) bool {
	if len(arr) == 0 {
		return false
	}
	for _, e := range arr {
		o, ok := asObject(e)
		if !ok || len(o) != 2 {
			return false
		}
		if _, ok := o["key"]; !ok {
			return false
		}
		if _, ok := o["value"]; !ok {
			return false
		}
	}
	return true
}

func (c *Converter) convRow(t types.DataType, raw any) (any, error) {
	if arr, ok := asArray(raw); ok {
		if len(arr) != len(t.Fields) {
			return nil, invalid(raw, t, fmt.Sprintf("an array for a ROW needs %d elements, one per field", len(t.Fields)))
		}
		out := make([]any, len(arr))
		for i, f := range t.Fields {
			v, err := c.value(f.Type, arr[i], true)
			if err != nil {
				return nil, prefixPath(err, f.Name)
			}
			out[i] = v
		}
		return out, nil
	}
	obj, ok := asObject(raw)
	if !ok {
		return nil, invalid(raw, t, "")
	}
	out := make([]any, len(t.Fields))
	found := 0
	for i, f := range t.Fields {
		rv, present := obj[f.Name]
		if present {
			found++
		}
		v, err := c.value(f.Type, rv, present)
		if err != nil {
			return nil, prefixPath(err, f.Name)
		}
		out[i] = v
	}
	if found < len(obj) && c.opts.UnknownFields == UnknownFieldsError {
		names := c.unknownNames(obj, t.Fields)
		return nil, &ConvertError{Path: names[0], Msg: "not a field of " + t.String() + " (unknown_fields: error)", Err: ErrUnknownField}
	}
	return out, nil
}

// ---- helpers ----

// asObject returns v as a JSON object; maps with string keys of other value
// types (set by Go code) are copied.
func asObject(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case nil, string, []any, []byte, json.Number, bool, float64, int64:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return nil, false
	}
	out := make(map[string]any, rv.Len())
	it := rv.MapRange()
	for it.Next() {
		out[it.Key().String()] = it.Value().Interface()
	}
	return out, true
}

// asArray returns v as a JSON array; other slices (but not []byte) are
// copied.
func asArray(v any) ([]any, bool) {
	switch a := v.(type) {
	case []any:
		return a, true
	case nil, string, map[string]any, []byte, json.Number, bool, float64, int64:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// valueKey returns a comparable identity for a converted value, for
// duplicate detection in maps and multisets.
func valueKey(v any) any {
	switch x := v.(type) {
	case nil, bool, int8, int16, int32, int64, float32, float64, string, types.Date, types.Time, types.Timestamp:
		return x
	case types.Decimal:
		return "dec:" + x.String()
	case []byte:
		return "bytes:" + string(x)
	}
	var b strings.Builder
	writeValueKey(&b, v)
	return b.String()
}

func writeValueKey(b *strings.Builder, v any) {
	switch x := v.(type) {
	case []any:
		b.WriteByte('[')
		for _, e := range x {
			writeValueKey(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case types.Map:
		b.WriteByte('{')
		for i := range x.Keys {
			writeValueKey(b, x.Keys[i])
			b.WriteByte(':')
			writeValueKey(b, x.Values[i])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%T:%v", valueKey(v), valueKey(v))
	}
}

// InferType returns the column type schema evolution gives a new field from
// its first non-null value: string -> STRING, whole number -> BIGINT, other
// number -> DOUBLE, boolean -> BOOLEAN, bytes -> BYTES, timestamp (Go
// time.Time) -> TIMESTAMP(6) WITH LOCAL TIME ZONE, object or array -> STRING
// (holding the compact JSON text). A JSON number is whole when its text has
// no fraction or exponent and fits BIGINT; a Go float64 is always DOUBLE, so
// that a later fractional value still fits. The type is nullable. ok is false
// for null, which has no type.
func InferType(v any) (types.DataType, bool) {
	switch x := v.(type) {
	case nil:
		return types.DataType{}, false
	case string:
		return types.StringType(), true
	case bool:
		return types.BooleanType(), true
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return types.BigIntType(), true
			}
		}
		return types.DoubleType(), true
	case float64, float32:
		return types.DoubleType(), true
	case []byte:
		return types.BytesType(), true
	case time.Time:
		return types.LocalZonedTimestampType(6), true
	}
	if _, ok := types.SignedInt(v); ok {
		return types.BigIntType(), true
	}
	if u, ok := types.UnsignedInt(v); ok {
		if u <= math.MaxInt64 {
			return types.BigIntType(), true
		}
		return types.DoubleType(), true
	}
	return types.StringType(), true
}

// describe names a value's JSON type and shows it, shortened, for errors:
// `string "abc"`, `number 1.5`, `boolean true`, `null`, `object`, `array`,
// `bytes (3 bytes)`, `timestamp 2024-05-30T12:00:00Z`.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + quoteShort(x)
	case json.Number:
		return "number " + short(string(x))
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case float64:
		return "number " + strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return "number " + strconv.FormatFloat(float64(x), 'g', -1, 32)
	case []byte:
		return fmt.Sprintf("bytes (%d bytes)", len(x))
	case time.Time:
		return "timestamp " + x.Format(time.RFC3339Nano)
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	if i, ok := types.SignedInt(v); ok {
		return "number " + strconv.FormatInt(i, 10)
	}
	if u, ok := types.UnsignedInt(v); ok {
		return "number " + strconv.FormatUint(u, 10)
	}
	if _, ok := asObject(v); ok {
		return "object"
	}
	if _, ok := asArray(v); ok {
		return "array"
	}
	return fmt.Sprintf("value of Go type %T", v)
}

const maxShown = 64

func short(s string) string {
	if len(s) <= maxShown {
		return s
	}
	return s[:maxShown] + fmt.Sprintf("... (%d bytes)", len(s))
}

// quoteShort quotes s, cut to maxShown bytes on a rune boundary.
func quoteShort(s string) string {
	if len(s) <= maxShown {
		return strconv.Quote(s)
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("... (%d bytes)", len(s))
}
