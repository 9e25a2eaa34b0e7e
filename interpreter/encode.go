package interpreter

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
)

func identity(s string) (string, error) { return s, nil }

// encoder returns the converter for a message encode= value (SEATML §6):
// utf-8, shift_jis or euc-jp, in any case, with "-" or "_".
func encoder(name string) (func(string) (string, error), error) {
	norm := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	var enc encoding.Encoding
	switch norm {
	case "utf-8", "utf8":
		return identity, nil
	case "shift-jis", "sjis":
		enc = japanese.ShiftJIS
	case "euc-jp":
		enc = japanese.EUCJP
	default:
		return identity, fmt.Errorf("message encode %q is not supported; use utf-8, shift_jis or euc-jp", name)
	}
	return func(s string) (string, error) {
		out, err := enc.NewEncoder().String(s)
		if err != nil {
			return "", fmt.Errorf("encode to %s: %w", name, err)
		}
		return out, nil
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
