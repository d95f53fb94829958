package rowconv

import (
	"errors"
	"math/big"
	"strings"
)

// decText is an exact decimal number read from text:
// value = (-1)^neg × digits × 10^exp. digits has neither leading nor
// trailing zeros; zero is digits == "".
type decText struct {
	neg    bool
	digits string
	exp    int
}

// maxExponent bounds the exponent of numeric text so that a message such as
// "1e999999999" cannot make us build a billion-digit number.
const maxExponent = 100000

var errNotNumber = errors.New("not a number")

// parseDecText reads a decimal number: an optional sign, digits with an
// optional fraction (at least one digit in all), an optional exponent. It
// accepts what JSON accepts plus a leading "+", leading zeros, "1." and ".5";
// it rejects hex, underscores, "NaN" and "Infinity".
func parseDecText(s string) (decText, error) {
	var d decText
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[start:i]
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
	}
	if intPart == "" && frac == "" {
		return d, errNotNumber
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp <= maxExponent {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == es {
			return d, errNotNumber
		}
		if exp > maxExponent {
			return d, errors.New("exponent out of range")
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, errNotNumber
	}
	digits := intPart + frac
	exp -= len(frac)
	digits = strings.TrimLeft(digits, "0")
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if digits == "" {
		exp = 0
		d.neg = false
	}
	d.digits, d.exp = digits, exp
	return d, nil
}

// isInt reports whether the value is a whole number.
func (d decText) isInt() bool { return d.exp >= 0 }

// scaled returns |value| × 10^scale as decimal digits (no leading zeros, "0"
// for zero), truncated toward zero. exact is false if non-zero digits were
// dropped; overflow is true if the result has more than maxDigits digits (the
// digits are then not returned).
func (d decText) scaled(scale, maxDigits int) (digits string, exact, overflow bool) {
	if d.digits == "" {
		return "0", true, false
	}
	shift := d.exp + scale
	if shift >= 0 {
		if len(d.digits)+shift > maxDigits {
			return "", true, true
		}
		return d.digits + strings.Repeat("0", shift), true, false
	}
	keep := len(d.digits) + shift
	if keep <= 0 {
		return "0", false, false
	}
	if keep > maxDigits {
		return "", false, true
	}
	// digits has no trailing zeros, so dropping any of them is inexact.
	return d.digits[:keep], false, false
}

// bigFloor returns floor(value × 10^scale) as a big.Int, or false if it has
// more than maxDigits digits.
func (d decText) bigFloor(scale, maxDigits int) (*big.Int, bool) {
	digits, exact, overflow := d.scaled(scale, maxDigits)
	if overflow {
		return nil, false
	}
	n, _ := new(big.Int).SetString(digits, 10)
	if d.neg {
		n.Neg(n)
		if !exact {
			n.Sub(n, big.NewInt(1))
		}
	}
	return n, true
}

// validNumberText is a fast syntax check for float parsing; it accepts the
// same language as parseDecText.
func validNumberText(s string) bool {
	_, err := parseDecText(s)
	return err == nil
}

// trimSpace trims ASCII white space, which CSV-derived and hand-written
// numeric strings often carry.
func trimSpace(s string) string {
	return strings.Trim(s, " \t\r\n")
}
