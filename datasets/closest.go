package datasets

import "strings"

// ClosestColumn returns the candidate nearest to name by edit distance (Levenshtein,
// ignoring case), for "did you mean" hints on mistyped column names. It reports false
// when no candidate is near enough to be a typo: the distance must be at most 2 and less
// than half of name's length (so "lines_addded" finds "lines_added", while "hnk" finds
// not "hunks"). Ties go to the earlier candidate; an exact match is returned as it is.
func ClosestColumn(name string, candidates []string) (string, bool) {
	best, bestD := "", -1
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := editDistance(lname, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > 2 || 2*bestD >= len([]rune(name)) {
		return "", false
	}
	return best, true
}

// didYouMean returns " (did you mean X?)" for the candidate closest to name, or "".
func didYouMean(name string, candidates []string) string {
	if c, ok := ClosestColumn(name, candidates); ok && c != name {
		return " (did you mean " + c + "?)"
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, counted in runes: the fewest
// insertions, deletions and substitutions that turn a into b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
