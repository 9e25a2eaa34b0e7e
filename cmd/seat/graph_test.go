package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seatml/seat/adaptors/web/webtest"
	"github.com/seatml/seat/interpreter/graph"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/statechart"
)

// graphFiles are the behaviors seat graph is tested on: every example,
// and testdata/graph's, which has every kind of edge and an include.
func graphFiles(t *testing.T) []string {
	examples, _ := filepath.Glob("../../examples/*.seatml")
	scxml, _ := filepath.Glob("../../examples/*.scxml") // golden files named NAME.scxml.dot
	more, _ := filepath.Glob("../../testdata/graph/*.seatml")
	if len(examples) < 7 || len(scxml) < 1 || len(more) < 1 {
		t.Fatalf("%d examples, %d SCXML examples, %d in testdata/graph", len(examples), len(scxml), len(more))
	}
	return append(append(examples, scxml...), more...)
}

// needDot returns Graphviz's dot, skipping the test when it is missing
// unless SEAT_REQUIRE_TOOLS is set (as .ci/run does).
func needDot(t *testing.T) string {
	dot, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("SEAT_REQUIRE_TOOLS") != "" {
			t.Fatal("Graphviz's dot is not installed and SEAT_REQUIRE_TOOLS is set (apt-get install graphviz)")
		}
		t.Skip("Graphviz's dot is not installed (apt-get install graphviz)")
	}
	return dot
}

func render(t *testing.T, dot string, src []byte) []byte {
	t.Helper()
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = bytes.NewReader(src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("dot -Tsvg: %v\n%s", err, stderr.String())
	}
	return out
}

// svgText returns the titles and texts of an SVG drawn by dot: the node
// names, the edges as "a->b", and the labels, in order.
func svgText(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	d.Strict = false
	var out []string
	var in string
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			in = tk.Name.Local
		case xml.EndElement:
			in = ""
		case xml.CharData:
			if s := strings.TrimSpace(string(tk)); s != "" && (in == "title" || in == "text") {
				out = append(out, in+": "+s)
			}
		}
	}
	return out
}

// TestGraphGolden: seat graph prints each behavior as DOT and Mermaid as
// in testdata/graph (go test ./cmd/seat -update rewrites them), and dot
// renders the DOT: every state a node, every edge drawn.
func TestGraphGolden(t *testing.T) {
	dot := needDot(t)
	for _, file := range graphFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".seatml")
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runSeat("graph", file)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			golden(t, "../../testdata/graph/"+name+".dot", stdout)
			mmd, stderr, code := runSeat("graph", "--format", "mermaid", file)
			if code != 0 || stderr != "" {
				t.Fatalf("mermaid: exit %d\n%s", code, stderr)
			}
			golden(t, "../../testdata/graph/"+name+".mmd", mmd)

			prog, diags := seatml.Load(file, seatml.LoadOptions{})
			if prog == nil {
				t.Fatal(diags)
			}
			text := svgText(t, render(t, dot, []byte(stdout)))
			for _, s := range prog.States {
				// Each state is a node titled with its name exactly, or,
				// holding states, a cluster titled cluster_NAME and
				// labelled with its name (the monitor finds them so).
				cluster := len(s.Children) > 0 || s.Kind == statechart.Parallel
				history := s.Kind == statechart.ShallowHistory || s.Kind == statechart.DeepHistory // drawn H or H*
				switch {
				case cluster && (!slices.Contains(text, "title: cluster_"+s.Name) || !slices.Contains(text, "text: "+s.Name)):
					t.Errorf("state %q is not a cluster of the picture titled cluster_ and its name, labelled with its name", s.Name)
				case !cluster && !slices.Contains(text, "title: "+s.Name):
					t.Errorf("state %q is not a node of the picture titled with its name", s.Name)
				case !cluster && !history && !slices.Contains(text, "text: "+s.Name):
					t.Errorf("state %q is not labelled with its name", s.Name)
				}
			}
			edges := 0
			for _, l := range text {
				if strings.HasPrefix(l, "title: ") && strings.Contains(l, "->") {
					edges++
				}
			}
			if want := len(prog.Edges()) + 1; edges != want { // and the start arrow
				t.Errorf("%d edges drawn, want %d:\n%s", edges, want, strings.Join(text, "\n"))
			}
		})
	}
}

// TestGraphDocsPictures: docs/graphs has each example's picture, made by
// seat graph | dot -Tsvg from the current file: the same nodes, edges and
// labels (-update redraws them).
func TestGraphDocsPictures(t *testing.T) {
	dot := needDot(t)
	examples, _ := filepath.Glob("../../examples/*.seatml")
	for _, file := range examples {
		name := strings.TrimSuffix(filepath.Base(file), ".seatml")
		stdout, _, _ := runSeat("graph", file)
		svg := render(t, dot, []byte(stdout))
		path := "../../docs/graphs/" + name + ".svg"
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, svg, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v (go test ./cmd/seat -run GraphDocs -update draws it)", err)
			continue
		}
		if got, want := svgText(t, svg), svgText(t, old); !slices.Equal(got, want) {
			t.Errorf("%s is not the picture of %s (go test ./cmd/seat -run GraphDocs -update redraws it):\nnow:  %q\ndocs: %q", path, file, got, want)
		}
	}
}

// TestGraphBadInput: a file with errors prints them and exits 1; a bad
// format or several files exit 2.
func TestGraphBadInput(t *testing.T) {
	_, stderr, code := runSeat("graph", "../../testdata/check/undeclared-target.seatml")
	if code != 1 || !strings.Contains(stderr, "undeclared-target.seatml:") {
		t.Errorf("file with errors: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runSeat("graph", "--format", "png", "../../examples/greeter.seatml"); code != 2 || !strings.Contains(stderr, "want dot or mermaid") {
		t.Errorf("bad format: exit %d\n%s", code, stderr)
	}
	if _, _, code := runSeat("graph", "../../examples/greeter.seatml", "../../examples/kiosk.seatml"); code != 2 {
		t.Errorf("two files: exit %d", code)
	}
}

// TestGraphMermaidRenders renders every golden Mermaid graph with Mermaid
// itself, in headless Chromium: each parses as stateDiagram-v2 and shows
// every state's name and every edge's label as written. Mermaid's
// mermaid.min.js is found at $SEAT_MERMAID (.ci/run fetches the pinned
// version with npm); without it the test is skipped, unless
// SEAT_REQUIRE_TOOLS is set.
func TestGraphMermaidRenders(t *testing.T) {
	js := os.Getenv("SEAT_MERMAID")
	if js == "" {
		if os.Getenv("SEAT_REQUIRE_TOOLS") != "" {
			t.Fatal("SEAT_MERMAID does not name mermaid.min.js and SEAT_REQUIRE_TOOLS is set (.ci/run fetches it)")
		}
		t.Skip("SEAT_MERMAID is not set: Mermaid is not at hand (npm pack mermaid; see .ci/run)")
	}
	lib, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	b := webtest.Start(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/mermaid.min.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(lib)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><meta charset="utf-8"><script src="/mermaid.min.js"></script><script>mermaid.initialize({startOnLoad:false});</script><body></body>`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b.Navigate(srv.URL + "/")
	b.WaitFor("mermaid loaded", `typeof mermaid === "object" && typeof mermaid.render === "function"`)
	for i, file := range graphFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".seatml")
		src, err := os.ReadFile("../../testdata/graph/" + name + ".mmd")
		if err != nil {
			t.Fatal(err)
		}
		quoted, _ := json.Marshal(string(src))
		v, err := b.Try(fmt.Sprintf(`mermaid.render("g%d", %s).then(r => { const d = new DOMParser().parseFromString(r.svg, "image/svg+xml"); return d.documentElement.textContent; })`, i, quoted))
		if err != nil {
			t.Errorf("%s: Mermaid cannot render it: %v\n%s", name, err, src)
			continue
		}
		text, _ := v.(string)
		prog, _ := seatml.Load(file, seatml.LoadOptions{})
		for _, s := range prog.States {
			if !strings.Contains(text, s.Name) {
				t.Errorf("%s: state %s is not in Mermaid's picture", name, s.Name)
			}
		}
		g := graph.New(prog)
		for _, e := range prog.Edges() {
			if l := g.Label(e); !strings.Contains(text, l) {
				t.Errorf("%s: label %q is not in Mermaid's picture (it shows %q)", name, l, text)
			}
		}
	}
}
