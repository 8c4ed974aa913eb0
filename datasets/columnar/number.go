package columnar

import (
	"math"
	"strconv"
	"unsafe"
)

// parseFloat parses a cell as a number; an empty cell is NaN. It reads the bytes in
// place: strconv does not keep its argument, and on error the text is copied.
func parseFloat(cell []byte) (float64, bool) {
	if len(cell) == 0 {
		return math.NaN(), true
	}
	if v, ok := fastFloat(cell); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(unsafe.String(&cell[0], len(cell)), 64)
	if err != nil {
		// Out of range values parse as ±Inf with ErrRange, as they would in Go.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	return v, true
}

// pow10 holds the powers of ten that a float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat parses the plain decimal numbers that make up most tables ([+-]digits with
// at most one '.', then an optional exponent e[+-]digits) when the result is exactly
// what strconv.ParseFloat returns by Clinger's fast path: the significant digits fit
// 2^53 and the power of ten is at most 22, so one correctly rounded multiplication or
// division of two exact float64s gives the correctly rounded value. It reports false
// for anything else (more digits, larger exponents, hex, inf, nan, underscores, bad
// syntax), which strconv.ParseFloat then decides. It is several times faster than
// strconv on such cells, which matters at 50 million cells.
func fastFloat(s []byte) (float64, bool) {
	i := 0
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		i++
	}
	var mant uint64
	digits, sig, exp := 0, 0, 0
	dot := false
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			digits++
			mant = mant*10 + uint64(c-'0')
			if mant != 0 {
				sig++
				if sig > 19 { // the next digit could overflow a uint64
					return 0, false
				}
			}
			if dot {
				exp--
			}
			continue
		}
		if c == '.' && !dot {
			dot = true
			continue
		}
		break
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return 0, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return 0, false
		}
		e := 0
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' || e > 1000 {
				return 0, false
			}
			e = e*10 + int(c-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant > 1<<53 {
		return 0, false // not exact as a float64
	}
	f := float64(mant)
	switch {
	case mant == 0:
	case exp == 0:
	case exp > 0 && exp <= 22:
		f *= pow10[exp]
	case exp < 0 && exp >= -22:
		f /= pow10[-exp]
	default:
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}
