package schema

import (
	"strings"
	"testing"
)

func TestParseXMLPositions(t *testing.T) {
	src := "\xef\xbb\xbf<?xml version=\"1.0\"?>\n<seatml>\n  <general name='g'  rate=\"2\">\n" +
		"    <!-- a comment\n spanning lines -->\n    <script><![CDATA[\n x = 1 ]]><!--\n-->y = 2</script>\n" +
		"  </general>\n</seatml>\n"
	root, diags := ParseXML("f.seatml", []byte(src))
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	g := root.Children[0]
	if g.Pos != (Pos{File: "f.seatml", Line: 3, Col: 3}) {
		t.Errorf("general at %v", g.Pos)
	}
	name, _ := g.Attr("name")
	rate, _ := g.Attr("rate")
	if name.Pos.Col != 12 || name.ValuePos.Col != 18 || rate.Pos.Col != 22 || rate.ValuePos.Col != 28 {
		t.Errorf("attribute positions: name %v/%v rate %v/%v", name.Pos, name.ValuePos, rate.Pos, rate.ValuePos)
	}
	script := g.Children[0]
	if script.Pos.Line != 6 || script.ContentPos != (Pos{File: "f.seatml", Line: 6, Col: 13}) {
		t.Errorf("script at %v, content at %v", script.Pos, script.ContentPos)
	}
	// CDATA kept, the comment replaced by its line breaks: Lua lines stay
	// the file's lines.
	if script.Text != "\n x = 1 \ny = 2" {
		t.Errorf("script text %q", script.Text)
	}
	if script.TextPos != (Pos{File: "f.seatml", Line: 7, Col: 2}) {
		t.Errorf("script text at %v", script.TextPos)
	}
}

func TestParseXMLErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "f.seatml:1:1: malformed XML: no root element"},
		// An element left open is reported where it opens, by name.
		{"<seatml>\n  <general>\n</seatml>", "f.seatml:2:3: malformed XML: <general> is not closed before </seatml> at 3:1; add </general> (or end its start tag with />, as in <general/>)"},
		{"<seatml>\n <状態 名=\"受付中\">\n  <rule><key>はい</key>\n   <log>了解\n </状態>\n</seatml>",
			"f.seatml:4:4: malformed XML: <log> is not closed before </状態> at 5:2; add </log>; <rule> at 3:3 around it is not closed either"},
		{"<seatml>\n <state>\n  <rule><key>x</key></rule>", "f.seatml:2:2: malformed XML: <state> is not closed before the end of the file; add </state>; <seatml> at 1:1 around it is not closed either"},
		{"<seatml><a>x</seatml>", "f.seatml:1:9: malformed XML: <a> is not closed before </seatml> at 1:13; add </a>"},
		// A misspelled end tag is reported where it is.
		{"<seatml>\n  <message>hi</mesage>\n</seatml>", "f.seatml:2:14: malformed XML: </mesage> does not close <message> (at 2:3); did you mean </message>?"},
		{"<seatml>\n  <state></rule>\n</seatml>", "f.seatml:2:10: malformed XML: </rule> does not close <state> (at 2:3), the element open here: close it first with </state> (or end its start tag with />, as in <state/>)"},
		{"<seatml>\n<a b=1/>", "f.seatml:2:7: malformed XML: unquoted or missing attribute value in element"},
		{"</A>", "f.seatml:1:1: malformed XML: </A> closes no element"}, // found by FuzzLoad
		{"<a/>\n</b>", "f.seatml:2:1: malformed XML: </b> closes no element"},
	} {
		_, diags := ParseXML("f.seatml", []byte(c.src))
		if len(diags) != 1 || diags[0].Error() != c.want {
			t.Errorf("ParseXML(%q) = %v, want %s", c.src, diags, c.want)
		}
	}
	deep := ""
	for range MaxDepth + 1 {
		deep += "<a>"
	}
	if _, diags := ParseXML("f.seatml", []byte(deep)); len(diags) != 1 || diags[0].Msg != "elements nest deeper than 64 levels" {
		t.Errorf("deep nesting: %v", diags)
	}
}

// TestNamespacedElements: an element with a declared prefix, self-closed
// or not, parses, with its namespace; before, a declared prefix's end
// tag was taken for a mismatch ("element <x> closed by </p:x>").
func TestNamespacedElements(t *testing.T) {
	root, diags := ParseXML("f.xml", []byte(`<a xmlns="urn:a" xmlns:p="urn:p"><p:x p:k="値"/><p:y>文</p:y><b/></a>`))
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	var got []string
	for _, n := range root.Children {
		got = append(got, n.Space+" "+n.Name)
	}
	if strings.Join(got, ",") != "urn:p x,urn:p y,urn:a b" || root.Children[0].Attrs[0].Space != "urn:p" {
		t.Errorf("children %q, attrs %+v", got, root.Children[0].Attrs)
	}
	if _, diags := ParseXML("f.xml", []byte(`<a xmlns:p="urn:p" xmlns:q="urn:q"><p:x></q:x></a>`)); !diags.HasErrors() {
		t.Error("</q:x> closed <p:x>")
	}
}

// TestUTF16 reads a UTF-16 file in either byte order, as XML 1.0 asks,
// with positions in characters.
func TestUTF16(t *testing.T) {
	text := "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<a>\n  <受付 名=\"花子\"/></a>"
	for _, order := range []string{"big", "little"} {
		var b []byte
		if order == "big" {
			b = append(b, 0xFE, 0xFF)
		} else {
			b = append(b, 0xFF, 0xFE)
		}
		for _, r := range text {
			if order == "big" {
				b = append(b, byte(r>>8), byte(r))
			} else {
				b = append(b, byte(r), byte(r>>8))
			}
		}
		root, diags := ParseXML("f.xml", b)
		if diags.HasErrors() {
			t.Fatalf("%s endian: %v", order, diags.Err())
		}
		ch := root.Children[0]
		if ch.Name != "受付" || ch.Pos.Line != 3 || ch.Pos.Col != 3 || ch.AttrValue("名") != "花子" {
			t.Errorf("%s endian: <%s> at %v, 名=%q", order, ch.Name, ch.Pos, ch.AttrValue("名"))
		}
	}
}
