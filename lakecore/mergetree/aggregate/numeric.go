package aggregate

import (
	"bytes"
	"fmt"
	"math/big"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// sumFunc is FieldSumAgg: integers wrap on overflow as Java's casts do;
// FLOAT and DOUBLE add in their own precision; DECIMAL adds as
// DecimalUtils.add (see decimalAdd). A NULL input keeps the accumulator and
// a NULL accumulator takes the input; retracting from a NULL accumulator
// gives the negated input.
type sumFunc struct{ t types.DataType }

func (f sumFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	return f.combine(acc, in, false)
}

func (f sumFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }

func (f sumFunc) Retract(acc, in any) (any, error) {
	if acc == nil || in == nil {
		if acc == nil {
			return f.negate(in)
		}
		return acc, nil
	}
	return f.combine(acc, in, true)
}

func (sumFunc) Reset() {}

func (f sumFunc) combine(acc, in any, subtract bool) (any, error) {
	switch a := acc.(type) {
	case int8:
		if b, ok := in.(int8); ok {
			if subtract {
				return a - b, nil
			}
			return a + b, nil
		}
	case int16:
		if b, ok := in.(int16); ok {
			if subtract {
				return a - b, nil
			}
			return a + b, nil
		}
	case int32:
		if b, ok := in.(int32); ok {
			if subtract {
				return a - b, nil
			}
			return a + b, nil
		}
	case int64:
		if b, ok := in.(int64); ok {
			if subtract {
				return a - b, nil
			}
			return a + b, nil
		}
	case float32:
		if b, ok := in.(float32); ok {
			if subtract {
				return a - b, nil
			}
			return a + b, nil
		}
	case float64:
		if b, ok := in.(float64); ok {
			if subtract {
				return a - b, nil
			}
			return a + b, nil
		}
	case types.Decimal:
		if b, ok := in.(types.Decimal); ok {
			return decimalAdd(a, b, f.t.Precision, f.t.Scale, subtract), nil
		}
	}
	return nil, fmt.Errorf("%w: sum of %T and %T on %s", ErrInvalidValue, acc, in, f.t)
}

// negate is FieldSumAgg.negative: integers wrap (-MIN is MIN), a DECIMAL
// goes through Decimal.fromBigDecimal.
func (f sumFunc) negate(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int8:
		return -x, nil
	case int16:
		return -x, nil
	case int32:
		return -x, nil
	case int64:
		return -x, nil
	case float32:
		return -x, nil
	case float64:
		return -x, nil
	case types.Decimal:
		return decimalFromExact(new(big.Int).Neg(unscaled(x)), x.Scale, f.t.Precision, f.t.Scale), nil
	}
	return nil, valueError("sum", v)
}

// productFunc is FieldProductAgg: integers wrap, DECIMAL multiplies exactly
// and rounds HALF_UP to the field's scale (NULL when the result exceeds the
// precision). Retract divides: integer division truncates and fails on
// zero as Java's ArithmeticException; a DECIMAL quotient must terminate
// (BigDecimal.divide) and is rounded HALF_UP. A NULL accumulator or input
// leaves the accumulator on retract.
type productFunc struct{ t types.DataType }

func (f productFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	switch a := acc.(type) {
	case int8:
		if b, ok := in.(int8); ok {
			return a * b, nil
		}
	case int16:
		if b, ok := in.(int16); ok {
			return a * b, nil
		}
	case int32:
		if b, ok := in.(int32); ok {
			return a * b, nil
		}
	case int64:
		if b, ok := in.(int64); ok {
			return a * b, nil
		}
	case float32:
		if b, ok := in.(float32); ok {
			return a * b, nil
		}
	case float64:
		if b, ok := in.(float64); ok {
			return a * b, nil
		}
	case types.Decimal:
		if b, ok := in.(types.Decimal); ok {
			p := new(big.Int).Mul(unscaled(a), unscaled(b))
			return decimalFromExact(p, a.Scale+b.Scale, f.t.Precision, f.t.Scale), nil
		}
	}
	return nil, fmt.Errorf("%w: product of %T and %T on %s", ErrInvalidValue, acc, in, f.t)
}

func (f productFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }

func (f productFunc) Retract(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return acc, nil
	}
	divZero := fmt.Errorf("%w: product retraction divides by zero (Java: ArithmeticException)", ErrInvalidValue)
	switch a := acc.(type) {
	case int8:
		if b, ok := in.(int8); ok {
			if b == 0 {
				return nil, divZero
			}
			return a / b, nil
		}
	case int16:
		if b, ok := in.(int16); ok {
			if b == 0 {
				return nil, divZero
			}
			return a / b, nil
		}
	case int32:
		if b, ok := in.(int32); ok {
			if b == 0 {
				return nil, divZero
			}
			return a / b, nil
		}
	case int64:
		if b, ok := in.(int64); ok {
			if b == 0 {
				return nil, divZero
			}
			return a / b, nil
		}
	case float32:
		if b, ok := in.(float32); ok {
			return a / b, nil
		}
	case float64:
		if b, ok := in.(float64); ok {
			return a / b, nil
		}
	case types.Decimal:
		if b, ok := in.(types.Decimal); ok {
			if unscaled(b).Sign() == 0 {
				return nil, divZero
			}
			q := new(big.Rat).Quo(a.Rat(), b.Rat())
			if !terminates(q.Denom()) {
				return nil, fmt.Errorf("%w: product retraction %s / %s has a non-terminating decimal expansion (Java: ArithmeticException)", ErrInvalidValue, a, b)
			}
			return decimalFromRat(q, f.t.Precision, f.t.Scale), nil
		}
	}
	return nil, fmt.Errorf("%w: product retraction of %T and %T on %s", ErrInvalidValue, acc, in, f.t)
}

func (productFunc) Reset() {}

// extremeFunc is FieldMaxAgg and FieldMinAgg, comparing as
// InternalRowUtils.compare: numbers and DECIMAL by value, FLOAT/DOUBLE by
// Float.compare (NaN largest, -0.0 < 0.0), strings and bytes as unsigned
// bytes, DATE/TIME/TIMESTAMP by time. Java's factory accepts every type but
// fails at run time on the others (BOOLEAN and the nested types) once two
// non-NULL values meet; so does this. On a tie max keeps the accumulator
// and min takes the input, as Java's two ternaries do.
type extremeFunc struct {
	noRetract
	name string
	t    types.DataType
	max  bool
}

func (f *extremeFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	c, err := f.compare(acc, in)
	if err != nil {
		return nil, err
	}
	if f.max {
		if c < 0 {
			return in, nil
		}
		return acc, nil
	}
	// FieldMinAgg: compare(acc, in) < 0 ? acc : in, so a tie takes the input.
	if c < 0 {
		return acc, nil
	}
	return in, nil
}

func (f *extremeFunc) compare(a, b any) (int, error) {
	switch f.t.Kind {
	case types.KindBoolean, types.KindArray, types.KindMap, types.KindMultiset, types.KindRow:
		return 0, fmt.Errorf("%w: %s cannot compare %s values (Java: Incomparable type)", ErrInvalidType, f.name, f.t)
	case types.KindBinary, types.KindVarBinary:
		x, ok1 := a.([]byte)
		y, ok2 := b.([]byte)
		if ok1 && ok2 {
			return bytes.Compare(x, y), nil
		}
	default:
		if c, ok := types.Compare(a, b); ok {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%w: %s of %T and %T on %s", ErrInvalidValue, f.name, a, b, f.t)
}

func (f *extremeFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }
func (f *extremeFunc) Reset()                               {}

func firstNonNil(acc, in any) any {
	if acc == nil {
		return in
	}
	return acc
}

func unscaled(d types.Decimal) *big.Int {
	if d.Unscaled == nil {
		return new(big.Int)
	}
	return d.Unscaled
}

// decimalAdd is DecimalUtils.add / subtract for DECIMAL(precision, scale).
// For a compact type (precision <= 18) whose operands share the scale, Java
// adds the unscaled longs with Math.addExact and keeps the result without
// checking the precision (DECIMAL(5,2) 999.99 + 999.99 = 1999.98); only a
// long overflow falls through to BigDecimal, which then exceeds the
// precision and gives NULL. Otherwise the exact sum is rounded HALF_UP to
// the scale and is NULL when it has more than precision digits
// (Decimal.fromBigDecimal).
func decimalAdd(a, b types.Decimal, precision, scale int, subtract bool) any {
	x, y := unscaled(a), unscaled(b)
	if precision <= 18 && a.Scale == b.Scale && a.Scale == scale && x.IsInt64() && y.IsInt64() {
		xi, yi := x.Int64(), y.Int64()
		var r int64
		var overflow bool
		if subtract {
			r = xi - yi
			overflow = (xi >= 0) != (yi >= 0) && (r >= 0) != (xi >= 0)
		} else {
			r = xi + yi
			overflow = (xi >= 0) == (yi >= 0) && (r >= 0) != (xi >= 0)
		}
		if !overflow {
			return types.Decimal{Unscaled: big.NewInt(r), Scale: scale}
		}
	}
	ra, rb := a.Rat(), b.Rat()
	if subtract {
		return decimalFromRat(new(big.Rat).Sub(ra, rb), precision, scale)
	}
	return decimalFromRat(new(big.Rat).Add(ra, rb), precision, scale)
}

// decimalFromExact is Decimal.fromBigDecimal of unscaled × 10^-fromScale.
func decimalFromExact(u *big.Int, fromScale, precision, scale int) any {
	r := new(big.Rat).SetFrac(u, types.Pow10Big(fromScale))
	if fromScale < 0 {
		r = new(big.Rat).SetInt(new(big.Int).Mul(u, types.Pow10Big(-fromScale)))
	}
	return decimalFromRat(r, precision, scale)
}

// decimalFromRat is Decimal.fromBigDecimal: r rounded HALF_UP (ties away
// from zero) to scale, NULL (a nil any) if it then has more than precision
// digits.
func decimalFromRat(r *big.Rat, precision, scale int) any {
	s := new(big.Rat).Mul(r, new(big.Rat).SetInt(types.Pow10Big(scale)))
	if scale < 0 {
		s = new(big.Rat).Quo(r, new(big.Rat).SetInt(types.Pow10Big(-scale)))
	}
	num, den := s.Num(), s.Denom()
	q, m := new(big.Int).QuoRem(new(big.Int).Abs(num), den, new(big.Int))
	if new(big.Int).Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if num.Sign() < 0 {
		q.Neg(q)
	}
	d := types.Decimal{Unscaled: q, Scale: scale}
	if !d.FitsPrecision(precision) {
		return nil
	}
	return d
}

// terminates reports whether 1/den has a finite decimal expansion: den has
// no prime factors but 2 and 5.
func terminates(den *big.Int) bool {
	d := new(big.Int).Set(den)
	two, five, zero := big.NewInt(2), big.NewInt(5), new(big.Int)
	m := new(big.Int)
	for d.Cmp(big.NewInt(1)) != 0 {
		switch {
		case m.Mod(d, two).Cmp(zero) == 0:
			d.Quo(d, two)
		case m.Mod(d, five).Cmp(zero) == 0:
			d.Quo(d, five)
		default:
			return false
		}
	}
	return true
}
