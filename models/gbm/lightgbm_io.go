package gbm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sqpredict/sqpredict/internal/atomicfile"
)

// supportedVersions are the version= headers ReadLightGBM accepts: v2 (LightGBM 2.x),
// v3 (3.x and the first 4.x releases) and v4 (later 4.x). Each has a file in testdata/.
var supportedVersions = []string{"v2", "v3", "v4"}

// writeVersion is the version= header WriteLightGBM writes: the one of the reference
// models written by LightGBM 4.x (testdata/genlin_*.model).
const writeVersion = "v3"

// LoadLightGBMFile reads a LightGBM text model from the file at path.
func LoadLightGBMFile(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gbm: %w", err)
	}
	defer f.Close()
	m, err := ReadLightGBM(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ReadLightGBM reads a model in LightGBM's text format (the output of
// Booster.save_model): the header, the Tree=K blocks up to "end of trees", and the
// parameters section. It accepts versions v2, v3 and v4, numerical and categorical
// splits with every missing type, and the objectives listed in the package
// documentation; linear trees, other objectives and other versions are rejected with
// ErrUnsupportedFeature, ErrUnsupportedObjective or ErrUnsupportedVersion, a malformed
// file with ErrFormat. Errors name the line or the tree and field at fault.
func ReadLightGBM(r io.Reader) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("gbm: reading model: %w", err)
	}
	p := &lgParser{sc: bufio.NewScanner(bytes.NewReader(data))}
	p.sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	return p.parse()
}

// lgParser reads a LightGBM text model line by line.
type lgParser struct {
	sc     *bufio.Scanner
	line   int
	peeked *string
}

// next returns the next line without its line ending, and false at the end.
func (p *lgParser) next() (string, bool) {
	if p.peeked != nil {
		s := *p.peeked
		p.peeked = nil
		return s, true
	}
	if !p.sc.Scan() {
		return "", false
	}
	p.line++
	return strings.TrimRight(p.sc.Text(), "\r"), true
}

// unread makes the next call to next return s again.
func (p *lgParser) unread(s string) { p.peeked = &s }

func (p *lgParser) errorf(format string, args ...any) error {
	return fmt.Errorf("gbm: line %d: "+format, append([]any{p.line}, args...)...)
}

func (p *lgParser) parse() (*Model, error) {
	first := ""
	for {
		s, ok := p.next()
		if !ok {
			break
		}
		if s = strings.TrimSpace(s); s != "" {
			first = s
			break
		}
	}
	if first != "tree" {
		return nil, p.errorf("%w: first line is %q, want \"tree\"", ErrFormat, first)
	}
	header := map[string]string{}
	flags := map[string]bool{}
	for {
		s, ok := p.next()
		if !ok {
			return nil, p.errorf("%w: no trees and no \"end of trees\"", ErrFormat)
		}
		if strings.HasPrefix(s, "Tree=") || s == "end of trees" {
			p.unread(s)
			break
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			flags[s] = true // e.g. average_output
			continue
		}
		if _, dup := header[k]; dup {
			return nil, p.errorf("%w: header %s repeated", ErrFormat, k)
		}
		header[k] = v
	}
	m, err := modelFromHeader(header, flags)
	if err != nil {
		return nil, p.errorf("%w", err)
	}
	for {
		s, ok := p.next()
		if !ok {
			return nil, p.errorf("%w: missing \"end of trees\"", ErrFormat)
		}
		if s == "end of trees" {
			break
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		id, ok := strings.CutPrefix(s, "Tree=")
		if !ok {
			return nil, p.errorf("%w: %q, want Tree=%d", ErrFormat, s, len(m.trees))
		}
		if id != strconv.Itoa(len(m.trees)) {
			return nil, p.errorf("%w: %q, want Tree=%d", ErrFormat, s, len(m.trees))
		}
		fields := map[string]string{}
		for {
			s, ok := p.next()
			if !ok || strings.TrimSpace(s) == "" {
				break
			}
			if strings.HasPrefix(s, "Tree=") || s == "end of trees" {
				p.unread(s)
				break
			}
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return nil, p.errorf("%w: tree %d: line %q is not key=value", ErrFormat, len(m.trees), s)
			}
			fields[k] = v
		}
		t, err := parseTree(fields)
		if err != nil {
			return nil, p.errorf("tree %d: %w", len(m.trees), err)
		}
		if t.maxFeature() >= m.nFeatures {
			return nil, p.errorf("tree %d: %w: split feature %d, but max_feature_idx=%d", len(m.trees), ErrFormat, t.maxFeature(), m.nFeatures-1)
		}
		m.trees = append(m.trees, t)
	}
	if len(m.trees)%m.nClasses != 0 {
		return nil, p.errorf("%w: %d trees is not a multiple of num_tree_per_iteration=%d", ErrFormat, len(m.trees), m.nClasses)
	}
	if sizes, ok := header["tree_sizes"]; ok && len(strings.Fields(sizes)) != len(m.trees) {
		return nil, p.errorf("%w: tree_sizes lists %d trees, the file has %d", ErrFormat, len(strings.Fields(sizes)), len(m.trees))
	}
	// The parameters section, kept for writing the model back.
	inParams := false
	for {
		s, ok := p.next()
		if !ok {
			break
		}
		switch {
		case s == "parameters:":
			inParams = true
		case s == "end of parameters":
			inParams = false
		case inParams && strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
			m.params = append(m.params, s)
		case strings.HasPrefix(s, "pandas_categorical:"):
			m.pandasCategorical = s
		}
	}
	if err := p.sc.Err(); err != nil {
		return nil, fmt.Errorf("gbm: reading model: %w", err)
	}
	m.compile()
	return m, nil
}

// modelFromHeader checks the header fields and returns a model without trees.
func modelFromHeader(h map[string]string, flags map[string]bool) (*Model, error) {
	v, ok := h["version"]
	if !ok {
		return nil, fmt.Errorf("%w: no version= header", ErrUnsupportedVersion)
	}
	known := false
	for _, s := range supportedVersions {
		known = known || s == v
	}
	if !known {
		return nil, fmt.Errorf("%w: version=%s (supported: %s)", ErrUnsupportedVersion, v, strings.Join(supportedVersions, ", "))
	}
	atoi := func(key string, def int) (int, error) {
		s, ok := h[key]
		if !ok {
			if def < 0 {
				return 0, fmt.Errorf("%w: no %s= header", ErrFormat, key)
			}
			return def, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%w: %s=%q is not an integer", ErrFormat, key, s)
		}
		return n, nil
	}
	numClass, err := atoi("num_class", -1)
	if err != nil {
		return nil, err
	}
	perIter, err := atoi("num_tree_per_iteration", numClass)
	if err != nil {
		return nil, err
	}
	maxIdx, err := atoi("max_feature_idx", -1)
	if err != nil {
		return nil, err
	}
	if numClass < 1 || perIter < 1 || perIter > 1<<16 {
		return nil, fmt.Errorf("%w: num_class=%d, num_tree_per_iteration=%d", ErrFormat, numClass, perIter)
	}
	if maxIdx < 0 || maxIdx >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: max_feature_idx=%d", ErrFormat, maxIdx)
	}
	obj, err := parseObjective(h["objective"])
	if err != nil {
		return nil, err
	}
	if obj.link == linkSoftmax && (obj.nClass != numClass || perIter != numClass) {
		return nil, fmt.Errorf("%w: objective %q with num_class=%d and num_tree_per_iteration=%d", ErrFormat, obj.text, numClass, perIter)
	}
	if obj.link != linkSoftmax && obj.text != "" && perIter != 1 {
		return nil, fmt.Errorf("%w: objective %q with num_tree_per_iteration=%d", ErrFormat, obj.text, perIter)
	}
	m := &Model{nClasses: perIter, nFeatures: maxIdx + 1, obj: obj, averageOutput: flags["average_output"]}
	// LightGBM always writes feature_names (Column_0, ... when the data had none).
	names := strings.Fields(h["feature_names"])
	if len(names) != m.nFeatures {
		return nil, fmt.Errorf("%w: %d feature_names for max_feature_idx=%d", ErrFormat, len(names), maxIdx)
	}
	m.featureNames = names
	if s, ok := h["feature_infos"]; ok {
		infos := strings.Fields(s)
		if len(infos) != m.nFeatures {
			return nil, fmt.Errorf("%w: %d feature_infos for max_feature_idx=%d", ErrFormat, len(infos), maxIdx)
		}
		m.featureInfos = infos
	}
	return m, nil
}

// parseTree builds a tree from the key=value fields of one Tree=K block.
func parseTree(f map[string]string) (*Tree, error) {
	if lin, ok := f["is_linear"]; ok && strings.TrimSpace(lin) != "0" {
		return nil, fmt.Errorf("%w: linear trees (is_linear=%s)", ErrUnsupportedFeature, lin)
	}
	s := &treeSpec{shrinkage: 1}
	var err error
	num := func(key string) (int, error) {
		v, ok := f[key]
		if !ok {
			return 0, fmt.Errorf("%w: no %s field", ErrFormat, key)
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%w: %s=%q is not an integer", ErrFormat, key, v)
		}
		return n, nil
	}
	if s.numLeaves, err = num("num_leaves"); err != nil {
		return nil, err
	}
	nCat := 0
	if _, ok := f["num_cat"]; ok {
		if nCat, err = num("num_cat"); err != nil {
			return nil, err
		}
	}
	if s.numLeaves < 1 {
		return nil, fmt.Errorf("%w: num_leaves=%d", ErrFormat, s.numLeaves)
	}
	// required fields come first: an absent one is an error, an absent optional one
	// stays nil.
	floats := []struct {
		key      string
		dst      *[]float64
		required bool
	}{
		{"leaf_value", &s.leafValue, true},
		{"threshold", &s.threshold, s.numLeaves > 1},
		{"split_gain", &s.splitGain, false},
		{"internal_value", &s.internalValue, false},
		{"internal_weight", &s.internalWeight, false},
		{"leaf_weight", &s.leafWeight, false},
	}
	for _, fl := range floats {
		if *fl.dst, err = floatField(f, fl.key, fl.required); err != nil {
			return nil, err
		}
	}
	ints := []struct {
		key      string
		dst      *[]int
		required bool
	}{
		{"split_feature", &s.splitFeature, s.numLeaves > 1},
		{"decision_type", &s.decisionType, false},
		{"left_child", &s.leftChild, s.numLeaves > 1},
		{"right_child", &s.rightChild, s.numLeaves > 1},
		{"internal_count", &s.internalCount, false},
		{"leaf_count", &s.leafCount, false},
		{"cat_boundaries", &s.catBoundaries, nCat > 0},
	}
	for _, in := range ints {
		if *in.dst, err = intField(f, in.key, in.required); err != nil {
			return nil, err
		}
	}
	if s.numLeaves == 1 {
		// LightGBM reads nothing but leaf_value for a single leaf; its other fields may
		// be empty.
		s.splitFeature, s.threshold, s.decisionType, s.leftChild, s.rightChild = nil, nil, nil, nil, nil
		s.splitGain, s.internalValue, s.internalWeight, s.internalCount = nil, nil, nil, nil
		if len(s.leafValue) > 1 {
			s.leafValue = s.leafValue[:1]
		}
		if len(s.leafCount) > 1 {
			s.leafCount = nil
		}
		if len(s.leafWeight) > 1 {
			s.leafWeight = nil
		}
	}
	if s.decisionType == nil && s.numLeaves > 1 {
		s.decisionType = make([]int, len(s.leftChild)) // LightGBM's default: all 0
	}
	if nCat > 0 {
		if len(s.catBoundaries) != nCat+1 {
			return nil, fmt.Errorf("%w: cat_boundaries has %d values, want num_cat+1=%d", ErrFormat, len(s.catBoundaries), nCat+1)
		}
		raw, ok := f["cat_threshold"]
		if !ok {
			return nil, fmt.Errorf("%w: no cat_threshold field", ErrFormat)
		}
		for _, w := range strings.Fields(raw) {
			u, err := strconv.ParseUint(w, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%w: cat_threshold value %q is not a uint32", ErrFormat, w)
			}
			s.catThreshold = append(s.catThreshold, uint32(u))
		}
	} else {
		s.catBoundaries = nil
	}
	if v, ok := f["shrinkage"]; ok {
		if s.shrinkage, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return nil, fmt.Errorf("%w: shrinkage=%q is not a number", ErrFormat, v)
		}
	}
	return newTree(s)
}

// floatField parses a space-separated list of numbers.
func floatField(f map[string]string, key string, required bool) ([]float64, error) {
	v, ok := f[key]
	if !ok {
		if required {
			return nil, fmt.Errorf("%w: no %s field", ErrFormat, key)
		}
		return nil, nil
	}
	words := strings.Fields(v)
	out := make([]float64, len(words))
	for i, w := range words {
		x, err := strconv.ParseFloat(w, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("%w: %s value %d (%q) is not a number", ErrFormat, key, i, w)
		}
		out[i] = x
	}
	return out, nil
}

// intField parses a space-separated list of integers.
func intField(f map[string]string, key string, required bool) ([]int, error) {
	v, ok := f[key]
	if !ok {
		if required {
			return nil, fmt.Errorf("%w: no %s field", ErrFormat, key)
		}
		return nil, nil
	}
	words := strings.Fields(v)
	out := make([]int, len(words))
	for i, w := range words {
		n, err := strconv.ParseInt(w, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: %s value %d (%q) is not a 32-bit integer", ErrFormat, key, i, w)
		}
		out[i] = int(n)
	}
	return out, nil
}

// WriteLightGBM writes m in LightGBM's text format, as LightGBM 4.x's
// Booster.save_model does: the header (version, num_class, num_tree_per_iteration,
// label_index, max_feature_idx, objective, feature_names, feature_infos, tree_sizes),
// one Tree=K block per tree with every field LightGBM reads, "end of trees", the
// feature importances (split counts) and the parameters. Numbers that decide
// predictions (thresholds, leaf values) are written with 17 significant digits, so a
// model read back predicts exactly the same values.
func WriteLightGBM(w io.Writer, m *Model) error {
	trees := make([][]byte, len(m.trees))
	sizes := make([]string, len(m.trees))
	for i, t := range m.trees {
		trees[i] = appendTree(nil, i, t)
		sizes[i] = strconv.Itoa(len(trees[i]))
	}
	var b bytes.Buffer
	b.WriteString("tree\n")
	b.WriteString("version=" + writeVersion + "\n")
	k := strconv.Itoa(m.nClasses)
	if m.obj.link == linkSoftmax || m.obj.text == "" {
		b.WriteString("num_class=" + k + "\n")
	} else {
		b.WriteString("num_class=1\n")
	}
	b.WriteString("num_tree_per_iteration=" + k + "\n")
	b.WriteString("label_index=0\n")
	b.WriteString("max_feature_idx=" + strconv.Itoa(m.nFeatures-1) + "\n")
	if m.obj.text != "" {
		b.WriteString("objective=" + m.obj.text + "\n")
	}
	if m.averageOutput {
		b.WriteString("average_output\n")
	}
	b.WriteString("feature_names=" + strings.Join(m.featureNames, " ") + "\n")
	infos := m.featureInfos
	if infos == nil {
		// Unknown value ranges: "none" is what LightGBM writes for a feature it did
		// not use, and it reads the field only to check its length.
		infos = make([]string, m.nFeatures)
		for i := range infos {
			infos[i] = "none"
		}
	}
	b.WriteString("feature_infos=" + strings.Join(infos, " ") + "\n")
	b.WriteString("tree_sizes=" + strings.Join(sizes, " ") + "\n\n")
	for _, t := range trees {
		b.Write(t)
	}
	b.WriteString("end of trees\n\n")
	b.WriteString("feature_importances:\n")
	for _, fi := range m.splitCounts() {
		b.WriteString(m.featureNames[fi.feature] + "=" + strconv.Itoa(fi.count) + "\n")
	}
	b.WriteString("\nparameters:\n")
	params := m.params
	if params == nil {
		params = []string{"[boosting: gbdt]", "[objective: " + m.obj.name + "]"}
	}
	for _, p := range params {
		b.WriteString(p + "\n")
	}
	b.WriteString("\nend of parameters\n")
	if m.pandasCategorical != "" {
		// The line LightGBM's Python package appends after the C++ model text.
		b.WriteString("\n" + m.pandasCategorical + "\n")
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("gbm: writing model: %w", err)
	}
	return nil
}

// SaveLightGBMFile writes m with WriteLightGBM to path atomically: to a temporary file
// in the same directory, synced, then renamed over path, readable by all (0644).
func SaveLightGBMFile(path string, m *Model) error {
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return WriteLightGBM(w, m) })
	if err != nil {
		return fmt.Errorf("gbm: saving model %s: %w", path, err)
	}
	return nil
}

// appendTree appends the Tree=i block of t, as LightGBM's Tree::ToString plus the
// block's header and trailing blank line. Split gains and internal values and weights
// are written with 6 significant digits like LightGBM's; they do not affect prediction.
func appendTree(b []byte, i int, t *Tree) []byte {
	s := t.spec()
	nCat := 0
	if len(s.catBoundaries) > 0 {
		nCat = len(s.catBoundaries) - 1
	}
	nInternal := s.numLeaves - 1
	// Statistics a model assembled by NewModel may lack are written as zeros, which
	// is what LightGBM's loader assumes for an absent field.
	zf := func(v []float64, n int) []float64 {
		if v == nil {
			return make([]float64, n)
		}
		return v
	}
	zi := func(v []int, n int) []int {
		if v == nil {
			return make([]int, n)
		}
		return v
	}
	b = append(b, "Tree="+strconv.Itoa(i)+"\n"...)
	b = append(b, "num_leaves="+strconv.Itoa(s.numLeaves)+"\n"...)
	b = append(b, "num_cat="+strconv.Itoa(nCat)+"\n"...)
	b = appendInts(b, "split_feature", s.splitFeature)
	b = appendFloats(b, "split_gain", zf(s.splitGain, nInternal), 6)
	b = appendFloats(b, "threshold", s.threshold, 17)
	b = appendInts(b, "decision_type", s.decisionType)
	b = appendInts(b, "left_child", s.leftChild)
	b = appendInts(b, "right_child", s.rightChild)
	b = appendFloats(b, "leaf_value", s.leafValue, 17)
	b = appendFloats(b, "leaf_weight", zf(s.leafWeight, s.numLeaves), 17)
	b = appendInts(b, "leaf_count", zi(s.leafCount, s.numLeaves))
	b = appendFloats(b, "internal_value", zf(s.internalValue, nInternal), 6)
	b = appendFloats(b, "internal_weight", zf(s.internalWeight, nInternal), 6)
	b = appendInts(b, "internal_count", zi(s.internalCount, nInternal))
	if nCat > 0 {
		b = appendInts(b, "cat_boundaries", s.catBoundaries)
		b = append(b, "cat_threshold="...)
		for j, v := range s.catThreshold {
			if j > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendUint(b, uint64(v), 10)
		}
		b = append(b, '\n')
	}
	b = append(b, "is_linear=0\n"...)
	shrinkage := s.shrinkage
	if shrinkage == 0 {
		shrinkage = 1
	}
	b = append(b, "shrinkage="...)
	b = strconv.AppendFloat(b, shrinkage, 'g', 6, 64)
	return append(b, "\n\n\n"...)
}

func appendInts(b []byte, key string, v []int) []byte {
	b = append(b, key+"="...)
	for j, x := range v {
		if j > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, '\n')
}

func appendFloats(b []byte, key string, v []float64, digits int) []byte {
	b = append(b, key+"="...)
	for j, x := range v {
		if j > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendFloat(b, x, 'g', digits, 64)
	}
	return append(b, '\n')
}

// featureCount is a feature's number of splits.
type featureCount struct{ feature, count int }

// splitCounts returns the features used by splits with positive gain and their number
// of such splits, most used first and in feature order among equals, as LightGBM's
// feature_importances (GBDT::FeatureImportance counts only splits with gain > 0, and a
// tree without split_gain has gains 0).
func (m *Model) splitCounts() []featureCount {
	counts := make([]int, m.nFeatures)
	for _, t := range m.trees {
		for j := range t.nodes {
			if t.splitGain != nil && t.splitGain[j] > 0 {
				counts[t.nodes[j].feature]++
			}
		}
	}
	var out []featureCount
	for f, c := range counts {
		if c > 0 {
			out = append(out, featureCount{f, c})
		}
	}
	slices.SortStableFunc(out, func(a, b featureCount) int { return b.count - a.count })
	return out
}
