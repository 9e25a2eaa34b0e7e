package mqtt

import (
	"strings"
	"testing"
)

// BenchmarkSender: finding a publication's sender, on every publication.
func BenchmarkSender(b *testing.B) {
	a := &Adaptor{subscribe: []string{"fleet/cmd", "kiosk/+/asr", "robot/+/asr"}}
	a.plus = []bool{false, true, true}
	b.ReportAllocs()
	for b.Loop() {
		if c := a.sender("robot/受付/asr"); c.value != "受付" || !c.plus {
			b.Fatal(c.value)
		}
	}
}

// FuzzMatch: Match, which walks the levels, agrees with matching the
// split levels (the way it was first written).
func FuzzMatch(f *testing.F) {
	for _, c := range [][2]string{{"robot/+/asr", "robot/7/asr"}, {"robot/#", "robot"}, {"robot/#", "robot/7/x"}, {"+/+", "a/"},
		{"robot/+", "robot/7/asr"}, {"a//b", "a//b"}, {"#", ""}, {"ロボ/+/声", "ロボ/受付/声"}, {"a/+", "a"}, {"", ""}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, filter, topic string) {
		wv, wok := splitMatch(filter, topic)
		if v, ok := Match(filter, topic); v != wv || ok != wok {
			t.Errorf("Match(%q, %q) = %q, %v; split levels give %q, %v", filter, topic, v, ok, wv, wok)
		}
	})
}

func splitMatch(filter, topic string) (string, bool) {
	fl, tl := strings.Split(filter, "/"), strings.Split(topic, "/")
	value, plus := "", false
	for i, f := range fl {
		if f == "#" {
			return value, true
		}
		if i >= len(tl) {
			return "", false
		}
		switch f {
		case "+":
			if !plus {
				value, plus = tl[i], true
			}
		default:
			if f != tl[i] {
				return "", false
			}
		}
	}
	if len(fl) != len(tl) {
		return "", false
	}
	return value, true
}

// TestRedact: a broker URL is shown without its password, even one that
// does not parse.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"tcp://alice:secret@127.0.0.1:1883": "tcp://alice:xxxxx@127.0.0.1:1883",
		"tcp://alice@127.0.0.1:1883":        "tcp://alice@127.0.0.1:1883",
		"tcp://127.0.0.1:1883":              "tcp://127.0.0.1:1883",
		"tcp://al ice:sec%zzret@host":       "tcp://xxxxx@host",
		"alice:secret@host:1883":            "xxxxx@host:1883",
	} {
		if got := Redact(in); got != want || strings.Contains(got, "sec") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
