package pgcdc

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/schema"
)

// Postgres type OIDs (src/include/catalog/pg_type.dat).
const (
	oidBool        = 16
	oidBytea       = 17
	oidChar        = 18
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidJSON        = 114
	oidFloat4      = 700
	oidFloat8      = 701
	oidMoney       = 790
	oidBpchar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidInterval    = 1186
	oidTimetz      = 1266
	oidBit         = 1560
	oidVarbit      = 1562
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// arrayElem maps the array type OIDs of the scalar types above to their
// element OID (pg_type.typelem).
var arrayElem = map[uint32]uint32{
	1000: oidBool, 1001: oidBytea, 1002: oidChar, 1003: oidName, 1016: oidInt8, 1005: oidInt2, 1007: oidInt4,
	1009: oidText, 1028: oidOID, 199: oidJSON, 1021: oidFloat4, 1022: oidFloat8, 791: oidMoney, 1014: oidBpchar,
	1015: oidVarchar, 1182: oidDate, 1183: oidTime, 1115: oidTimestamp, 1185: oidTimestamptz, 1187: oidInterval,
	1270: oidTimetz, 1561: oidBit, 1563: oidVarbit, 1231: oidNumeric, 2951: oidUUID, 3807: oidJSONB,
}

// kind is how a column's text value is rendered into the message.
type kind int

const (
	kText        kind = iota // string, verbatim
	kInt                     // json.Number
	kFloat                   // json.Number, NaN/±Infinity as strings
	kDecimal                 // exact text
	kMoney                   // "$1,234.56" (lc_monetary=C) → "1234.56"
	kBool                    // t/f → true/false
	kBit1                    // bit(1) → true/false
	kBytea                   // \x… → base64
	kDate                    // verbatim (ISO)
	kTime                    // verbatim (ISO)
	kTimestamp               // "2024-01-02 03:04:05.1" → "2024-01-02T03:04:05.1"
	kTimestamptz             // "… +00" (TimeZone=UTC) → "…Z"
	kArray                   // {…} → JSON array of the element kind
)

// colType is what the input knows of a column's type: decided once from the
// Relation message's (or the catalogue's) type OID and typmod, so snapshot
// rows and streamed rows are typed and rendered by one path.
type colType struct {
	oid    uint32
	typmod int32
	kind   kind
	elem   *colType // kArray
	paimon string   // Paimon type, e.g. "DECIMAL(10, 2)" (nullability added by the schema)
	common schema.CommonType
}

// DecimalFallback says what a numeric column that no Paimon DECIMAL can hold
// becomes: numeric without a typmod, precision > 38, negative scale.
type DecimalFallback string

// The values of decimal_fallback.
const (
	DecimalString DecimalFallback = "string"
	DecimalError  DecimalFallback = "error"
)

// errUnrepresentable is returned by typeOf for a numeric column under
// decimal_fallback: error.
var errUnrepresentable = errors.New("no Paimon DECIMAL holds it")

// typeOf maps a Postgres type (OID, typmod) to the column's type, per
// docs/POSTGRES_CDC.md "Types". Unknown OIDs (enums, domains, extensions,
// geometric and network types, ranges) are text: never a failure.
func typeOf(oid uint32, typmod int32, fb DecimalFallback) (colType, error) {
	t := colType{oid: oid, typmod: typmod, kind: kText, paimon: "STRING", common: schema.String}
	switch oid {
	case oidInt2:
		t.kind, t.paimon, t.common = kInt, "SMALLINT", schema.Int32
	case oidInt4:
		t.kind, t.paimon, t.common = kInt, "INT", schema.Int32
	case oidInt8, oidOID:
		t.kind, t.paimon, t.common = kInt, "BIGINT", schema.Int64
	case oidFloat4:
		t.kind, t.paimon, t.common = kFloat, "FLOAT", schema.Float32
	case oidFloat8:
		t.kind, t.paimon, t.common = kFloat, "DOUBLE", schema.Float64
	case oidNumeric:
		p, s, ok := numericTypmod(typmod)
		if ok && p <= 38 && s >= 0 && s <= p {
			t.kind, t.paimon = kDecimal, fmt.Sprintf("DECIMAL(%d, %d)", p, s)
		} else if fb == DecimalError {
			if !ok {
				return t, fmt.Errorf("numeric without precision: %w", errUnrepresentable)
			}
			return t, fmt.Errorf("numeric(%d, %d): %w", p, s, errUnrepresentable)
		} else {
			t.kind = kDecimal // exact text in a STRING column
		}
	case oidMoney:
		t.kind, t.paimon = kMoney, "DECIMAL(19, 2)"
	case oidBool:
		t.kind, t.paimon, t.common = kBool, "BOOLEAN", schema.Boolean
	case oidBit:
		if typmod == 1 {
			t.kind, t.paimon, t.common = kBit1, "BOOLEAN", schema.Boolean
		}
	case oidBytea:
		t.kind, t.paimon, t.common = kBytea, "BYTES", schema.ByteArray
	case oidBpchar:
		if typmod > 4 {
			t.paimon = fmt.Sprintf("CHAR(%d)", typmod-4)
		}
	case oidVarchar:
		if typmod > 4 {
			t.paimon = fmt.Sprintf("VARCHAR(%d)", typmod-4)
		}
	case oidDate:
		t.kind, t.paimon = kDate, "DATE"
	case oidTime:
		// Paimon's TIME holds milliseconds (as lakecore/types).
		t.kind, t.paimon = kTime, fmt.Sprintf("TIME(%d)", min(timePrecision(typmod), 3))
	case oidTimestamp:
		t.kind, t.paimon, t.common = kTimestamp, fmt.Sprintf("TIMESTAMP(%d)", timePrecision(typmod)), schema.Timestamp
	case oidTimestamptz:
		t.kind, t.paimon, t.common = kTimestamptz, fmt.Sprintf("TIMESTAMP(%d) WITH LOCAL TIME ZONE", timePrecision(typmod)), schema.Timestamp
	default:
		if e, ok := arrayElem[oid]; ok {
			// Element typmods are the array's (pg_attribute keeps one).
			et, err := typeOf(e, typmod, fb)
			if err != nil {
				return t, err
			}
			t.kind, t.elem, t.paimon, t.common = kArray, &et, "ARRAY<"+et.paimon+">", schema.Array
		}
	}
	return t, nil
}

// numericTypmod decodes numeric's typmod: ((p << 16) | (s & 0x7ff)) + 4, the
// scale an 11-bit two's complement (PG 15 allows -1000..1000).
func numericTypmod(typmod int32) (p, s int, ok bool) {
	if typmod < 4 {
		return 0, 0, false
	}
	t := int(typmod - 4)
	p = t >> 16
	s = ((t & 0x7ff) ^ 1024) - 1024
	return p, s, true
}

// timePrecision is the fraction digits of time/timestamp(tz) typmod p (6
// when unset).
func timePrecision(typmod int32) int {
	if typmod < 0 || typmod > 6 {
		return 6
	}
	return int(typmod)
}

// parseValue renders one text-format value (the output function's text, as
// the walsender and the snapshot query both send it with the session
// settings of startupParams) into the message's JSON value. It never
// panics; malformed input is an error naming what was expected.
func parseValue(t *colType, text string) (any, error) {
	switch t.kind {
	case kInt:
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %q: %w", text, err)
		}
		if c := strconv.FormatInt(v, 10); c != text { // "+1", "007": not JSON numbers
			text = c
		}
		return json.Number(text), nil
	case kFloat:
		switch text {
		case "NaN", "Infinity", "-Infinity":
			return text, nil
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("float %q: %w", text, err)
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("float %q", text)
		}
		if !json.Valid([]byte(text)) { // ParseFloat takes more than JSON ("+1", "0x1p3")
			text = strconv.FormatFloat(v, 'g', -1, 64)
		}
		return json.Number(text), nil
	case kDecimal:
		return text, nil
	case kMoney:
		return parseMoney(text)
	case kBool, kBit1:
		switch text {
		case "t", "1":
			return true, nil
		case "f", "0":
			return false, nil
		}
		return nil, fmt.Errorf("boolean %q", text)
	case kBytea:
		if !strings.HasPrefix(text, `\x`) {
			return nil, fmt.Errorf("bytea %q is not in hex format (bytea_output=hex)", truncate(text))
		}
		b, err := hex.DecodeString(text[2:])
		if err != nil {
			return nil, fmt.Errorf("bytea: %w", err)
		}
		return base64.StdEncoding.EncodeToString(b), nil
	case kTimestamp:
		return isoDateTime(text, false), nil
	case kTimestamptz:
		return isoDateTime(text, true), nil
	case kArray:
		return parseArray(t.elem, text)
	}
	return text, nil
}

// isoDateTime turns "YYYY-MM-DD HH:MM:SS[.f]" (DateStyle=ISO) into RFC 3339
// with a "T"; with tz, the "+00" of TimeZone=UTC becomes "Z". Values
// without that shape ("infinity", BC dates) pass through unchanged, for the
// output to reject with the column's name.
func isoDateTime(s string, tz bool) string {
	if len(s) < 19 || s[10] != ' ' || s[4] != '-' {
		return s
	}
	if tz {
		if !strings.HasSuffix(s, "+00") {
			return s
		}
		return s[:10] + "T" + s[11:len(s)-3] + "Z"
	}
	return s[:10] + "T" + s[11:]
}

// parseMoney reads money's text under lc_monetary=C: "$1,234.56",
// "-$1,234.56".
func parseMoney(s string) (any, error) {
	neg := strings.HasPrefix(s, "-")
	r := strings.TrimPrefix(s, "-")
	r = strings.TrimPrefix(r, "$")
	r = strings.ReplaceAll(r, ",", "")
	if r == "" {
		return nil, fmt.Errorf("money %q", s)
	}
	dot := false
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c == '.' && !dot {
			dot = true
			continue
		}
		if c < '0' || c > '9' {
			return nil, fmt.Errorf("money %q (lc_monetary must be C)", s)
		}
	}
	if neg {
		r = "-" + r
	}
	return r, nil
}

// parseArray reads an array's text form ({1,2,NULL}, {"x,y",z},
// {{1,2},{3,4}}, optionally prefixed by dimensions "[0:1]=") into nested
// []any, each element rendered by parseValue and NULL as nil.
func parseArray(elem *colType, s string) (any, error) {
	if i := strings.Index(s, "="); i >= 0 && strings.HasPrefix(s, "[") {
		s = s[i+1:]
	}
	p := arrayParser{s: s, elem: elem}
	v, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("array %q: %w", truncate(s), err)
	}
	if p.i != len(p.s) {
		return nil, fmt.Errorf("array %q: trailing text at %d", truncate(s), p.i)
	}
	return v, nil
}

type arrayParser struct {
	s    string
	i    int
	elem *colType
}

func (p *arrayParser) parse() ([]any, error) {
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return nil, fmt.Errorf("expected '{' at %d", p.i)
	}
	p.i++
	out := []any{}
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		if p.i >= len(p.s) {
			return nil, errors.New("unterminated")
		}
		var v any
		switch c := p.s[p.i]; c {
		case '{':
			sub, err := p.parse()
			if err != nil {
				return nil, err
			}
			v = sub
		case '"':
			p.i++
			var b strings.Builder
			for {
				if p.i >= len(p.s) {
					return nil, errors.New("unterminated quoted element")
				}
				c := p.s[p.i]
				if c == '\\' && p.i+1 < len(p.s) {
					b.WriteByte(p.s[p.i+1])
					p.i += 2
					continue
				}
				p.i++
				if c == '"' {
					break
				}
				b.WriteByte(c)
			}
			x, err := parseValue(p.elem, b.String())
			if err != nil {
				return nil, err
			}
			v = x
		default:
			start := p.i
			for p.i < len(p.s) && p.s[p.i] != ',' && p.s[p.i] != '}' {
				p.i++
			}
			raw := strings.TrimSpace(p.s[start:p.i])
			if raw == "" {
				return nil, fmt.Errorf("empty element at %d", start)
			}
			if raw == "NULL" {
				v = nil
			} else {
				x, err := parseValue(p.elem, raw)
				if err != nil {
					return nil, err
				}
				v = x
			}
		}
		out = append(out, v)
		if p.i >= len(p.s) {
			return nil, errors.New("unterminated")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return out, nil
		default:
			return nil, fmt.Errorf("expected ',' or '}' at %d", p.i)
		}
	}
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
