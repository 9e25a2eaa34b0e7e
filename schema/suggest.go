package schema

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Suggest returns the candidate closest to name, if it is close enough to be
// a likely misspelling, else "".
func Suggest(name string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		if c == name {
			continue
		}
		if strings.EqualFold(c, name) {
			return c
		}
		d := levenshtein(name, c)
		limit := 2
		if utf8.RuneCountInString(c) <= 3 {
			limit = 1
		}
		if d <= limit && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best == "" && utf8.RuneCountInString(name) >= 4 {
		// A part of the name: <transition> for <statetransition>.
		lower := strings.ToLower(name)
		for _, c := range candidates {
			lc := strings.ToLower(c)
			if c != name && strings.Contains(lc, lower) {
				if best != "" {
					return "" // more than one: no guess
				}
				best = c
			}
		}
	}
	return best
}

// DidYouMean formats a suggestion for an error message: "; did you mean X?"
// with X formatted by format (for example "<%s>" or "%q"), or "".
func DidYouMean(name string, candidates []string, format string) string {
	if s := Suggest(name, candidates); s != "" {
		return "; did you mean " + fmt.Sprintf(format, s) + "?"
	}
	return ""
}

// levenshtein is the edit distance in characters, so that a Japanese name
// one character off is as close as an ASCII one.
func levenshtein(as, bs string) int {
	a, b := []rune(as), []rune(bs)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
