package speech

import (
	"fmt"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode"
)

// maxPhrases bounds the phrases one key may stand for: a key that matches
// more (or infinitely many) texts cannot become grammar.
const maxPhrases = 64

// Phrases returns the texts a rule's key matches, as a recognizer's
// grammar needs them: "tickets?" is "ticket" and "tickets",
// "(hello|hi) there" two phrases. A key is matched from the start of the
// lookup text (SEATML §5), so what follows a match does not count; a
// key that matches infinitely many texts, or a class of characters
// (num\d+, .), cannot become grammar, and the error says which part.
func Phrases(key string) ([]string, error) {
	re, err := syntax.Parse(key, syntax.Perl)
	if err != nil {
		return nil, err
	}
	set, err := expand(re.Simplify())
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range set {
		s = strings.Join(strings.Fields(s), " ")
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("key %q matches no words", key)
	}
	return out, nil
}

// expand lists the texts re matches.
func expand(re *syntax.Regexp) ([]string, error) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, nil
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return []string{strings.ToLower(string(re.Rune))}, nil
		}
		return []string{string(re.Rune)}, nil
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			next, err := expand(sub)
			if err != nil {
				return nil, err
			}
			var prod []string
			for _, a := range out {
				for _, b := range next {
					prod = append(prod, a+b)
				}
			}
			if len(prod) > maxPhrases {
				return nil, fmt.Errorf("it matches more than %d phrases", maxPhrases)
			}
			out = prod
		}
		return out, nil
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			next, err := expand(sub)
			if err != nil {
				return nil, err
			}
			out = append(out, next...)
		}
		if len(out) > maxPhrases {
			return nil, fmt.Errorf("it matches more than %d phrases", maxPhrases)
		}
		return out, nil
	case syntax.OpQuest:
		sub, err := expand(re.Sub[0])
		if err != nil {
			return nil, err
		}
		return append([]string{""}, sub...), nil
	case syntax.OpRepeat:
		if re.Max < 0 || re.Max > 4 {
			break
		}
		sub, err := expand(re.Sub[0])
		if err != nil {
			return nil, err
		}
		var out []string
		for n := re.Min; n <= re.Max; n++ {
			cur := []string{""}
			for range n {
				var prod []string
				for _, a := range cur {
					for _, b := range sub {
						prod = append(prod, a+b)
					}
				}
				cur = prod
			}
			out = append(out, cur...)
			if len(out) > maxPhrases {
				return nil, fmt.Errorf("it matches more than %d phrases", maxPhrases)
			}
		}
		return out, nil
	case syntax.OpCharClass:
		// A small class of letters ([sS], [ck]) is a choice of letters.
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if !unicode.IsLetter(r) || len(out) >= 8 {
					return nil, fmt.Errorf("%s is a class of characters, not words", re)
				}
				out = append(out, strings.ToLower(string(r)))
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s matches too many texts to be words", re)
}

// words splits a phrase into a recognizer's words: lower case, without
// punctuation.
func words(phrase string) []string {
	return strings.FieldsFunc(strings.ToLower(phrase), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

// jsgf is a JSGF grammar with one public rule: any of the phrases.
func jsgf(phrases []string) string {
	var b strings.Builder
	b.WriteString("#JSGF V1.0;\ngrammar seat;\npublic <phrase> = ")
	for i, p := range phrases {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(strings.Join(words(p), " "))
	}
	b.WriteString(";\n")
	return b.String()
}
