package seatml

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
)

func identity(s string) (string, rune) { return s, 0 }

// jisVariants maps characters that Python's shift_jis and euc_jp codecs
// (eSEAT's) encode but the WHATWG tables of x/text do not, to the
// characters those tables give the same bytes: 〜 (WAVE DASH) is 0x8160 in
// both, as FULLWIDTH TILDE in WHATWG's. Yen and overline are JIS X 0201's
// 0x5C and 0x7E, as Python writes them; the em dash is the JIS dash 0x815C.
var jisVariants = strings.NewReplacer(
	"\u301C", "\uFF5E", // 〜 WAVE DASH
	"\u2212", "\uFF0D", // − MINUS SIGN
	"\u2016", "\u2225", // ‖ DOUBLE VERTICAL LINE
	"\u00A2", "\uFFE0", // ¢
	"\u00A3", "\uFFE1", // £
	"\u00AC", "\uFFE2", // ¬
	"\u2014", "\u2015", // — EM DASH
	"\u00A5", "\\", // ¥
	"\u203E", "~", // ‾
)

// isUTF8 reports whether an encode= value names UTF-8.
func isUTF8(name string) bool {
	n := encodingName(name)
	return n == "utf-8" || n == "utf8"
}

// encodingName reads an encode= value in any case, with "-" or "_".
func encodingName(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
}

// encoder returns the converter for a message encode= value (SEATML §6):
// utf-8, shift_jis or euc-jp, in any case, with "-" or "_". A converter
// never fails: a character the encoding cannot hold (an emoji in
// Shift_JIS) becomes "?", as Python's errors="replace" does, and is
// returned so that the caller can log it.
func encoder(name string) (func(string) (string, rune), error) {
	if isUTF8(name) {
		return identity, nil
	}
	var enc encoding.Encoding
	switch encodingName(name) {
	case "shift-jis", "sjis":
		enc = japanese.ShiftJIS
	case "euc-jp":
		enc = japanese.EUCJP
	default:
		return identity, fmt.Errorf("message encode %q is not supported; use utf-8, shift_jis or euc-jp", name)
	}
	return func(s string) (string, rune) {
		s = jisVariants.Replace(s)
		if out, err := enc.NewEncoder().String(s); err == nil {
			return out, 0
		}
		// Character by character, "?" for what cannot be encoded.
		var b strings.Builder
		var bad rune
		e := enc.NewEncoder()
		for _, r := range s {
			out, err := e.String(string(r))
			if err != nil {
				if bad == 0 {
					bad = r
				}
				out = "?"
			}
			b.WriteString(out)
		}
		return b.String(), bad
	}, nil
}

// parseLuaNumber converts text that numberRE accepted, as Lua's tonumber.
func parseLuaNumber(s string) (float64, error) {
	t := strings.TrimLeft(s, "+-")
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		i, err := strconv.ParseInt(t[2:], 16, 64)
		if strings.HasPrefix(s, "-") {
			i = -i
		}
		return float64(i), err
	}
	return strconv.ParseFloat(s, 64)
}
