package corba

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Corbaloc is a corbaloc URL with IIOP addresses:
// corbaloc::host:port/key, corbaloc:iiop:1.2@host:port/key, or several
// addresses separated by commas.
type Corbaloc struct {
	Addrs []IIOPAddr
	Key   []byte
}

// IIOPAddr is one address of a corbaloc URL.
type IIOPAddr struct {
	Version Version // 1.0 when the URL gives none
	Host    string  // a name or an IP address (IPv6 without its brackets)
	Port    uint16  // DefaultCorbalocPort when the URL gives none
}

// DefaultCorbalocPort is the port of a corbaloc address that gives none.
const DefaultCorbalocPort = 2809

// ParseCorbaloc parses a corbaloc URL. Positions in errors count bytes of
// s from 0. The key's %-escapes are decoded; rir addresses are not
// supported.
func ParseCorbaloc(s string) (*Corbaloc, error) {
	const prefix = "corbaloc:"
	fail := func(at int, format string, args ...any) (*Corbaloc, error) {
		return nil, fmt.Errorf("corbaloc: at character %d: %s", at, fmt.Sprintf(format, args...))
	}
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return nil, fmt.Errorf("corbaloc: %q does not start with %q", truncate(s), prefix)
	}
	slash := strings.IndexByte(s[len(prefix):], '/')
	if slash < 0 {
		return fail(len(s), "no '/' before the object key")
	}
	slash += len(prefix)
	c := &Corbaloc{}
	for at, list := len(prefix), s[len(prefix):slash]; ; {
		addr, rest, more := strings.Cut(list, ",")
		a, err := parseIIOPAddr(addr, at)
		if err != nil {
			return nil, err
		}
		c.Addrs = append(c.Addrs, a)
		if !more {
			break
		}
		at += len(addr) + 1
		list = rest
	}
	key := make([]byte, 0, len(s)-slash-1)
	for i := slash + 1; i < len(s); i++ {
		if s[i] != '%' {
			key = append(key, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return fail(i, "'%%' is not followed by two hex digits")
		}
		n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
		key = append(key, byte(n))
		i += 2
	}
	c.Key = key
	return c, nil
}

// parseIIOPAddr parses one address, which starts at character at of the URL.
func parseIIOPAddr(s string, at int) (IIOPAddr, error) {
	fail := func(off int, format string, args ...any) (IIOPAddr, error) {
		return IIOPAddr{}, fmt.Errorf("corbaloc: at character %d: %s", at+off, fmt.Sprintf(format, args...))
	}
	a := IIOPAddr{Version: GIOP10, Port: DefaultCorbalocPort}
	i := 0
	switch {
	case strings.HasPrefix(s, ":"):
		i = 1
	case len(s) >= 5 && strings.EqualFold(s[:5], "iiop:"):
		i = 5
	default:
		proto, _, ok := strings.Cut(s, ":")
		if !ok {
			return fail(0, "address %q names no protocol (\"iiop:\" or \":\")", s)
		}
		return fail(0, "protocol %q is not supported, only iiop", proto)
	}
	if v, rest, ok := strings.Cut(s[i:], "@"); ok {
		major, minor, dot := strings.Cut(v, ".")
		ma, err1 := strconv.ParseUint(major, 10, 8)
		mi, err2 := strconv.ParseUint(minor, 10, 8)
		if !dot || err1 != nil || err2 != nil {
			return fail(i, "version %q is not major.minor", v)
		}
		a.Version = Version{byte(ma), byte(mi)}
		i += len(v) + 1
		s = s[:i] + rest
	}
	host := s[i:]
	var port string
	hasPort := false
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return fail(i, "IPv6 address without its closing ']'")
		}
		if net.ParseIP(host[1:end]) == nil {
			return fail(i, "%q is not an IPv6 address", host[1:end])
		}
		rest := host[end+1:]
		host = host[1:end]
		if rest != "" {
			if rest[0] != ':' {
				return fail(i+end+1, "%q follows the IPv6 address", rest)
			}
			port, hasPort = rest[1:], true
		}
		i += end + 2
	} else {
		host, port, hasPort = strings.Cut(host, ":")
		i += len(host) + 1
	}
	if host == "" {
		return fail(i, "no host")
	}
	a.Host = host
	if hasPort && port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return fail(i, "port %q is not a number from 0 to 65535", port)
		}
		a.Port = uint16(n)
	}
	return a, nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// String writes c as a corbaloc URL, each address with its version and
// port, and the key's bytes other than letters, digits and -_.!~*'() as
// %-escapes.
func (c *Corbaloc) String() string {
	var b strings.Builder
	b.WriteString("corbaloc:")
	for i, a := range c.Addrs {
		if i > 0 {
			b.WriteByte(',')
		}
		host := a.Host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		fmt.Fprintf(&b, "iiop:%v@%s:%d", a.Version, host, a.Port)
	}
	b.WriteByte('/')
	for _, k := range c.Key {
		if 'a' <= k && k <= 'z' || 'A' <= k && k <= 'Z' || '0' <= k && k <= '9' || strings.IndexByte("-_.!~*'()", k) >= 0 {
			b.WriteByte(k)
		} else {
			fmt.Fprintf(&b, "%%%02x", k)
		}
	}
	return b.String()
}
