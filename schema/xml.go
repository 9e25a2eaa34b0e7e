package schema

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

// MaxDepth bounds how deeply elements may nest in a behavior file.
const MaxDepth = 64

// lineIndex turns byte offsets into positions, columns counted in
// characters.
type lineIndex struct {
	file   string
	data   []byte
	starts []int
}

func newLineIndex(file string, data []byte) *lineIndex {
	li := &lineIndex{file: file, data: data, starts: []int{0}}
	for i, b := range data {
		if b == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) pos(off int) Pos {
	line := sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off })
	return Pos{File: li.file, Line: line, Col: utf8.RuneCount(li.data[li.starts[line-1]:min(off, len(li.data))]) + 1}
}

// ParseXML reads an XML file into a positioned tree in one encoding/xml
// pass: the decoder's offsets give every element's, attribute's and text's
// position (a tree library keeps none). Only UTF-8 is accepted (a
// byte-order mark is skipped); elements may nest MaxDepth levels. A
// malformed file gives one error at the place the decoder stopped.
func ParseXML(file string, data []byte) (*Node, List) {
	var diags List
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	data, err := toUTF8(data)
	if err != nil {
		diags.Errorf(Pos{File: file, Line: 1, Col: 1}, "%v", err)
		return nil, diags
	}
	li := newLineIndex(file, data)
	root, err := parseTree(data, li)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			diags.Errorf(li.pos(pe.off), "%s", pe.msg)
		} else {
			diags.Errorf(Pos{File: file, Line: 1, Col: 1}, "%v", err)
		}
		return nil, diags
	}
	return root, diags
}

var errCharset = errors.New("unsupported encoding: seat reads UTF-8, US-ASCII, Shift_JIS and EUC-JP files; save the file as UTF-8")

// charsets maps the encodings a declaration may name to their decoders
// (nil: the bytes are UTF-8 already). eSEAT's users write Japanese files in
// Shift_JIS or EUC-JP, and some declare US-ASCII.
var charsets = map[string]encoding.Encoding{
	"utf-8": nil, "utf8": nil, "us-ascii": nil, "ascii": nil,
	"utf-16":    nil, // read by its byte order mark (toUTF8)
	"shift_jis": japanese.ShiftJIS, "shift-jis": japanese.ShiftJIS, "sjis": japanese.ShiftJIS,
	"cp932": japanese.ShiftJIS, "windows-31j": japanese.ShiftJIS, "ms_kanji": japanese.ShiftJIS,
	"euc-jp": japanese.EUCJP, "euc_jp": japanese.EUCJP, "eucjp": japanese.EUCJP,
}

var declRE = regexp.MustCompile(`^\s*<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']`)

// DecodeUTF8 returns a behavior file's bytes as UTF-8, decoding the
// encodings a declaration may name (Shift_JIS, EUC-JP); seat port uses it.
// The declaration then says UTF-8, as the bytes are.
func DecodeUTF8(data []byte) ([]byte, error) {
	out, err := toUTF8(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if err != nil {
		return nil, err
	}
	if m := declRE.FindSubmatchIndex(out); m != nil {
		out = append(append(append([]byte{}, out[:m[2]]...), "UTF-8"...), out[m[3]:]...)
	}
	return out, nil
}

// toUTF8 decodes a file in an encoding its declaration names into UTF-8,
// before parsing, so that every position counts the characters of the
// decoded text (lines are the same; columns count characters either way).
func toUTF8(data []byte) ([]byte, error) {
	if len(data) >= 2 && (data[0] == 0xFE && data[1] == 0xFF || data[0] == 0xFF && data[1] == 0xFE) {
		// UTF-16, which XML 1.0 requires a reader to take: its byte order
		// mark says which order (and is dropped).
		out, err := unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder().Bytes(data)
		if err != nil {
			return nil, fmt.Errorf("the file starts as UTF-16 but is not valid UTF-16: %v", err)
		}
		return out, nil // its declaration may say UTF-16: the decoder is told it is UTF-8 now
	}
	m := declRE.FindSubmatch(data)
	if m == nil {
		return data, nil
	}
	name := strings.ToLower(string(m[1]))
	enc, ok := charsets[name]
	if !ok {
		return nil, fmt.Errorf("%w (declared %q)", errCharset, string(m[1]))
	}
	if enc == nil {
		return data, nil
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return nil, fmt.Errorf("the file declares %s but is not valid %s: %v", string(m[1]), string(m[1]), err)
	}
	return out, nil
}

type posError struct {
	off int
	msg string
}

func (e *posError) Error() string { return e.msg }

// open is an element being read, with its own character data so far.
type open struct {
	n      *Node
	off    int // where its start tag begins
	text   []byte
	prefix string            // the element's prefix, which its end tag repeats
	ns     map[string]string // the namespaces in scope: prefix to URL ("" the default)
}

// xmlNS is the namespace the prefix xml stands for without declaration.
const xmlNS = "http://www.w3.org/XML/1998/namespace"

// scope returns the namespaces in scope inside an element with attrs,
// given those outside it (shared when it declares none).
func scope(outer map[string]string, attrs []xml.Attr) map[string]string {
	ns, copied := outer, false
	for _, a := range attrs {
		prefix, ok := "", false
		switch {
		case a.Name.Space == "xmlns":
			prefix, ok = a.Name.Local, true
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			ok = true
		}
		if !ok {
			continue
		}
		if !copied {
			ns, copied = make(map[string]string, len(outer)+1), true
			maps.Copy(ns, outer)
		}
		ns[prefix] = a.Value
	}
	return ns
}

// resolve is the namespace of a prefix: an unprefixed element is in the
// default namespace, an unprefixed attribute in none; an undeclared
// prefix stands for itself.
func resolve(ns map[string]string, prefix string, element bool) string {
	switch {
	case prefix == "" && !element:
		return ""
	case prefix == "xml":
		return xmlNS
	}
	if u, ok := ns[prefix]; ok {
		return u
	}
	return prefix
}

func parseTree(data []byte, li *lineIndex) (*Node, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(charset string, r io.Reader) (io.Reader, error) {
		if _, ok := charsets[strings.ToLower(charset)]; ok {
			return r, nil // toUTF8 has decoded the file already
		}
		return nil, fmt.Errorf("%w (declared %q)", errCharset, charset)
	}
	var root *Node
	var stack []*open
	syntax := func(off int, err error) error {
		msg := err.Error()
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			msg = se.Msg
		}
		msg = "malformed XML: " + strings.TrimPrefix(msg, "xml: ")
		if errors.Is(err, errCharset) {
			msg = errCharset.Error()
		}
		if n := len(stack); n > 0 && isCodeElement(stack[n-1].n.Name) {
			if c := lastSpecial(data[:min(off, len(data))]); c == '<' || c == '&' {
				// Lua's < and & are XML's markup: say what to do.
				msg = fmt.Sprintf("%q in <%s> is read as XML markup; wrap the %s in <![CDATA[ ... ]]> (or write %s)",
					c, stack[n-1].n.Name, stack[n-1].n.Name, map[byte]string{'<': "&lt;", '&': "&amp;"}[c])
				off = bytes.LastIndexByte(data[:min(off, len(data))], c)
			}
		}
		return &posError{off: off, msg: msg}
	}
	for {
		off := int(d.InputOffset())
		tok, err := d.RawToken() // elements are matched here; no namespace work
		if err == io.EOF {
			switch {
			case root == nil:
				return nil, &posError{off: 0, msg: "malformed XML: no root element"}
			case len(stack) > 0:
				// At the element left open, not at the end of the file.
				top := stack[len(stack)-1]
				return nil, &posError{off: top.off, msg: fmt.Sprintf("malformed XML: <%s> is not closed before the end of the file; add %s%s",
					top.n.Name, closeTag(top), alsoOpen(stack[:len(stack)-1]))}
			}
			return root, nil
		}
		if err != nil {
			return nil, syntax(int(d.InputOffset()), err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= MaxDepth {
				return nil, &posError{off: off, msg: fmt.Sprintf("elements nest deeper than %d levels", MaxDepth)}
			}
			if root != nil && len(stack) == 0 {
				return nil, &posError{off: off, msg: "malformed XML: more than one root element"}
			}
			end := int(d.InputOffset())
			var outer map[string]string
			if len(stack) > 0 {
				outer = stack[len(stack)-1].ns
			}
			ns := scope(outer, t.Attr)
			n := &Node{Name: t.Name.Local, Space: resolve(ns, t.Name.Space, true), Pos: li.pos(off), ContentPos: li.pos(end), TextPos: li.pos(firstTextOffset(data, end))}
			offsets := scanAttrs(data[off:end], off)
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
					continue
				}
				at := offsets[a.Name.Local]
				n.Attrs = append(n.Attrs, Attr{Name: a.Name.Local, Space: resolve(ns, a.Name.Space, false), Value: a.Value, Pos: li.pos(at[0]), ValuePos: li.pos(at[1])})
			}
			if len(stack) == 0 {
				root = n
			} else {
				p := stack[len(stack)-1].n
				p.Children = append(p.Children, n)
			}
			stack = append(stack, &open{n: n, off: off, prefix: t.Name.Space, ns: ns})
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, &posError{off: off, msg: fmt.Sprintf("malformed XML: </%s> closes no element", qname(t.Name))}
			}
			top := stack[len(stack)-1]
			// RawToken leaves matching to us: t.Name.Space is the prefix.
			if t.Name.Local != top.n.Name || t.Name.Space != top.prefix {
				return nil, mismatched(stack, t.Name, off, li)
			}
			top.n.Text = string(top.text)
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if len(bytes.TrimSpace(t)) > 0 {
					return nil, &posError{off: off, msg: "malformed XML: text outside the root element"}
				}
				continue
			}
			top := stack[len(stack)-1]
			top.text = append(top.text, t...)
		case xml.Comment:
			if len(stack) > 0 { // comments are removed; their line breaks kept
				top := stack[len(stack)-1]
				top.n.Comments += string(t)
				for range bytes.Count(t, []byte("\n")) {
					top.text = append(top.text, '\n')
				}
			}
		case xml.ProcInst:
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				for range bytes.Count(t.Inst, []byte("\n")) {
					top.text = append(top.text, '\n')
				}
			}
		}
	}
}

// mismatched reports an end tag (at off) that does not close the
// innermost open element. When it closes an element around that one, the
// elements in between were left open: the error is at the innermost of
// them, naming it, as it is the one to close. Otherwise the end tag is
// misspelled: the error is at the end tag, naming the element it should
// close.
func mismatched(stack []*open, end xml.Name, off int, li *lineIndex) error {
	top := stack[len(stack)-1]
	for i := len(stack) - 2; i >= 0; i-- {
		if o := stack[i]; o.n.Name == end.Local && o.prefix == end.Space {
			at := li.pos(off)
			return &posError{off: top.off, msg: fmt.Sprintf("malformed XML: <%s> is not closed before </%s> at %d:%d; add %s%s",
				top.n.Name, qname(end), at.Line, at.Col, closeTag(top), alsoOpen(stack[i+1:len(stack)-1]))}
		}
	}
	hint := DidYouMean(end.Local, []string{top.n.Name}, "</%s>")
	if hint == "" {
		hint = fmt.Sprintf(", the element open here: close it first with %s", closeTag(top))
	}
	return &posError{off: off, msg: fmt.Sprintf("malformed XML: </%s> does not close <%s> (at %d:%d)%s",
		qname(end), top.n.Name, top.n.Pos.Line, top.n.Pos.Col, hint)}
}

// closeTag is the end tag that closes o, with what else would do for an
// element with no content so far.
func closeTag(o *open) string {
	end := "</" + qname(xml.Name{Space: o.prefix, Local: o.n.Name}) + ">"
	if len(o.n.Children) == 0 && len(bytes.TrimSpace(o.text)) == 0 {
		end += fmt.Sprintf(" (or end its start tag with />, as in <%s/>)", o.n.Name)
	}
	return end
}

// alsoOpen names the elements around the one reported that are left open
// too (given outermost first), innermost first, for a message: "" when
// there are none.
func alsoOpen(around []*open) string {
	if len(around) == 0 {
		return ""
	}
	names := make([]string, 0, len(around))
	for k := len(around) - 1; k >= 0; k-- {
		o := around[k]
		names = append(names, fmt.Sprintf("<%s> at %d:%d", o.n.Name, o.n.Pos.Line, o.n.Pos.Col))
	}
	verb := "is"
	if len(names) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("; %s around it %s not closed either", strings.Join(names, " and "), verb)
}

// isCodeElement reports whether an element's text is Lua.
func isCodeElement(name string) bool { return name == "script" || name == "cond" }

// lastSpecial returns the last '<' or '&' before the end of b, or 0.
func lastSpecial(b []byte) byte {
	if i := bytes.LastIndexAny(b, "<&"); i >= 0 {
		return b[i]
	}
	return 0
}

func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// scanAttrs finds the offsets of each attribute's name and value in a
// well-formed start tag.
func scanAttrs(tag []byte, base int) map[string][2]int {
	attrs := map[string][2]int{}
	i := 1
	for i < len(tag) && !isSpace(tag[i]) && tag[i] != '>' && tag[i] != '/' {
		i++
	}
	for i < len(tag) {
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		if i >= len(tag) || tag[i] == '>' || tag[i] == '/' {
			break
		}
		nameStart := i
		for i < len(tag) && tag[i] != '=' && !isSpace(tag[i]) {
			i++
		}
		name := string(tag[nameStart:i])
		for i < len(tag) && tag[i] != '"' && tag[i] != '\'' {
			i++
		}
		if i >= len(tag) {
			break
		}
		q := tag[i]
		i++
		valStart := i
		for i < len(tag) && tag[i] != q {
			i++
		}
		i++
		if k := strings.IndexByte(name, ':'); k >= 0 && !strings.HasPrefix(name, "xmlns") {
			name = name[k+1:]
		}
		attrs[name] = [2]int{base + nameStart, base + valStart}
	}
	return attrs
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// firstTextOffset finds the first character of an element's content that is
// neither white space nor inside a comment, looking into CDATA sections.
func firstTextOffset(data []byte, off int) int {
	i := off
	for i < len(data) {
		switch {
		case isSpace(data[i]):
			i++
		case bytes.HasPrefix(data[i:], []byte("<!--")):
			end := bytes.Index(data[i:], []byte("-->"))
			if end < 0 {
				return off
			}
			i += end + 3
		case bytes.HasPrefix(data[i:], []byte("<![CDATA[")):
			i += len("<![CDATA[")
		default:
			return i
		}
	}
	return off
}
