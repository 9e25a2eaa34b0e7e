package adaptors

import "testing"

func TestConfigAddress(t *testing.T) {
	for _, c := range []struct {
		attrs map[string]string
		addr  string
		err   string
	}{
		{map[string]string{"port": "5000"}, "127.0.0.1:5000", ""}, // loopback unless told
		{map[string]string{"port": "0"}, "127.0.0.1:0", ""},
		{map[string]string{"host": "0.0.0.0", "port": "80"}, "0.0.0.0:80", ""},
		{map[string]string{"host": "::1", "port": "80"}, "[::1]:80", ""},
		{map[string]string{}, "", `port "" is not a port number`},
		{map[string]string{"port": "65536"}, "", `port "65536" is not a port number`},
		{map[string]string{"port": "-1"}, "", `port "-1" is not a port number`},
	} {
		addr, _, err := Config{Attrs: c.attrs}.Address()
		if addr != c.addr || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("Address(%v) = %q, %v; want %q, %q", c.attrs, addr, err, c.addr, c.err)
		}
	}
}

func TestConfigPositiveInt(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
		err  string
	}{
		{"", 7, ""}, // absent: the default
		{"1", 1, ""},
		{"65536", 65536, ""},
		{"0", 0, `maxline "0" is not a whole number greater than 0`},
		{"-3", 0, `maxline "-3" is not a whole number greater than 0`},
		{"1e3", 0, `maxline "1e3" is not a whole number greater than 0`},
	} {
		got, err := Config{Attrs: map[string]string{"maxline": c.v}}.PositiveInt("maxline", 7)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("PositiveInt(%q) = %d, %v; want %d, %q", c.v, got, err, c.want, c.err)
		}
	}
}
