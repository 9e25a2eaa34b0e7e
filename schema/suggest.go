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
	if best == "" {
		best = suggestWide(name, candidates)
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

// suggestWide finds the one candidate two characters off a name when
// either is written in wider characters than ASCII: a Japanese name is
// short, and writing a word in kana instead of kanji changes more than
// one character (名まえ for 名前). Both must still share a character, and
// no other candidate may be as close.
func suggestWide(name string, candidates []string) string {
	best, ties := "", 0
	for _, c := range candidates {
		if c == name || isASCII(name) && isASCII(c) {
			continue
		}
		d := levenshtein(name, c)
		if d > 2 || d >= max(utf8.RuneCountInString(name), utf8.RuneCountInString(c)) {
			continue
		}
		best, ties = c, ties+1
	}
	if ties != 1 {
		return ""
	}
	return best
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Names lists names for a message, in the order given, cut after max of
// them: "a, b, c" or "a, b, … and 7 more".
func Names(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(", … and %d more", len(names)-max)
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
