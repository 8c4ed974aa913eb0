package gbm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// link is the output transform of an objective: how a raw score becomes a prediction.
type link uint8

const (
	linkIdentity link = iota // regression objectives, and models without objective
	linkSquare               // regression objectives with "sqrt": sign(x)·x²
	linkSigmoid              // binary (1/(1+exp(-k·x))) and cross_entropy (k = 1)
	linkExp                  // poisson, gamma, tweedie: log link
	linkSoftmax              // multiclass
)

// String returns the name of the link.
func (l link) String() string {
	switch l {
	case linkIdentity:
		return "identity"
	case linkSquare:
		return "square"
	case linkSigmoid:
		return "sigmoid"
	case linkExp:
		return "exp"
	case linkSoftmax:
		return "softmax"
	}
	return "link(" + strconv.Itoa(int(l)) + ")"
}

// objective is a parsed LightGBM objective string such as "binary sigmoid:1" or
// "multiclass num_class:3".
type objective struct {
	text    string // the string as written in objective=, "" for none (custom objective)
	name    string
	link    link
	sigmoid float64 // the k of linkSigmoid
	nClass  int     // 1 except for multiclass
}

// parseObjective parses the value of a LightGBM objective= line. The output transforms
// are LightGBM's ConvertOutput of each objective (src/objective/*.hpp).
func parseObjective(s string) (objective, error) {
	o := objective{text: s, link: linkIdentity, nClass: 1, sigmoid: 1}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		o.text = ""
		return o, nil
	}
	o.name = fields[0]
	// allowed lists the extra tokens each objective may carry.
	var allowed []string
	switch o.name {
	case "regression", "regression_l1", "huber", "fair", "quantile", "mape":
		allowed = []string{"sqrt"}
	case "binary":
		o.link = linkSigmoid
		allowed = []string{"sigmoid"}
	case "cross_entropy":
		o.link = linkSigmoid
	case "poisson", "gamma", "tweedie":
		o.link = linkExp
	case "multiclass":
		o.link = linkSoftmax
		o.nClass = 0
		allowed = []string{"num_class"}
	default:
		return o, fmt.Errorf("%w: %q", ErrUnsupportedObjective, o.name)
	}
	for _, tok := range fields[1:] {
		key, val, hasVal := strings.Cut(tok, ":")
		ok := false
		for _, a := range allowed {
			ok = ok || a == key
		}
		if !ok {
			return o, fmt.Errorf("%w: %q with option %q", ErrUnsupportedObjective, o.name, tok)
		}
		switch key {
		case "sqrt":
			if hasVal {
				return o, fmt.Errorf("%w: objective option %q", ErrFormat, tok)
			}
			o.link = linkSquare
		case "sigmoid":
			k, err := strconv.ParseFloat(val, 64)
			if err != nil || !(k > 0) || math.IsInf(k, 0) {
				return o, fmt.Errorf("%w: objective option %q: want a positive number", ErrFormat, tok)
			}
			o.sigmoid = k
		case "num_class":
			k, err := strconv.Atoi(val)
			if err != nil || k < 2 {
				return o, fmt.Errorf("%w: objective option %q: want an integer >= 2", ErrFormat, tok)
			}
			o.nClass = k
		}
	}
	if o.link == linkSoftmax && o.nClass == 0 {
		return o, fmt.Errorf("%w: objective %q lacks num_class", ErrFormat, s)
	}
	return o, nil
}

// transform converts one row's raw scores raw (nClass values) into predictions in
// place, with the same floating-point operations as LightGBM so that results agree to
// the last bit.
func (o *objective) transform(raw []float64) {
	switch o.link {
	case linkIdentity:
	case linkSquare:
		x := raw[0]
		raw[0] = math.Copysign(x*x, x)
	case linkSigmoid:
		raw[0] = 1 / (1 + math.Exp(-o.sigmoid*raw[0]))
	case linkExp:
		raw[0] = math.Exp(raw[0])
	case linkSoftmax:
		// Common::Softmax: subtract the maximum, exponentiate, divide by the sum.
		m := raw[0]
		for _, v := range raw[1:] {
			m = max(m, v)
		}
		sum := 0.0
		for i, v := range raw {
			raw[i] = math.Exp(v - m)
			sum += raw[i]
		}
		for i := range raw {
			raw[i] /= sum
		}
	}
}
