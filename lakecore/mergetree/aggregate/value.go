package aggregate

import (
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// lastValueFunc is FieldLastValueAgg: the latest value, NULL included; a
// retraction sets NULL. Sequence fields always use it.
type lastValueFunc struct{}

func (lastValueFunc) Agg(_, in any) (any, error)          { return in, nil }
func (lastValueFunc) AggReversed(acc, _ any) (any, error) { return acc, nil }
func (lastValueFunc) Retract(any, any) (any, error)       { return nil, nil }
func (lastValueFunc) Reset()                              {}

// lastNonNullValueFunc is FieldLastNonNullValueAgg, the default function: a
// NULL input keeps the accumulator; retracting a non-NULL value sets NULL,
// retracting NULL keeps the accumulator.
type lastNonNullValueFunc struct{}

func (lastNonNullValueFunc) Agg(acc, in any) (any, error) {
	if in == nil {
		return acc, nil
	}
	return in, nil
}

func (f lastNonNullValueFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }

func (lastNonNullValueFunc) Retract(acc, in any) (any, error) {
	if in != nil {
		return nil, nil
	}
	return acc, nil
}

func (lastNonNullValueFunc) Reset() {}

// firstValueFunc is FieldFirstValueAgg (nonNull false) and
// FieldFirstNonNullValueAgg (nonNull true): the first value of the key
// (the first non-NULL one), remembered by a flag that only Reset clears,
// so a later NULL accumulator is not refilled.
type firstValueFunc struct {
	noRetract
	name        string
	nonNull     bool
	initialized bool
}

func (f *firstValueFunc) Agg(acc, in any) (any, error) {
	if !f.initialized && (!f.nonNull || in != nil) {
		f.initialized = true
		return in, nil
	}
	return acc, nil
}

func (f *firstValueFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }
func (f *firstValueFunc) Reset()                               { f.initialized = false }

// boolFunc is FieldBoolAndAgg and FieldBoolOrAgg; NULL is skipped.
type boolFunc struct {
	noRetract
	name string
	and  bool
}

func (f boolFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	a, ok1 := acc.(bool)
	b, ok2 := in.(bool)
	if !ok1 || !ok2 {
		return nil, valueError(f.name, firstNonBool(acc, in))
	}
	if f.and {
		return a && b, nil
	}
	return a || b, nil
}

func (f boolFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }
func (boolFunc) Reset()                                 {}

func firstNonBool(a, b any) any {
	if _, ok := a.(bool); !ok {
		return a
	}
	return b
}

// listaggFunc is FieldListaggAgg: strings joined by the delimiter
// (fields.<f>.list-agg-delimiter, "," by default). NULL and empty strings
// are skipped. With fields.<f>.distinct, the input is split at the
// delimiter (at " " when the delimiter is empty, as
// BinaryStringUtils.splitByWholeSeparatorPreserveAllTokens) and only tokens
// that are non-empty and not yet among the accumulator's tokens are
// appended; the accumulator itself is never de-duplicated.
type listaggFunc struct {
	noRetract
	delimiter string
	distinct  bool
}

func newListagg(f types.DataField, o fieldOptions) (Func, error) {
	if f.Type.Kind != types.KindVarChar {
		return nil, typeError(nameListagg, f, "STRING")
	}
	if f.Type.Length != types.MaxLength {
		return nil, typeError(nameListagg, f, "STRING (unbounded VARCHAR)")
	}
	delim, ok := o.get(o.key(optListAggDelim))
	if !ok {
		delim = ","
	}
	distinct, err := o.boolOption(o.key(optDistinct))
	if err != nil {
		return nil, err
	}
	return listaggFunc{noRetract: noRetract{nameListagg}, delimiter: delim, distinct: distinct}, nil
}

func (f listaggFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	a, ok := acc.(string)
	if !ok {
		return nil, valueError(nameListagg, acc)
	}
	b, ok := in.(string)
	if !ok {
		return nil, valueError(nameListagg, in)
	}
	if b == "" {
		return a, nil
	}
	if a == "" {
		return b, nil
	}
	if !f.distinct {
		return a + f.delimiter + b, nil
	}
	sep := f.delimiter
	if sep == "" {
		sep = " "
	}
	seen := map[string]bool{}
	for _, t := range strings.Split(a, sep) {
		seen[t] = true
	}
	var out strings.Builder
	out.WriteString(a)
	for _, t := range strings.Split(b, sep) {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out.WriteString(f.delimiter)
		out.WriteString(t)
	}
	return out.String(), nil
}

func (f listaggFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }
func (listaggFunc) Reset()                                 {}
