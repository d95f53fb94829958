package cdcformat

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Debezium and Kafka Connect semantic type names (the schema's "name").
const (
	dbzDecimal              = "org.apache.kafka.connect.data.Decimal"
	connectDate             = "org.apache.kafka.connect.data.Date"
	connectTime             = "org.apache.kafka.connect.data.Time"
	connectTimestamp        = "org.apache.kafka.connect.data.Timestamp"
	dbzDate                 = "io.debezium.time.Date"
	dbzTimestamp            = "io.debezium.time.Timestamp"
	dbzMicroTimestamp       = "io.debezium.time.MicroTimestamp"
	dbzNanoTimestamp        = "io.debezium.time.NanoTimestamp"
	dbzZonedTimestamp       = "io.debezium.time.ZonedTimestamp"
	dbzTime                 = "io.debezium.time.Time"
	dbzMicroTime            = "io.debezium.time.MicroTime"
	dbzNanoTime             = "io.debezium.time.NanoTime"
	dbzBits                 = "io.debezium.data.Bits"
	dbzVariableScaleDecimal = "io.debezium.data.VariableScaleDecimal"
)

// dbzColumn is one field of the schema's row struct.
type dbzColumn struct {
	connectType string // "int32", "bytes", ...
	name        string // semantic name, "" for none
	params      map[string]string
}

// dbzSchema is the row struct of a Debezium envelope schema.
type dbzSchema struct {
	columns map[string]dbzColumn
	fields  []types.DataField
}

// parseDebeziumSchema reads the columns of the "after" struct of
// schema.fields, else of the "before" struct (DebeziumJsonRecordParser.parseSchema).
func parseDebeziumSchema(s any) (*dbzSchema, error) {
	const f = Debezium
	obj, ok := s.(map[string]any)
	if !ok {
		return nil, envErr(f, "schema", "not an object but %s", jsonType(s))
	}
	top, ok := obj["fields"].([]any)
	if !ok {
		return nil, envErr(f, "schema.fields", "missing or not an array")
	}
	var cols []any
	found := false
	for _, e := range top {
		st, _ := e.(map[string]any)
		switch textField(st, "field") {
		case "after":
			cols, _ = st["fields"].([]any)
			found = cols != nil
		case "before":
			if !found {
				cols, _ = st["fields"].([]any)
			}
		}
		if found {
			break
		}
	}
	if cols == nil {
		return nil, envErr(f, "schema.fields", `no "after" or "before" struct with fields`)
	}
	sc := &dbzSchema{columns: make(map[string]dbzColumn, len(cols))}
	for i, e := range cols {
		c, ok := e.(map[string]any)
		if !ok {
			return nil, envErr(f, "schema.fields[after].fields["+strconv.Itoa(i)+"]", "not an object but %s", jsonType(e))
		}
		name := textField(c, "field")
		col := dbzColumn{connectType: textField(c, "type"), name: textField(c, "name")}
		if p, ok := c["parameters"].(map[string]any); ok {
			col.params = make(map[string]string, len(p))
			for k, v := range p {
				col.params[k] = asText(v)
			}
		}
		if _, dup := sc.columns[name]; dup {
			continue
		}
		sc.columns[name] = col
		sc.fields = append(sc.fields, types.DataField{ID: len(sc.fields), Name: name, Type: col.dataType()})
	}
	return sc, nil
}

// dataType is DebeziumSchemaUtils.toDataType, except where noted:
//
//   - float64 is DOUBLE (Paimon maps it to FLOAT, losing precision; its own
//     test fixtures use the non-Connect spelling "double").
//   - Debezium's Time, NanoTime and NanoTimestamp, and Connect's Date, Time
//     and Timestamp, which Paimon leaves as INT/BIGINT numbers, are TIME(3),
//     TIME(9), TIMESTAMP(9), DATE, TIME(3) and TIMESTAMP(3), matching the
//     text their values are decoded to.
//   - A decimal without connect.decimal.precision is DECIMAL(20, 0) as in
//     Paimon, so values with fraction digits fail conversion (Java rounds
//     them); a precision over 38 is STRING.
//
// MicroTime is TIME (precision 0) and ZonedTimestamp TIMESTAMP(6), as in
// Paimon. Structs (VariableScaleDecimal, geometry), arrays, maps, strings
// and unknown types are STRING.
func (c dbzColumn) dataType() types.DataType {
	switch c.name {
	case dbzBits:
		n, err := strconv.Atoi(c.params["length"])
		if err != nil || n < 1 {
			return types.BytesType()
		}
		return types.BinaryType((n + 7) / 8)
	case dbzDecimal:
		p, ok := c.params["connect.decimal.precision"]
		if !ok {
			return types.DecimalType(20, 0)
		}
		prec, err := strconv.Atoi(p)
		scale, err2 := strconv.Atoi(c.params["scale"])
		if err != nil || err2 != nil || prec < 1 || prec > 38 || scale < 0 || scale > prec {
			return types.StringType()
		}
		return types.DecimalType(prec, scale)
	case dbzDate, connectDate:
		return types.DateType()
	case dbzTimestamp, connectTimestamp:
		return types.TimestampType(3)
	case dbzMicroTimestamp, dbzZonedTimestamp:
		return types.TimestampType(6)
	case dbzNanoTimestamp:
		return types.TimestampType(9)
	case dbzMicroTime:
		return types.TimeType(0)
	case dbzTime, connectTime:
		return types.TimeType(3)
	case dbzNanoTime:
		return types.TimeType(9)
	}
	switch c.connectType {
	case "int8":
		return types.TinyIntType()
	case "int16":
		return types.SmallIntType()
	case "int32":
		return types.IntType()
	case "int64":
		return types.BigIntType()
	case "float", "float32":
		return types.FloatType()
	case "float64", "double":
		return types.DoubleType()
	case "boolean":
		return types.BooleanType()
	case "bytes":
		return types.BytesType()
	}
	return types.StringType()
}

// transformRow decodes a row image's values by their columns' schema types
// (a nil schema keeps them as sent); fields the schema does not name are
// kept as sent. The result is a fresh map.
func (s *dbzSchema) transformRow(m map[string]any, path string) (map[string]any, error) {
	if s == nil {
		return copyRow(m), nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		col, ok := s.columns[k]
		if !ok || v == nil {
			out[k] = v
			continue
		}
		tv, reason := col.transform(v)
		if reason != "" {
			return nil, envErr(Debezium, path+"."+k, "%s", reason)
		}
		out[k] = tv
	}
	return out, nil
}

// transform is DebeziumSchemaUtils.transformRawValue for one non-null value;
// reason is non-empty when the value does not decode. Differences from
// Paimon: a Decimal sent as base64 (JsonConverter's default decimal.format)
// is decoded, where Paimon accepts only decimal.format=numeric; bytes stay
// base64 (Paimon decodes them to a Java string, which loses non-UTF-8
// bytes); VariableScaleDecimal becomes decimal text; ZonedTimestamp stays the
// RFC 3339 instant text (rowconv takes it to the UTC wall clock, as Paimon
// does with its UTC server time zone); geometry structs are kept as they are
// (Paimon renders GeoJSON).
func (c dbzColumn) transform(v any) (any, string) {
	switch c.name {
	case dbzBits:
		s, ok := v.(string)
		if !ok {
			return nil, "Bits: not a base64 string but " + jsonType(v)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, "Bits: invalid base64"
		}
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return base64.StdEncoding.EncodeToString(b), ""
	case dbzDecimal:
		return connectDecimal(v, c.params["scale"])
	case dbzVariableScaleDecimal:
		st, ok := v.(map[string]any)
		if !ok {
			return nil, "VariableScaleDecimal: not an object but " + jsonType(v)
		}
		sc, ok := field(st, "scale")
		if !ok {
			return nil, `VariableScaleDecimal: "scale" missing`
		}
		val, ok := field(st, "value")
		if !ok {
			return nil, `VariableScaleDecimal: "value" missing`
		}
		return connectDecimal(val, asText(sc))
	case dbzDate, connectDate:
		n, ok := wholeNumber(v)
		if !ok {
			return nil, "Date: not a whole number of days"
		}
		if n < minDay || n > maxDay {
			return nil, "Date: day out of range"
		}
		return time.Unix(n*86400, 0).UTC().Format("2006-01-02"), ""
	case dbzTimestamp, connectTimestamp:
		return epochText(v, "Timestamp", 1e6, ".000")
	case dbzMicroTimestamp:
		return epochText(v, "MicroTimestamp", 1e3, ".000000")
	case dbzNanoTimestamp:
		return epochText(v, "NanoTimestamp", 1, ".000000000")
	case dbzTime, connectTime:
		return timeOfDay(v, "Time", 1e6, ".000")
	case dbzMicroTime:
		return timeOfDay(v, "MicroTime", 1e3, ".000000")
	case dbzNanoTime:
		return timeOfDay(v, "NanoTime", 1, ".000000000")
	}
	return v, ""
}

// Days of 0000-01-01 and 9999-12-31, the range a DATE holds.
const (
	minDay = -719528
	maxDay = 2932896
)

// wholeNumber reads an int64 from a JSON number, a numeric string (Paimon
// parses Objects.toString of the value) or a whole float64.
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

// epochText renders an epoch number in units of unitNs nanoseconds as the
// UTC wall clock, "2006-01-02T15:04:05" plus frac (Debezium's Timestamp
// types carry the database's wall clock, not an instant).
func epochText(v any, what string, unitNs int64, frac string) (any, string) {
	n, ok := wholeNumber(v)
	if !ok {
		return nil, what + ": not a whole number"
	}
	// Nanoseconds of the years 0000-9999 fit an int64 only up to 2262, so
	// split into seconds and the rest before scaling.
	perSec := int64(1e9) / unitNs
	sec, rest := floorDiv(n, perSec), n-floorDiv(n, perSec)*perSec
	if sec < minDay*86400 || sec >= (maxDay+1)*86400 {
		return nil, what + ": out of the years 0000-9999"
	}
	return time.Unix(sec, rest*unitNs).UTC().Format("2006-01-02T15:04:05" + frac), ""
}

// timeOfDay renders a time of day in units of unitNs nanoseconds as
// "15:04:05" plus frac. Values outside one day (MySQL TIME allows
// -838:59:59 to 838:59:59) are errors; Paimon would wrap them modulo a day.
func timeOfDay(v any, what string, unitNs int64, frac string) (any, string) {
	n, ok := wholeNumber(v)
	if !ok {
		return nil, what + ": not a whole number"
	}
	perDay := int64(86400e9) / unitNs
	if n < 0 || n >= perDay {
		return nil, what + ": not a time of day (00:00:00 to 23:59:59.999999999)"
	}
	return time.Unix(0, n*unitNs).UTC().Format("15:04:05" + frac), ""
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// connectDecimal decodes a Kafka Connect Decimal: a JSON number
// (decimal.format=numeric) is kept as its exact text; a string is the base64
// big-endian two's-complement unscaled value (decimal.format=base64), scaled
// by the schema's "scale" parameter, or else, if it is not base64, decimal
// text kept as it is.
func connectDecimal(v any, scaleText string) (any, string) {
	switch x := v.(type) {
	case json.Number:
		return string(x), ""
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), ""
	case string:
		scale, err := strconv.Atoi(strings.TrimSpace(scaleText))
		if err != nil || scale < 0 || scale > 1000 {
			return nil, "Decimal: missing or invalid scale parameter " + strconv.Quote(scaleText)
		}
		b, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			// Not base64: decimal text, which Paimon accepts (it parses
			// the value's text as a BigDecimal).
			if isDecimalText(x) {
				return x, ""
			}
			return nil, "Decimal: invalid base64 " + strconv.Quote(short(x))
		}
		if len(b) == 0 {
			return nil, "Decimal: empty unscaled value"
		}
		u := new(big.Int).SetBytes(b)
		if b[0]&0x80 != 0 {
			u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
		}
		return types.Decimal{Unscaled: u, Scale: scale}.String(), ""
	}
	return nil, "Decimal: not a number or base64 string but " + jsonType(v)
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// isDecimalText reports whether s is a decimal number: an optional sign,
// digits with an optional fraction, an optional exponent.
func isDecimalText(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}
