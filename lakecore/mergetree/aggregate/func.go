package aggregate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Func is one field's aggregate function (FieldAggregator.java). acc is the
// value aggregated so far (nil before the first row), in the input field of
// the next row; each method returns the new accumulator.
type Func interface {
	// Agg folds an added row's field (+I, +U) into acc.
	Agg(acc, in any) (any, error)
	// AggReversed folds in as if it came before acc (partial-update's
	// sequence groups use it for older records); FieldAggregator's default
	// is Agg(in, acc).
	AggReversed(acc, in any) (any, error)
	// Retract withdraws a retracted row's field (-U, -D) from acc; it wraps
	// ErrRetractUnsupported where Java throws.
	Retract(acc, in any) (any, error)
	// Reset clears the per-key state (first_value's "seen a row") before
	// the next key.
	Reset()
}

// Option names, after "fields.<field>." (CoreOptions.FIELDS_PREFIX).
const (
	optAggFunction     = "aggregate-function"
	optDefaultFunction = "fields.default-aggregate-function"
	optIgnoreRetract   = "ignore-retract"
	optNestedKey       = "nested-key"
	optCountLimit      = "count-limit"
	optDistinct        = "distinct"
	optListAggDelim    = "list-agg-delimiter"
	optMapTSField      = "ts-field"
	optRemoveOnDelete  = "aggregation.remove-record-on-delete"
)

// The function names Java registers (each factory's identifier()).
const (
	nameSum                = "sum"
	nameProduct            = "product"
	nameMax                = "max"
	nameMin                = "min"
	nameLastValue          = "last_value"
	nameLastNonNullValue   = "last_non_null_value"
	nameFirstValue         = "first_value"
	nameFirstNonNullValue  = "first_non_null_value"
	nameFirstNotNullLegacy = "first_not_null_value"
	nameListagg            = "listagg"
	nameBoolAnd            = "bool_and"
	nameBoolOr             = "bool_or"
	nameCollect            = "collect"
	nameMergeMap           = "merge_map"
	nameMergeMapKeyTime    = "merge_map_with_keytime"
	nameNestedUpdate       = "nested_update"
	namePartialUpdate      = "nested_partial_update"
	namePrimaryKey         = "primary-key"
	nameRBM32              = "rbm32"
	nameRBM64              = "rbm64"
	nameHLLSketch          = "hll_sketch"
	nameThetaSketch        = "theta_sketch"
)

// New returns the aggregate function name for field f, configured by the
// table options (fields.<f>.list-agg-delimiter, .distinct, .nested-key,
// .count-limit, .ts-field, .ignore-retract), as
// FieldAggregatorFactory.create builds it: with fields.<f>.ignore-retract
// the function is wrapped so that Retract keeps the accumulator
// (FieldIgnoreRetractAgg.java).
//
// An unknown name, or one lakecore refuses (package doc), wraps
// ErrUnsupportedFunction naming the function and the field; a type the
// function does not accept wraps ErrInvalidType as Java's factory
// validates; a malformed option wraps ErrInvalidOption.
func New(name string, f types.DataField, options map[string]string) (Func, error) {
	o := fieldOptions{options: options, field: f.Name}
	removeOnDelete, err := o.boolOption(optRemoveOnDelete)
	if err != nil {
		return nil, err
	}
	ignoreRetract, err := o.boolOption(o.key(optIgnoreRetract))
	if err != nil {
		return nil, err
	}
	if removeOnDelete && ignoreRetract {
		return nil, fmt.Errorf("%w: %s and %s have conflicting behavior so should not be enabled at the same time",
			ErrInvalidOption, optRemoveOnDelete, o.key(optIgnoreRetract))
	}
	fn, err := newFunc(name, f, o)
	if err != nil {
		return nil, err
	}
	if ignoreRetract {
		return ignoreRetractFunc{fn}, nil
	}
	return fn, nil
}

func newFunc(name string, f types.DataField, o fieldOptions) (Func, error) {
	t := f.Type
	switch name {
	case nameSum, nameProduct:
		if !isNumeric(t) {
			return nil, typeError(name, f, "a numeric type")
		}
		if name == nameSum {
			return sumFunc{t: t}, nil
		}
		return productFunc{t: t}, nil
	case nameMax:
		return &extremeFunc{noRetract: noRetract{name}, name: name, t: t, max: true}, nil
	case nameMin:
		return &extremeFunc{noRetract: noRetract{name}, name: name, t: t}, nil
	case nameLastValue:
		return lastValueFunc{}, nil
	case nameLastNonNullValue:
		return lastNonNullValueFunc{}, nil
	case nameFirstValue:
		return &firstValueFunc{noRetract: noRetract{name}, name: name}, nil
	case nameFirstNonNullValue, nameFirstNotNullLegacy:
		return &firstValueFunc{noRetract: noRetract{name}, name: name, nonNull: true}, nil
	case nameBoolAnd, nameBoolOr:
		if t.Kind != types.KindBoolean {
			return nil, typeError(name, f, "BOOLEAN")
		}
		return boolFunc{noRetract: noRetract{name}, name: name, and: name == nameBoolAnd}, nil
	case nameListagg:
		return newListagg(f, o)
	case nameCollect:
		return newCollect(f, o)
	case nameMergeMap:
		return newMergeMap(f)
	case nameMergeMapKeyTime:
		return newMergeMapKeyTime(f, o)
	case nameNestedUpdate:
		return newNestedUpdate(f, o)
	case namePartialUpdate:
		return newNestedPartialUpdate(f, o)
	case namePrimaryKey:
		return primaryKeyFunc{}, nil
	case nameRBM32:
		return newRBM32(f)
	case nameThetaSketch:
		return newTheta(f)
	case nameRBM64, nameHLLSketch:
		if t.Kind != types.KindVarBinary {
			return nil, typeError(name, f, "VARBINARY")
		}
		what := "the DataSketches HLL union and its HLL_4 format are"
		if name == nameRBM64 {
			what = "Roaring64Bitmap's own (ART) serialization is"
		}
		return nil, fmt.Errorf("%w: %s for field %q: %s not implemented",
			ErrUnsupportedFunction, name, f.Name, what)
	}
	return nil, fmt.Errorf("%w: %q for field %q (Java: use unsupported aggregation or spell aggregate function incorrectly)",
		ErrUnsupportedFunction, name, f.Name)
}

func typeError(name string, f types.DataField, want string) error {
	return fmt.Errorf("%w: %s on field %q needs %s, not %s", ErrInvalidType, name, f.Name, want, f.Type)
}

// isNumeric reports DataTypeFamily.NUMERIC: the integers, FLOAT, DOUBLE and
// DECIMAL.
func isNumeric(t types.DataType) bool {
	switch t.Kind {
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindFloat, types.KindDouble, types.KindDecimal:
		return true
	}
	return false
}

// fieldOptions reads the options of one field (CoreOptions.field*).
type fieldOptions struct {
	options map[string]string
	field   string
}

func (o fieldOptions) key(suffix string) string { return "fields." + o.field + "." + suffix }

func (o fieldOptions) get(key string) (string, bool) {
	v, ok := o.options[key]
	return v, ok
}

// boolOption parses a boolean option as Paimon's OptionsUtils.convertToBoolean:
// true or false in any case; absent is false.
func (o fieldOptions) boolOption(key string) (bool, error) {
	v, ok := o.options[key]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s = %q is not a boolean", ErrInvalidOption, key, v)
}

// countLimit is fields.<f>.count-limit, Integer.MAX_VALUE by default.
func (o fieldOptions) countLimit() (int, error) {
	v, ok := o.get(o.key(optCountLimit))
	if !ok {
		return 1<<31 - 1, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %s = %q is not an int", ErrInvalidOption, o.key(optCountLimit), v)
	}
	return int(n), nil
}

// nestedKey is fields.<f>.nested-key split at commas, trimmed.
func (o fieldOptions) nestedKey() []string {
	v, ok := o.get(o.key(optNestedKey))
	if !ok {
		return nil
	}
	parts := javaSplitComma(v)
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// javaSplitComma is String.split(","): trailing empty strings are dropped.
func javaSplitComma(s string) []string {
	parts := strings.Split(s, ",")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		// "".split(",") is [""]; ",".split(",") is [].
		if s == "" {
			return []string{""}
		}
		return nil
	}
	return parts
}

// ignoreRetractFunc is FieldIgnoreRetractAgg: Retract keeps the
// accumulator. It does not forward AggReversed: Java's wrapper inherits the
// default, Agg(in, acc) of the wrapped function.
type ignoreRetractFunc struct{ Func }

func (f ignoreRetractFunc) AggReversed(acc, in any) (any, error) { return f.Func.Agg(in, acc) }

func (f ignoreRetractFunc) Retract(acc, _ any) (any, error) { return acc, nil }

// noRetract is embedded by functions Java cannot retract
// (FieldAggregator.retract throws).
type noRetract struct{ name string }

func (n noRetract) Retract(any, any) (any, error) {
	return nil, fmt.Errorf("%w: aggregate function %q does not support retraction; set 'fields.<field>.ignore-retract'='true' to ignore retraction messages",
		ErrRetractUnsupported, n.name)
}

// primaryKeyFunc is FieldPrimaryKeyAgg: a key column keeps the incoming
// value, for adds and retracts alike.
type primaryKeyFunc struct{}

func (primaryKeyFunc) Agg(_, in any) (any, error)          { return in, nil }
func (primaryKeyFunc) AggReversed(acc, _ any) (any, error) { return acc, nil }
func (primaryKeyFunc) Retract(_, in any) (any, error)      { return in, nil }
func (primaryKeyFunc) Reset()                              {}

func valueError(name string, v any) error {
	return fmt.Errorf("%w: %s got a %T", ErrInvalidValue, name, v)
}
