package schema

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/beevik/etree"
)

// MaxDepth bounds how deeply elements may nest in a behavior file.
const MaxDepth = 64

// elemPos is what the pre-pass records of one element.
type elemPos struct {
	start  int // offset of '<'
	endTag int // offset just after the start tag's '>'
	attrs  map[string][2]int
}

// lineIndex turns byte offsets into positions.
type lineIndex struct {
	file   string
	starts []int
}

func newLineIndex(file string, data []byte) *lineIndex {
	li := &lineIndex{file: file, starts: []int{0}}
	for i, b := range data {
		if b == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) pos(off int) Pos {
	line := sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off })
	return Pos{File: li.file, Line: line, Col: off - li.starts[line-1] + 1}
}

// ParseXML reads an XML file into a positioned tree. Positions come from an
// encoding/xml pre-pass (etree keeps none); the tree from etree. Only UTF-8
// is accepted (a byte-order mark is skipped); elements may nest MaxDepth
// levels.
func ParseXML(file string, data []byte) (*Node, List) {
	var diags List
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	li := newLineIndex(file, data)
	positions, err := prepass(data)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			diags.Errorf(li.pos(pe.off), "%s", pe.msg)
		} else {
			diags.Errorf(Pos{File: file, Line: 1, Col: 1}, "%v", err)
		}
		return nil, diags
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(data); err != nil {
		diags.Errorf(Pos{File: file, Line: 1, Col: 1}, "malformed XML: %v", err)
		return nil, diags
	}
	root := doc.Root()
	if root == nil {
		diags.Errorf(Pos{File: file, Line: 1, Col: 1}, "no root element")
		return nil, diags
	}
	i := 0
	return build(root, data, li, positions, &i), diags
}

var errCharset = errors.New("only UTF-8 files are supported; save the file as UTF-8")

type posError struct {
	off int
	msg string
}

func (e *posError) Error() string { return e.msg }

func prepass(data []byte) ([]elemPos, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(charset string, r io.Reader) (io.Reader, error) {
		if strings.EqualFold(charset, "utf-8") || strings.EqualFold(charset, "utf8") {
			return r, nil
		}
		return nil, fmt.Errorf("%w (declared %q)", errCharset, charset)
	}
	var out []elemPos
	depth := 0
	for {
		off := int(d.InputOffset())
		tok, err := d.Token()
		if err == io.EOF {
			if len(out) == 0 {
				return nil, &posError{off: 0, msg: "malformed XML: no root element"}
			}
			return out, nil
		}
		if err != nil {
			msg := err.Error()
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				msg = se.Msg
			}
			msg = "malformed XML: " + strings.TrimPrefix(msg, "xml: ")
			if errors.Is(err, errCharset) {
				msg = errCharset.Error()
			}
			return nil, &posError{off: int(d.InputOffset()), msg: msg}
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
			if depth > MaxDepth {
				return nil, &posError{off: off, msg: fmt.Sprintf("elements nest deeper than %d levels", MaxDepth)}
			}
			end := int(d.InputOffset())
			out = append(out, elemPos{start: off, endTag: end, attrs: scanAttrs(data[off:end], off)})
		case xml.EndElement:
			depth--
		}
	}
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

func build(el *etree.Element, data []byte, li *lineIndex, ps []elemPos, i *int) *Node {
	ep := ps[*i]
	*i++
	n := &Node{
		Name:       el.Tag,
		Pos:        li.pos(ep.start),
		ContentPos: li.pos(ep.endTag),
	}
	for _, a := range el.Attr {
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			continue
		}
		off := ep.attrs[a.Key]
		n.Attrs = append(n.Attrs, Attr{Name: a.Key, Value: a.Value, Pos: li.pos(off[0]), ValuePos: li.pos(off[1])})
	}
	var text strings.Builder
	for _, tok := range el.Child {
		switch t := tok.(type) {
		case *etree.CharData:
			text.WriteString(t.Data)
		case *etree.Comment:
			text.WriteString(strings.Repeat("\n", strings.Count(t.Data, "\n")))
		case *etree.ProcInst:
			text.WriteString(strings.Repeat("\n", strings.Count(t.Inst, "\n")))
		case *etree.Element:
			n.Children = append(n.Children, build(t, data, li, ps, i))
		}
	}
	n.Text = text.String()
	n.TextPos = li.pos(firstTextOffset(data, ep.endTag))
	return n
}

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
