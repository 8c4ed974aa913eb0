package logistic

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Fit fits a logistic regression of the 0/1 labels y on the rows of x. weights are the
// sample weights (nil means all 1; they must be finite and >= 0 with a positive sum for
// each class). It returns an error wrapping ErrInvalidConfig, ErrInvalidData or ErrNumeric;
// reaching cfg.MaxIter is not an error (see Model.Converged).
func Fit(x mat.Matrix, y, weights []float64, cfg Config) (*Model, error) {
	return FitContext(context.Background(), x, y, weights, cfg)
}

// FitContext is Fit that stops early with ctx's error when ctx is done, checked before
// every evaluation of the objective.
func FitContext(ctx context.Context, x mat.Matrix, y, weights []float64, cfg Config) (*Model, error) {
	n, d := x.Dims()
	if err := cfg.validate(d); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	names := cfg.FeatureNames
	if names == nil {
		names = make([]string, d)
		for j := range names {
			names[j] = fmt.Sprintf("x%d", j)
		}
	}
	cfg.FeatureNames = nil
	switch {
	case n == 0 || d == 0:
		return nil, fmt.Errorf("%w: %d rows, %d features", ErrInvalidData, n, d)
	case len(y) != n:
		return nil, fmt.Errorf("%w: %d labels for %d rows", ErrInvalidData, len(y), n)
	case weights != nil && len(weights) != n:
		return nil, fmt.Errorf("%w: %d weights for %d rows", ErrInvalidData, len(weights), n)
	}
	sw := weights
	if sw == nil {
		sw = make([]float64, n)
		for i := range sw {
			sw[i] = 1
		}
	}
	var classW [2]float64
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("%w: row %d: label %v, want 0 or 1", ErrInvalidData, i, v)
		}
		if w := sw[i]; w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("%w: row %d: weight %v", ErrInvalidData, i, w)
		}
		classW[int(v)] += sw[i]
	}
	if !(classW[0] > 0 && classW[1] > 0) {
		return nil, fmt.Errorf("%w: class weight totals %v (label 0) and %v (label 1), need both > 0", ErrInvalidData, classW[0], classW[1])
	}

	raw := rowMajor(x)
	mean, scale, err := standardisation(raw, sw, names)
	if err != nil {
		return nil, err
	}
	// c_i: sample weight times class weight.
	c := sw
	if cfg.ClassWeight == Balanced {
		total := classW[0] + classW[1]
		cw := [2]float64{total / (2 * classW[0]), total / (2 * classW[1])}
		c = make([]float64, n)
		for i := range c {
			c[i] = sw[i] * cw[int(y[i])]
		}
	}

	active := make([]int, d)
	for j := range active {
		active[j] = j
	}
	target := cfg.NFeaturesToSelect
	if target == 0 {
		target = d
	}
	// Start at w = 0 and the intercept of the weighted class prior.
	var c0, c1 float64
	for i, v := range y {
		if v == 1 {
			c1 += c[i]
		} else {
			c0 += c[i]
		}
	}
	theta := make([]float64, d+1)
	theta[d] = math.Log(c1 / c0)
	var res solveResult
	for {
		ds := newDesign(raw, mean, scale, active, y, c, cfg.Unpenalized)
		res, err = solve(ctx, ds, theta, cfg)
		if err != nil {
			return nil, err
		}
		if len(active) <= target {
			break
		}
		// Drop the Step features with the smallest |w| (ties: lower index first, as
		// scikit-learn's stable argsort), keep the rest as the next warm start.
		k := min(cfg.Step, len(active)-target)
		order := make([]int, len(active))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmpFloat(math.Abs(res.theta[a]), math.Abs(res.theta[b]))
		})
		drop := make(map[int]bool, k)
		for _, i := range order[:k] {
			drop[i] = true
		}
		next := active[:0:0]
		theta = theta[:0]
		for i, j := range active {
			if !drop[i] {
				next = append(next, j)
				theta = append(theta, res.theta[i])
			}
		}
		theta = append(theta, res.theta[len(active)])
		active = next
	}

	w := make([]float64, d)
	selected := make([]bool, d)
	for i, j := range active {
		w[j] = res.theta[i]
		selected[j] = true
	}
	m := newModel(names, mean, scale, w, res.theta[len(active)], selected, cfg)
	ll := m.weightedLogLoss(raw, y, sw)
	if cfg.ClipToTrainingRange {
		// The training loss is that of the raw inputs, which lie in the range anyway.
		m.lo, m.hi = trainingRange(raw, sw, mean)
	}
	if math.IsNaN(ll) || math.IsInf(ll, 0) {
		return nil, fmt.Errorf("%w: training log loss %v", ErrNumeric, ll)
	}
	m.stats = TrainStats{Rows: n, Iterations: res.iterations, Converged: res.converged, LogLoss: ll}
	return m, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dense is a row-major view of a matrix: element (i, j) is data[i*stride+j].
type dense struct {
	rows, cols, stride int
	data               []float64
}

// rowMajor returns x's elements row-major, without copying when x is a mat.RawMatrixer.
func rowMajor(x mat.Matrix) dense {
	r, c := x.Dims()
	if rm, ok := x.(mat.RawMatrixer); ok {
		g := rm.RawMatrix()
		return dense{rows: g.Rows, cols: g.Cols, stride: g.Stride, data: g.Data}
	}
	data := make([]float64, r*c)
	if cv, ok := x.(mat.RawColViewer); ok {
		// A column-major matrix (the trainer's columnar.Matrix): copy column by column.
		for j := range c {
			for i, v := range cv.RawColView(j) {
				data[i*c+j] = v
			}
		}
		return dense{rows: r, cols: c, stride: c, data: data}
	}
	for i := range r {
		for j := range c {
			data[i*c+j] = x.At(i, j)
		}
	}
	return dense{rows: r, cols: c, stride: c, data: data}
}

// standardisation returns the weighted mean and population standard deviation of each
// column over its non-NaN values. A column with no weighted values gets mean 0; a
// (numerically) constant column gets scale 1, as scikit-learn's StandardScaler.
func standardisation(x dense, sw []float64, names []string) (mean, scale []float64, err error) {
	d := x.cols
	mean = make([]float64, d)
	scale = make([]float64, d)
	wsum := make([]float64, d)
	for i := range x.rows {
		row := x.data[i*x.stride : i*x.stride+d]
		w := sw[i]
		for j, v := range row {
			if math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%w: row %d, feature %q: %v", ErrInvalidData, i, names[j], v)
			}
			if v == v {
				mean[j] += w * v
				wsum[j] += w
			}
		}
	}
	for j := range mean {
		if wsum[j] > 0 {
			mean[j] /= wsum[j]
		}
	}
	for i := range x.rows {
		row := x.data[i*x.stride : i*x.stride+d]
		w := sw[i]
		for j, v := range row {
			if v == v {
				dv := v - mean[j]
				scale[j] += w * dv * dv
			}
		}
	}
	const tiny = 10 * 2.220446049250313e-16 // 10 machine epsilons, StandardScaler's cut-off
	for j := range scale {
		s := 0.0
		if wsum[j] > 0 {
			s = math.Sqrt(scale[j] / wsum[j])
		}
		if s < tiny*math.Max(1, math.Abs(mean[j])) {
			s = 1
		}
		scale[j] = s
	}
	return mean, scale, nil
}

// design is standardised training data for the features in use: row i is
// x[i*d:(i+1)*d], with NaN imputed by 0 (the mean, standardised).
type design struct {
	n, d int
	x    []float64
	y    []float64
	c    []float64 // row weights: sample weight × class weight
	sumC float64
	// pen is the penalty factor of each column in use: 1, or 0 for a column of
	// Config.Unpenalized.
	pen []float64

	// Per-chunk partial sums, reused between evaluations.
	partLoss []float64
	partGrad []float64
}

// chunkRows is the number of rows one worker sums at a time. Chunks are combined in a
// fixed order, so results do not depend on the number of workers.
const chunkRows = 4096

func newDesign(x dense, mean, scale []float64, active []int, y, c []float64, unpenalized []int) *design {
	d := len(active)
	ds := &design{n: x.rows, d: d, x: make([]float64, x.rows*d), y: y, c: c, pen: make([]float64, d)}
	for k, j := range active {
		ds.pen[k] = 1
		if slices.Contains(unpenalized, j) {
			ds.pen[k] = 0
		}
	}
	for i := range x.rows {
		src := x.data[i*x.stride:]
		dst := ds.x[i*d : (i+1)*d]
		for k, j := range active {
			v := src[j]
			if v != v {
				dst[k] = 0
				continue
			}
			dst[k] = (v - mean[j]) / scale[j]
		}
	}
	for _, v := range c {
		ds.sumC += v
	}
	nc := (ds.n + chunkRows - 1) / chunkRows
	ds.partLoss = make([]float64, nc)
	ds.partGrad = make([]float64, nc*(d+1))
	return ds
}

// dataLoss returns (1/Σc) Σ_i c_i ℓ_i at theta = (w, b) and stores its gradient in grad.
func (ds *design) dataLoss(theta, grad []float64) float64 {
	d := ds.d
	nc := len(ds.partLoss)
	workers := min(runtime.GOMAXPROCS(0), nc)
	if workers <= 1 {
		for k := range nc {
			ds.chunk(k, theta)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					k := int(next.Add(1)) - 1
					if k >= nc {
						return
					}
					ds.chunk(k, theta)
				}
			})
		}
		wg.Wait()
	}
	for j := range grad {
		grad[j] = 0
	}
	var loss float64
	for k := range nc {
		loss += ds.partLoss[k]
		floats.Add(grad, ds.partGrad[k*(d+1):(k+1)*(d+1)])
	}
	inv := 1 / ds.sumC
	floats.Scale(inv, grad)
	return loss * inv
}

// chunk computes chunk k's weighted loss and gradient into partLoss[k] and partGrad.
func (ds *design) chunk(k int, theta []float64) {
	d := ds.d
	w, b := theta[:d], theta[d]
	g := ds.partGrad[k*(d+1) : (k+1)*(d+1)]
	gw := g[:d]
	for j := range g {
		g[j] = 0
	}
	var gb, loss float64
	hi := min((k+1)*chunkRows, ds.n)
	for i := k * chunkRows; i < hi; i++ {
		row := ds.x[i*d : (i+1)*d]
		z := b
		for j, v := range row {
			z += w[j] * v
		}
		ci, yi := ds.c[i], ds.y[i]
		// ℓ = log(1+e^z) - y z and σ(z), from one exponential of -|z|.
		e := math.Exp(-math.Abs(z))
		var p float64
		if z >= 0 {
			p = 1 / (1 + e)
			loss += ci * (z + math.Log1p(e) - yi*z)
		} else {
			p = e / (1 + e)
			loss += ci * (math.Log1p(e) - yi*z)
		}
		r := ci * (p - yi)
		if r == 0 {
			continue
		}
		for j, v := range row {
			gw[j] += r * v
		}
		gb += r
	}
	g[d] = gb
	ds.partLoss[k] = loss
}

// solveResult is the outcome of one fit on a design.
type solveResult struct {
	theta      []float64
	iterations int
	converged  bool
}

func solve(ctx context.Context, ds *design, theta0 []float64, cfg Config) (solveResult, error) {
	if cfg.Penalty == L1 {
		return solveL1(ctx, ds, theta0, cfg)
	}
	return solveL2(ctx, ds, theta0, cfg)
}

// l2Objective evaluates F(θ) = (1/Σc)(Σ c_i ℓ_i + Σ_j pen_j w_j²/(2C)) and caches the gradient of
// the last point, since gonum asks for the value and the gradient separately.
type l2Objective struct {
	ds     *design
	lambda float64 // 1/(C Σc)
	lastX  []float64
	lastF  float64
	lastG  []float64
	evals  int
}

func (o *l2Objective) eval(x []float64) float64 {
	if o.lastX != nil && floats.Equal(x, o.lastX) {
		return o.lastF
	}
	o.evals++
	d := o.ds.d
	if o.lastG == nil {
		o.lastG = make([]float64, d+1)
	}
	f := o.ds.dataLoss(x, o.lastG)
	for j, w := range x[:d] {
		f += 0.5 * o.lambda * o.ds.pen[j] * w * w
		o.lastG[j] += o.lambda * o.ds.pen[j] * w
	}
	o.lastX = append(o.lastX[:0], x...)
	o.lastF = f
	return f
}

func solveL2(ctx context.Context, ds *design, theta0 []float64, cfg Config) (solveResult, error) {
	obj := &l2Objective{ds: ds, lambda: 1 / (cfg.C * ds.sumC)}
	p := optimize.Problem{
		Status: func() (optimize.Status, error) {
			if err := ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			return optimize.NotTerminated, nil
		},
		Func: obj.eval,
		Grad: func(grad, x []float64) {
			obj.eval(x)
			copy(grad, obj.lastG)
		},
	}
	settings := &optimize.Settings{
		GradientThreshold: cfg.Tol,
		MajorIterations:   cfg.MaxIter,
		Converger:         optimize.NeverTerminate{},
	}
	method := &optimize.LBFGS{Linesearcher: &optimize.MoreThuente{}}
	res, err := optimize.Minimize(p, theta0, settings, method)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return solveResult{}, fmt.Errorf("logistic: fit: %w", ctxErr)
	}
	if res == nil {
		return solveResult{}, fmt.Errorf("%w: l-bfgs: %w", ErrNumeric, err)
	}
	if math.IsNaN(res.F) || math.IsInf(res.F, 0) {
		return solveResult{}, fmt.Errorf("%w: l-bfgs: objective %v", ErrNumeric, res.F)
	}
	// A line search that can make no progress (err != nil) is accepted like reaching the
	// iteration limit: the point is the best found and the model says it did not converge,
	// unless the gradient is below the tolerance after all.
	converged := res.Status == optimize.GradientThreshold
	if err != nil {
		obj.eval(res.X)
		converged = floats.Norm(obj.lastG, math.Inf(1)) < cfg.Tol
	}
	return solveResult{theta: res.X, iterations: res.MajorIterations, converged: converged}, nil
}

// solveL1 minimises (1/Σc)(Σ c_i ℓ_i) + λ Σ_j pen_j |w_j|, λ = 1/(C Σc), with FISTA: backtracking on
// the Lipschitz constant and the gradient restart of O'Donoghue and Candès (2015).
func solveL1(ctx context.Context, ds *design, theta0 []float64, cfg Config) (solveResult, error) {
	d := ds.d
	lambda := 1 / (cfg.C * ds.sumC)
	prox := func(dst, v []float64, t float64) {
		for j := range d {
			dst[j] = softThreshold(v[j], t*lambda*ds.pen[j])
		}
		dst[d] = v[d]
	}
	x := slices.Clone(theta0)
	prox(x, x, 0)
	xPrev := slices.Clone(x)
	yk := slices.Clone(x)
	gy := make([]float64, d+1)
	gx := make([]float64, d+1)
	xn := make([]float64, d+1)
	step := make([]float64, d+1)
	// For standardised inputs and the averaged loss, the Lipschitz constant of the
	// gradient is at most (d+1)/4; start lower and let backtracking raise it.
	lip := 0.25
	t := 1.0
	for it := 1; it <= cfg.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			return solveResult{}, fmt.Errorf("logistic: fit: %w", err)
		}
		fy := ds.dataLoss(yk, gy)
		var fx float64
		for {
			floats.AddScaledTo(step, yk, -1/lip, gy)
			prox(xn, step, 1/lip)
			fx = ds.dataLoss(xn, gx)
			floats.SubTo(step, xn, yk)
			bound := fy + floats.Dot(gy, step) + 0.5*lip*floats.Dot(step, step)
			if math.IsNaN(fx) {
				return solveResult{}, fmt.Errorf("%w: fista: objective NaN", ErrNumeric)
			}
			if fx <= bound*(1+1e-12) {
				break
			}
			lip *= 2
		}
		if l1Optimality(xn, gx, lambda, ds.pen) < cfg.Tol {
			return solveResult{theta: xn, iterations: it, converged: true}, nil
		}
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		// Restart the momentum when it points uphill: ⟨y - x⁺, x⁺ - x⟩ > 0.
		floats.SubTo(step, yk, xn)
		var restart float64
		for j := range step {
			restart += step[j] * (xn[j] - xPrev[j])
		}
		if restart > 0 {
			tn, t = 1, 1
		}
		beta := (t - 1) / tn
		for j := range yk {
			yk[j] = xn[j] + beta*(xn[j]-xPrev[j])
		}
		copy(xPrev, xn)
		t = tn
	}
	return solveResult{theta: slices.Clone(xPrev), iterations: cfg.MaxIter, converged: false}, nil
}

func softThreshold(v, t float64) float64 {
	switch {
	case v > t:
		return v - t
	case v < -t:
		return v + t
	}
	return 0
}

// l1Optimality is the infinity norm of the minimum-norm subgradient of the L1 objective
// at x with data gradient g and penalty factors pen: zero exactly at the optimum.
func l1Optimality(x, g []float64, lambda float64, pen []float64) float64 {
	d := len(x) - 1
	m := math.Abs(g[d])
	for j := range d {
		lambda := lambda * pen[j]
		var s float64
		switch {
		case x[j] > 0:
			s = math.Abs(g[j] + lambda)
		case x[j] < 0:
			s = math.Abs(g[j] - lambda)
		default:
			s = math.Max(math.Abs(g[j])-lambda, 0)
		}
		m = math.Max(m, s)
	}
	return m
}

// trainingRange returns the smallest and largest value of each column of x over the rows
// of nonzero weight, NaN ignored; a column without a value gets its mean as both, which
// is what Predict imputes for it anyway.
func trainingRange(x dense, sw, mean []float64) (lo, hi []float64) {
	lo, hi = make([]float64, x.cols), make([]float64, x.cols)
	for j := range lo {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	for i := range x.rows {
		if sw[i] == 0 {
			continue
		}
		for j, v := range x.data[i*x.stride : i*x.stride+x.cols] {
			if v == v {
				lo[j], hi[j] = min(lo[j], v), max(hi[j], v)
			}
		}
	}
	for j := range lo {
		if lo[j] > hi[j] {
			lo[j], hi[j] = mean[j], mean[j]
		}
	}
	return lo, hi
}
