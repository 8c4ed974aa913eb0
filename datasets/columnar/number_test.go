package columnar

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkFastFloat checks fastFloat(s) against strconv.ParseFloat, the independent
// truth: when it accepts s, strconv must accept it with the same bits.
func checkFastFloat(t *testing.T, s string) (accepted bool) {
	t.Helper()
	if s == "" {
		return false
	}
	got, ok := fastFloat([]byte(s))
	if !ok {
		return false
	}
	want, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("fastFloat(%q) = %v, but strconv.ParseFloat fails: %v", s, got, err)
	}
	if math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("fastFloat(%q) = %v (%#x), want %v (%#x)", s, got, math.Float64bits(got), want, math.Float64bits(want))
	}
	return true
}

func TestFastFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		fast bool // fastFloat decides it; otherwise strconv does
	}{
		{"0", true}, {"-0", true}, {"+0.0", true}, {"1", true}, {"-12.5", true},
		{".5", true}, {"5.", true}, {"+.25", true}, {"1e5", true}, {"1E-5", true},
		{"1.234567e-05", true}, {"-9.876543e+22", true}, {"123456789012345", true},
		{"0.000000000000000000001", true}, {"9007199254740992", true},
		{"9007199254740993", false}, {"1e23", false}, {"1e-23", false},
		{"12345678901234567890123", false}, {"0.1e400", false},
		{".", false}, {"-", false}, {"e5", false}, {"1e", false}, {"1e+", false}, {"1.2.3", false},
		{"1_0", false}, {"0x1p-2", false}, {"inf", false}, {"NaN", false}, {"1,5", false}, {" 1", false},
	}
	for _, tc := range tests {
		if got := checkFastFloat(t, tc.in); got != tc.fast {
			t.Errorf("fastFloat(%q) decided = %v, want %v", tc.in, got, tc.fast)
		}
	}
}

// TestFastFloatRandom checks fastFloat on random numbers in the forms tables hold:
// strconv's 'g', 'e' and 'f' formats at several precisions, and random digit strings.
func TestFastFloatRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	accepted := 0
	const n = 200_000
	for range n {
		var v float64
		switch rng.IntN(3) {
		case 0:
			v = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
		case 1:
			v = float64(rng.IntN(2_000_000) - 1_000_000)
		default:
			v = math.Float64frombits(rng.Uint64())
		}
		prec := rng.IntN(18) - 1
		fmtc := "gef"[rng.IntN(3)]
		if checkFastFloat(t, strconv.FormatFloat(v, fmtc, prec, 64)) {
			accepted++
		}
		digits := make([]byte, 1+rng.IntN(20))
		for i := range digits {
			digits[i] = byte('0' + rng.IntN(10))
		}
		if k := rng.IntN(len(digits) + 1); k < len(digits) {
			digits[k] = '.'
		}
		checkFastFloat(t, string(digits)+"e"+strconv.Itoa(rng.IntN(50)-25))
	}
	// The fast path is there for the common cases; most of the formatted ones must take it.
	if accepted < n/3 {
		t.Errorf("fastFloat took %d of %d formatted numbers, want at least a third", accepted, n)
	}
}

func FuzzFastFloat(f *testing.F) {
	for _, s := range []string{"0", "-1.5e-7", "123456789012345678", ".5", "1e22", "9007199254740993"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFastFloat(t, s)
	})
}

// BenchmarkParseFloat compares the cells' parser with strconv.ParseFloat on
// 7-significant-digit numbers, the generated tables of bench/peers.
func BenchmarkParseFloat(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	cells := make([][]byte, 4096)
	for i := range cells {
		cells[i] = strconv.AppendFloat(nil, rng.NormFloat64(), 'g', 7, 64)
	}
	b.Run("parseFloat", func(b *testing.B) {
		b.ReportAllocs()
		s := 0.0
		for i := 0; b.Loop(); i++ {
			v, _ := parseFloat(cells[i%len(cells)])
			s += v
		}
		benchSum = s
	})
	b.Run("strconv", func(b *testing.B) {
		b.ReportAllocs()
		s := 0.0
		for i := 0; b.Loop(); i++ {
			v, _ := strconv.ParseFloat(string(cells[i%len(cells)]), 64)
			s += v
		}
		benchSum = s
	})
}

// benchSum keeps benchmark results alive.
var benchSum float64
