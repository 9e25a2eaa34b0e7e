package corba

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseName: stringified names as the INS spec writes them, and
// back.
func TestParseName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Name
		out  string // String() when it differs from in
	}{
		{"host.host_cxt/Foo0.rtc", Name{{"host", "host_cxt"}, {"Foo0", "rtc"}}, ""},
		{"Foo0", Name{{"Foo0", ""}}, ""},
		{".rtc", Name{{"", "rtc"}}, ""},
		{".", Name{{"", ""}}, ""},
		{"ロボット.host_cxt/音声認識0.rtc", Name{{"ロボット", "host_cxt"}, {"音声認識0", "rtc"}}, ""},
		{`a\.b.c\/d/e\\f`, Name{{"a.b", "c/d"}, {`e\f`, ""}}, ""},
		{"192.168.0.1", nil, ""},
	} {
		got, err := ParseName(tc.in)
		if tc.want == nil {
			var in *InvalidNameError
			if !errors.As(err, &in) {
				t.Errorf("ParseName(%q) = %v, %v; want InvalidName", tc.in, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseName(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseName(%q) (-want +got):\n%s", tc.in, diff)
		}
		out := tc.out
		if out == "" {
			out = tc.in
		}
		if s := got.String(); s != out {
			t.Errorf("String() = %q, want %q", s, out)
		}
	}
	for in, want := range map[string]string{
		"":      `naming: "" is an invalid name: the name is empty`,
		"a//b":  `naming: "a//b" is an invalid name: component 2 is empty`,
		"a./b":  `naming: "a./b" is an invalid name: component 1 ends in '.' (at byte 2)`,
		"a.b.c": `naming: "a.b.c" is an invalid name: component 1 has a second '.' (at byte 3); escape it as '\.'`,
		`a\b`:   `naming: "a\\b" is an invalid name: '\' at byte 1 escapes neither '/', '.' nor '\'`,
		"/a":    `naming: "/a" is an invalid name: component 1 is empty`,
		"ロボ.x/": `naming: "ロボ.x/" is an invalid name: component 2 is empty`,
	} {
		if _, err := ParseName(in); err == nil || err.Error() != want {
			t.Errorf("ParseName(%q): %v\nwant %s", in, err, want)
		}
	}
}
