package types

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ErrInvalidType is wrapped by every error of Parse and of the JSON decoder.
var ErrInvalidType = errors.New("invalid data type")

// Parse reads a type string in Paimon's grammar (DataTypeJsonParser) and in
// the SQL display form: keywords are case-insensitive; INTEGER, NUMERIC, DEC,
// DOUBLE PRECISION, STRING, BYTES, TIMESTAMP_LTZ(p), "TIMESTAMP(p) WITH LOCAL
// TIME ZONE", "WITHOUT TIME ZONE", a trailing "NOT NULL" or "NULL", the suffix
// forms "INT ARRAY" / "INT MULTISET", and the nested forms ARRAY<T>,
// MULTISET<T>, MAP<K, V> and ROW<name T ['comment'], ...>. Nested ROW fields
// get ids in order from 0; call AssignFieldIDs to renumber them in a schema.
func Parse(s string) (DataType, error) {
	p := &parser{toks: nil}
	if err := p.lex(s); err != nil {
		return DataType{}, fmt.Errorf("%w %q: %v", ErrInvalidType, s, err)
	}
	t, err := p.parseType()
	if err == nil && !p.eof() {
		err = fmt.Errorf("unexpected %q", p.peek().text)
	}
	if err != nil {
		return DataType{}, fmt.Errorf("%w %q: %v", ErrInvalidType, s, err)
	}
	AssignFieldIDs([]DataField{{Type: t}}, 0)
	return t, nil
}

// MustParse is Parse for types known at compile time; it panics on error.
func MustParse(s string) DataType {
	t, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return t
}

type tokKind int

const (
	tokWord tokKind = iota
	tokInt
	tokPunct
	tokQuoted // 'comment'
	tokIdent  // `name`
)

type token struct {
	kind tokKind
	text string
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) lex(s string) error {
	rs := []rune(s)
	for i := 0; i < len(rs); {
		c := rs[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case unicode.IsDigit(c):
			j := i
			for j < len(rs) && unicode.IsDigit(rs[j]) {
				j++
			}
			p.toks = append(p.toks, token{tokInt, string(rs[i:j])})
			i = j
		case unicode.IsLetter(c) || c == '_' || c == '$':
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '_' || rs[j] == '$') {
				j++
			}
			p.toks = append(p.toks, token{tokWord, string(rs[i:j])})
			i = j
		case c == '\'' || c == '`' || c == '"':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(rs) {
					return fmt.Errorf("unterminated %c", c)
				}
				if rs[j] == c {
					if j+1 < len(rs) && rs[j+1] == c { // doubled quote escapes itself
						b.WriteRune(c)
						j += 2
						continue
					}
					break
				}
				b.WriteRune(rs[j])
				j++
			}
			kind := tokIdent
			if c == '\'' {
				kind = tokQuoted
			}
			p.toks = append(p.toks, token{kind, b.String()})
			i = j + 1
		case strings.ContainsRune("(),<>:", c):
			p.toks = append(p.toks, token{tokPunct, string(c)})
			i++
		default:
			return fmt.Errorf("unexpected character %q", c)
		}
	}
	return nil
}

func (p *parser) eof() bool { return p.pos >= len(p.toks) }

func (p *parser) peek() token {
	if p.eof() {
		return token{tokPunct, "<end>"}
	}
	return p.toks[p.pos]
}

func (p *parser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tokWord && strings.EqualFold(t.text, w)
}

func (p *parser) isPunct(c string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.text == c
}

func (p *parser) expectPunct(c string) error {
	if !p.isPunct(c) {
		return fmt.Errorf("expected %q, found %q", c, p.peek().text)
	}
	p.pos++
	return nil
}

func (p *parser) expectWord(w string) error {
	if !p.isWord(w) {
		return fmt.Errorf("expected %s, found %q", w, p.peek().text)
	}
	p.pos++
	return nil
}

// optParams reads "(a[, b])" if present.
func (p *parser) optParams() ([]int, error) {
	if !p.isPunct("(") {
		return nil, nil
	}
	p.pos++
	var out []int
	for {
		t := p.peek()
		if t.kind != tokInt {
			return nil, fmt.Errorf("expected a number, found %q", t.text)
		}
		n, err := strconv.Atoi(t.text)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		p.pos++
		if p.isPunct(",") {
			p.pos++
			continue
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

func (p *parser) parseType() (DataType, error) {
	t, err := p.parseBase()
	if err != nil {
		return t, err
	}
	for {
		switch {
		case p.isWord("NOT"):
			p.pos++
			if err := p.expectWord("NULL"); err != nil {
				return t, err
			}
			t.Nullable = false
		case p.isWord("NULL"):
			p.pos++
			t.Nullable = true
		case p.isWord("ARRAY"):
			p.pos++
			t = ArrayType(t)
		case p.isWord("MULTISET"):
			p.pos++
			t = MultisetType(t)
		default:
			return t, nil
		}
	}
}

func (p *parser) lengthType(k Kind, def int) (DataType, error) {
	ps, err := p.optParams()
	if err != nil {
		return DataType{}, err
	}
	n := def
	if len(ps) == 1 {
		n = ps[0]
	} else if len(ps) > 1 {
		return DataType{}, fmt.Errorf("%s takes one length", k)
	}
	if n < 1 {
		return DataType{}, fmt.Errorf("%s length must be at least 1", k)
	}
	return DataType{Kind: k, Nullable: true, Length: n}, nil
}

func (p *parser) precisionType(k Kind, def, lo, hi int) (DataType, error) {
	ps, err := p.optParams()
	if err != nil {
		return DataType{}, err
	}
	prec := def
	if len(ps) == 1 {
		prec = ps[0]
	} else if len(ps) > 1 {
		return DataType{}, fmt.Errorf("%s takes one precision", k)
	}
	if prec < lo || prec > hi {
		return DataType{}, fmt.Errorf("%s precision must be between %d and %d", k, lo, hi)
	}
	return DataType{Kind: k, Nullable: true, Precision: prec}, nil
}

func (p *parser) parseBase() (DataType, error) {
	t := p.peek()
	if t.kind != tokWord {
		return DataType{}, fmt.Errorf("expected a type, found %q", t.text)
	}
	p.pos++
	switch strings.ToUpper(t.text) {
	case "BOOLEAN":
		return BooleanType(), nil
	case "TINYINT":
		return TinyIntType(), nil
	case "SMALLINT":
		return SmallIntType(), nil
	case "INT", "INTEGER":
		return IntType(), nil
	case "BIGINT":
		return BigIntType(), nil
	case "FLOAT":
		return FloatType(), nil
	case "DOUBLE":
		if p.isWord("PRECISION") {
			p.pos++
		}
		return DoubleType(), nil
	case "DATE":
		return DateType(), nil
	case "STRING":
		return StringType(), nil
	case "BYTES":
		return BytesType(), nil
	case "CHAR":
		return p.lengthType(KindChar, 1)
	case "VARCHAR":
		return p.lengthType(KindVarChar, 1)
	case "BINARY":
		return p.lengthType(KindBinary, 1)
	case "VARBINARY":
		return p.lengthType(KindVarBinary, 1)
	case "DECIMAL", "NUMERIC", "DEC":
		ps, err := p.optParams()
		if err != nil {
			return DataType{}, err
		}
		prec, scale := 10, 0
		if len(ps) >= 1 {
			prec = ps[0]
		}
		if len(ps) == 2 {
			scale = ps[1]
		}
		if len(ps) > 2 || prec < 1 || prec > 38 || scale < 0 || scale > prec {
			return DataType{}, fmt.Errorf("DECIMAL needs 1 <= precision <= 38 and 0 <= scale <= precision")
		}
		return DecimalType(prec, scale), nil
	case "TIME":
		dt, err := p.precisionType(KindTime, 0, 0, 9)
		if err == nil {
			err = p.optWithoutTimeZone()
		}
		return dt, err
	case "TIMESTAMP":
		dt, err := p.precisionType(KindTimestamp, 6, 0, 9)
		if err != nil {
			return dt, err
		}
		if p.isWord("WITH") {
			p.pos++
			for _, w := range []string{"LOCAL", "TIME", "ZONE"} {
				if err := p.expectWord(w); err != nil {
					return dt, err
				}
			}
			dt.Kind = KindLocalZonedTimestamp
			return dt, nil
		}
		return dt, p.optWithoutTimeZone()
	case "TIMESTAMP_LTZ":
		return p.precisionType(KindLocalZonedTimestamp, 6, 0, 9)
	case "ARRAY", "MULTISET":
		if err := p.expectPunct("<"); err != nil {
			return DataType{}, err
		}
		elem, err := p.parseType()
		if err != nil {
			return DataType{}, err
		}
		if err := p.expectPunct(">"); err != nil {
			return DataType{}, err
		}
		if strings.EqualFold(t.text, "ARRAY") {
			return ArrayType(elem), nil
		}
		return MultisetType(elem), nil
	case "MAP":
		if err := p.expectPunct("<"); err != nil {
			return DataType{}, err
		}
		k, err := p.parseType()
		if err != nil {
			return DataType{}, err
		}
		if err := p.expectPunct(","); err != nil {
			return DataType{}, err
		}
		v, err := p.parseType()
		if err != nil {
			return DataType{}, err
		}
		if err := p.expectPunct(">"); err != nil {
			return DataType{}, err
		}
		return MapType(k, v), nil
	case "ROW":
		return p.parseRow()
	}
	return DataType{}, fmt.Errorf("unsupported type %q", t.text)
}

func (p *parser) optWithoutTimeZone() error {
	if !p.isWord("WITHOUT") {
		return nil
	}
	p.pos++
	if err := p.expectWord("TIME"); err != nil {
		return err
	}
	return p.expectWord("ZONE")
}

func (p *parser) parseRow() (DataType, error) {
	closing := ">"
	switch {
	case p.isPunct("<"):
	case p.isPunct("("):
		closing = ")"
	default:
		return DataType{}, fmt.Errorf("expected '<' after ROW, found %q", p.peek().text)
	}
	p.pos++
	var fields []DataField
	if p.isPunct(closing) {
		p.pos++
		return RowType(), nil
	}
	for {
		nt := p.peek()
		if nt.kind != tokWord && nt.kind != tokIdent {
			return DataType{}, fmt.Errorf("expected a field name, found %q", nt.text)
		}
		p.pos++
		if p.isPunct(":") {
			p.pos++
		}
		ft, err := p.parseType()
		if err != nil {
			return DataType{}, fmt.Errorf("field %s: %w", nt.text, err)
		}
		f := DataField{ID: len(fields), Name: nt.text, Type: ft}
		if p.peek().kind == tokQuoted {
			d := p.peek().text
			f.Description = &d
			p.pos++
		}
		fields = append(fields, f)
		if p.isPunct(",") {
			p.pos++
			continue
		}
		if err := p.expectPunct(closing); err != nil {
			return DataType{}, err
		}
		return RowType(fields...), nil
	}
}
