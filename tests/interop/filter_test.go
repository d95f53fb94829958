//go:build interop

package interop

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The --filter language of the oracles (README.md "Filter language"),
// evaluated in Go on Go values with the semantics of Paimon's
// Predicate.test, which the oracles apply exactly after pruning: a
// comparison with NULL is false, FLOAT/DOUBLE compare as Float.compareTo
// (NaN above everything, -0.0 below 0.0), strings and bytes by unsigned
// bytes (BinaryString.compareTo).
//
//	expr    := cond (AND cond)*
//	cond    := col op literal | col [NOT] IN (literal, ...) | col IS [NOT] NULL
//	op      := = | != | <> | < | <= | > | >=
//	col     := identifier | `any text`
//	literal := 'text' ('' for a quote) | number | TRUE | FALSE

// rowPredicate is a compiled filter over rows of one schema.
type rowPredicate func(row []any) bool

type ftoken struct {
	kind byte // w word, s string, n number, ` quoted name, p punctuation
	text string
}

// compileFilter compiles expr against fields.
func compileFilter(expr string, fields []types.DataField) (rowPredicate, error) {
	return compileFilterAs(expr, fields, false)
}

// compileSQLFilter is compileFilter with SQL's semantics for FLOAT and
// DOUBLE, as a SQL engine's WHERE applies them (IEEE 754: a comparison
// with NaN is false but for <>, -0.0 equals 0.0): what Flink SQL returns
// for the filter made SQL (sqlFilter).
func compileSQLFilter(expr string, fields []types.DataField) (rowPredicate, error) {
	return compileFilterAs(expr, fields, true)
}

func compileFilterAs(expr string, fields []types.DataField, sql bool) (rowPredicate, error) {
	toks, err := lexFilter(expr)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", expr, err)
	}
	p := &fparser{toks: toks, fields: fields, sql: sql}
	var conds []rowPredicate
	for {
		c, err := p.cond()
		if err != nil {
			return nil, fmt.Errorf("filter %q: %w", expr, err)
		}
		conds = append(conds, c)
		if p.pos >= len(p.toks) {
			break
		}
		if !p.isWord("AND") {
			return nil, fmt.Errorf("filter %q: expected AND at token %d", expr, p.pos)
		}
		p.pos++
	}
	return func(row []any) bool {
		for _, c := range conds {
			if !c(row) {
				return false
			}
		}
		return true
	}, nil
}

// filterRows returns the rows pred keeps.
func filterRows(pred rowPredicate, rows [][]any) [][]any {
	var out [][]any
	for _, r := range rows {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

func lexFilter(src string) ([]ftoken, error) {
	var toks []ftoken
	rs := []rune(src)
	for i := 0; i < len(rs); {
		c := rs[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '\'':
			var sb strings.Builder
			i++
			for {
				if i >= len(rs) {
					return nil, fmt.Errorf("unterminated string")
				}
				d := rs[i]
				i++
				if d == '\'' {
					if i < len(rs) && rs[i] == '\'' {
						sb.WriteRune('\'')
						i++
						continue
					}
					break
				}
				sb.WriteRune(d)
			}
			toks = append(toks, ftoken{'s', sb.String()})
		case c == '`':
			end := i + 1
			for end < len(rs) && rs[end] != '`' {
				end++
			}
			if end >= len(rs) {
				return nil, fmt.Errorf("unterminated `name`")
			}
			toks = append(toks, ftoken{'`', string(rs[i+1 : end])})
			i = end + 1
		case unicode.IsDigit(c) || (c == '-' && i+1 < len(rs) && (unicode.IsDigit(rs[i+1]) || rs[i+1] == '.')):
			start := i
			i++
			for i < len(rs) && (unicode.IsDigit(rs[i]) || strings.ContainsRune(".eE", rs[i]) ||
				((rs[i] == '-' || rs[i] == '+') && (rs[i-1] == 'e' || rs[i-1] == 'E'))) {
				i++
			}
			toks = append(toks, ftoken{'n', string(rs[start:i])})
		case unicode.IsLetter(c) || c == '_':
			start := i
			for i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]) || rs[i] == '_') {
				i++
			}
			toks = append(toks, ftoken{'w', string(rs[start:i])})
		case strings.ContainsRune("<>!=", c):
			start := i
			i++
			if i < len(rs) && strings.ContainsRune("=>", rs[i]) {
				i++
			}
			toks = append(toks, ftoken{'p', string(rs[start:i])})
		case strings.ContainsRune("(),", c):
			toks = append(toks, ftoken{'p', string(c)})
			i++
		default:
			return nil, fmt.Errorf("unexpected character %q", c)
		}
	}
	return toks, nil
}

type fparser struct {
	toks   []ftoken
	pos    int
	fields []types.DataField
	sql    bool // SQL's float comparisons (compileSQLFilter)
}

// compare is compareValues with the parser's float semantics; ok false
// when SQL's comparison is with NaN (every operator but <> is false).
func (p *fparser) compare(t types.DataType, v, lit any) (c int, ok bool) {
	if p.sql && (t.Kind == types.KindFloat || t.Kind == types.KindDouble) {
		a, b := floatOf(v), floatOf(lit)
		if math.IsNaN(a) || math.IsNaN(b) {
			return 0, false
		}
		switch {
		case a < b:
			return -1, true
		case a > b:
			return 1, true
		}
		return 0, true
	}
	return compareValues(t, v, lit), true
}

func floatOf(v any) float64 {
	if f, ok := v.(float32); ok {
		return float64(f)
	}
	return v.(float64)
}

func (p *fparser) isWord(w string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == 'w' && strings.EqualFold(p.toks[p.pos].text, w)
}

func (p *fparser) isPunct(s string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == 'p' && p.toks[p.pos].text == s
}

func (p *fparser) cond() (rowPredicate, error) {
	if p.pos >= len(p.toks) || (p.toks[p.pos].kind != 'w' && p.toks[p.pos].kind != '`') {
		return nil, fmt.Errorf("expected a column at token %d", p.pos)
	}
	name := p.toks[p.pos].text
	p.pos++
	idx := types.FieldByName(p.fields, name)
	if idx < 0 {
		return nil, fmt.Errorf("no column %s", name)
	}
	t := p.fields[idx].Type
	if p.isWord("IS") {
		p.pos++
		not := p.isWord("NOT")
		if not {
			p.pos++
		}
		if !p.isWord("NULL") {
			return nil, fmt.Errorf("expected NULL")
		}
		p.pos++
		return func(row []any) bool { return (row[idx] == nil) != not }, nil
	}
	not := false
	if p.isWord("NOT") {
		p.pos++
		not = true
	}
	if p.isWord("IN") {
		p.pos++
		if !p.isPunct("(") {
			return nil, fmt.Errorf("expected (")
		}
		p.pos++
		var lits []any
		for {
			l, err := p.literal(t)
			if err != nil {
				return nil, err
			}
			lits = append(lits, l)
			if p.isPunct(",") {
				p.pos++
				continue
			}
			if !p.isPunct(")") {
				return nil, fmt.Errorf("expected )")
			}
			p.pos++
			break
		}
		// In.test / NotIn.test: a NULL field matches neither
		return func(row []any) bool {
			v := row[idx]
			if v == nil {
				return false
			}
			for _, l := range lits {
				if c, ok := p.compare(t, v, l); ok && c == 0 {
					return !not
				}
			}
			return not
		}, nil
	}
	if not {
		return nil, fmt.Errorf("NOT must be followed by IN")
	}
	if p.pos >= len(p.toks) || p.toks[p.pos].kind != 'p' {
		return nil, fmt.Errorf("expected an operator at token %d", p.pos)
	}
	op := p.toks[p.pos].text
	p.pos++
	lit, err := p.literal(t)
	if err != nil {
		return nil, err
	}
	var ok func(c int) bool
	switch op {
	case "=":
		ok = func(c int) bool { return c == 0 }
	case "!=", "<>":
		ok = func(c int) bool { return c != 0 }
	case "<":
		ok = func(c int) bool { return c < 0 }
	case "<=":
		ok = func(c int) bool { return c <= 0 }
	case ">":
		ok = func(c int) bool { return c > 0 }
	case ">=":
		ok = func(c int) bool { return c >= 0 }
	default:
		return nil, fmt.Errorf("unknown operator %s", op)
	}
	return func(row []any) bool {
		if row[idx] == nil {
			return false
		}
		c, comparable := p.compare(t, row[idx], lit)
		if !comparable {
			return op == "!=" || op == "<>"
		}
		return ok(c)
	}, nil
}

// literal converts the next literal to a Go value of type t, reading it as
// the oracles do (a canonical JSON value of the column's type).
func (p *fparser) literal(t types.DataType) (any, error) {
	if p.pos >= len(p.toks) {
		return nil, fmt.Errorf("missing literal")
	}
	tok := p.toks[p.pos]
	p.pos++
	switch tok.kind {
	case 's', 'n':
	case 'w':
		if strings.EqualFold(tok.text, "TRUE") || strings.EqualFold(tok.text, "FALSE") {
			if t.Kind != types.KindBoolean {
				return nil, fmt.Errorf("boolean literal for %s", t)
			}
			return strings.EqualFold(tok.text, "TRUE"), nil
		}
		return nil, fmt.Errorf("bad literal %s", tok.text)
	default:
		return nil, fmt.Errorf("bad literal %s", tok.text)
	}
	return parseCanonicalScalar(t, tok.text)
}

// parseCanonicalScalar reads the text of a canonical scalar value (without
// JSON quotes) as a Go value of type t.
func parseCanonicalScalar(t types.DataType, s string) (any, error) {
	switch t.Kind {
	case types.KindBoolean:
		return strconv.ParseBool(s)
	case types.KindTinyInt:
		n, err := strconv.ParseInt(s, 10, 8)
		return int8(n), err
	case types.KindSmallInt:
		n, err := strconv.ParseInt(s, 10, 16)
		return int16(n), err
	case types.KindInt:
		n, err := strconv.ParseInt(s, 10, 32)
		return int32(n), err
	case types.KindBigInt:
		return strconv.ParseInt(s, 10, 64)
	case types.KindFloat:
		f, err := parseFloatText(s, 32)
		return float32(f), err
	case types.KindDouble:
		return parseFloatText(s, 64)
	case types.KindDecimal:
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return nil, fmt.Errorf("bad decimal %q", s)
		}
		// a literal keeps its own digits; compare exactly
		return r, nil
	case types.KindChar, types.KindVarChar:
		return s, nil
	case types.KindBinary, types.KindVarBinary:
		return base64.StdEncoding.DecodeString(s)
	case types.KindDate:
		tm, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, err
		}
		return types.Date(floorDiv(tm.Unix(), 86400)), nil
	case types.KindTime:
		tm, err := time.Parse("15:04:05.999999999", s)
		if err != nil {
			return nil, err
		}
		return types.Time(tm.Hour()*3600000 + tm.Minute()*60000 + tm.Second()*1000 + tm.Nanosecond()/1e6), nil
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		return parseTimestampText(s)
	}
	return nil, fmt.Errorf("no literal for %s", t)
}

func parseFloatText(s string, bits int) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, bits)
}

// parseTimestampText reads YYYY-MM-DD[T| ]HH:MM:SS[.f{0,9}][Z] as a
// Timestamp (wall clock read as UTC), years 0001-9999.
func parseTimestampText(s string) (types.Timestamp, error) {
	s = strings.TrimSuffix(strings.Replace(s, " ", "T", 1), "Z")
	tm, err := time.Parse("2006-01-02T15:04:05.999999999", s)
	if err != nil {
		return types.Timestamp{}, err
	}
	return types.TimestampOf(tm), nil
}

func floorDiv(a, b int64) int64 {
	q, _ := floorDivMod(a, b)
	return q
}

// compareValues orders a column value v against a literal or another value
// of the same type as Paimon's CompareUtils.compareLiteral (compareTo).
func compareValues(t types.DataType, v, lit any) int {
	switch t.Kind {
	case types.KindBoolean:
		a, b := v.(bool), lit.(bool)
		switch {
		case a == b:
			return 0
		case !a:
			return -1
		}
		return 1
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return cmp3(toInt64(v), toInt64(lit))
	case types.KindFloat:
		return javaFloatCompare(float64(v.(float32)), float64(lit.(float32)))
	case types.KindDouble:
		return javaFloatCompare(v.(float64), lit.(float64))
	case types.KindDecimal:
		return decimalRat(v).Cmp(decimalRat(lit))
	case types.KindChar, types.KindVarChar:
		return strings.Compare(v.(string), lit.(string))
	case types.KindBinary, types.KindVarBinary:
		return bytes.Compare(v.([]byte), lit.([]byte))
	case types.KindDate:
		return cmp3(int64(v.(types.Date)), int64(lit.(types.Date)))
	case types.KindTime:
		return cmp3(int64(v.(types.Time)), int64(lit.(types.Time)))
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		return v.(types.Timestamp).Compare(lit.(types.Timestamp))
	}
	panic(fmt.Sprintf("compare %s values", t))
}

func decimalRat(v any) *big.Rat {
	switch x := v.(type) {
	case *big.Rat:
		return x
	case types.Decimal:
		return x.Rat()
	}
	panic(fmt.Sprintf("decimal value %T", v))
}

func toInt64(v any) int64 {
	if n, ok := types.SignedInt(v); ok {
		return n
	}
	panic(fmt.Sprintf("integer value %T", v))
}

func cmp3[T int64 | int](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// javaFloatCompare is Double.compare: NaN equals NaN and is above every
// other value, -0.0 is below 0.0.
func javaFloatCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	key := func(f float64) int64 {
		if math.IsNaN(f) {
			return math.MaxInt64
		}
		return int64(math.Float64bits(f))
	}
	return cmp3(key(a), key(b))
}
