package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/interpreter/seatml"
)

// manyRules is a state with n rules whose keys expand and match like real
// dialogue keys: alternatives, optional words, patterns.
func manyRules(n int) string {
	var b strings.Builder
	b.WriteString(`<seatml><general name="many"/><state name="s">`)
	for i := range n {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `<rule><key>(hello|hi|hey) robot%d</key><log>x</log></rule>`, i)
		case 1:
			fmt.Fprintf(&b, `<rule><key>[please ]say number %d</key><log>x</log></rule>`, i)
		case 2:
			fmt.Fprintf(&b, `<rule><key>item%d \d+$</key><log>x</log></rule>`, i)
		default:
			fmt.Fprintf(&b, `<rule><key>go to room %d(a|b|c)</key><log>x</log></rule>`, i)
		}
	}
	b.WriteString(`</state></seatml>`)
	return b.String()
}

// BenchmarkKeyExpansion expands every key of a 1,000-rule state.
func BenchmarkKeyExpansion(b *testing.B) {
	keys := []string{"(hello|hi|hey) robot7", "[please ]say number 13", `item2 \d+$`, "go to room 3(a|b|c)", "(go|run) [fast ]now", "a(b|c(d|e))f"}
	b.ReportAllocs()
	for b.Loop() {
		for range 1000 / len(keys) {
			for _, k := range keys {
				if _, err := seatml.ExpandKey(k); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkMatch1000Rules handles events against 1,000 rules: an exact
// word late in the list, a pattern, and text that matches nothing.
func BenchmarkMatch1000Rules(b *testing.B) {
	m := machine(b, manyRules(1000))
	for _, c := range []struct{ name, text string }{
		{"exact", "hey robot996"},
		{"pattern", "item998 42"},
		{"none", "nothing matches this"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ev := adaptors.Event{Source: "x", Text: c.text}
			b.ReportAllocs()
			for b.Loop() {
				m.Dispatch(ev)
			}
		})
	}
}

// bigFile is a behavior of states × rulesPerState rules.
func bigFile(states, rulesPerState int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>` + "\n" + `<seatml><general name="big"><adaptor name="chat" type="socket" role="server" port="0"/></general>` + "\n")
	for s := range states {
		fmt.Fprintf(&b, "<state name=\"s%d\">\n<onentry><log>entered %d</log></onentry>\n", s, s)
		for r := range rulesPerState {
			next := (s + r + 1) % states
			switch r % 3 {
			case 0:
				fmt.Fprintf(&b, "<rule source=\"chat\"><key>(go|move) to s%d</key><statetransition>s%d</statetransition></rule>\n", next, next)
			case 1:
				fmt.Fprintf(&b, "<rule><key>ask %d [please]</key><message sendto=\"chat\">answer %d</message></rule>\n", r, r)
			default:
				fmt.Fprintf(&b, "<rule><key>count%d \\d+</key><cond>seat.state() == \"s%d\"</cond><script>n%d = (n%d or 0) + %d</script></rule>\n", r, s, r, r, s)
			}
		}
		b.WriteString("</state>\n")
	}
	b.WriteString("</seatml>\n")
	return []byte(b.String())
}

// BenchmarkLoad10000Rules parses, validates and compiles (Lua included) a
// generated 10,000-rule, 1,000-state file, and reports it beside its
// floor: the time encoding/xml takes to tokenize the same file plus
// gopher-lua parsing and compiling each of its chunks, measured in the
// same run (load/floor).
func BenchmarkLoad10000Rules(b *testing.B) {
	data := bigFile(1000, 10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		prog, diags := seatml.LoadBytes("big.seatml", data, seatml.LoadOptions{})
		if prog == nil {
			b.Fatal(diags)
		}
	}
	load := time.Since(start) / time.Duration(b.N)
	const floorRuns = 3
	start = time.Now()
	for range floorRuns {
		if err := loadFloor(data); err != nil {
			b.Fatal(err)
		}
	}
	floor := time.Since(start) / floorRuns
	b.ReportMetric(float64(len(data))/1024, "KiB/file")
	b.ReportMetric(float64(floor.Nanoseconds())/1e6, "floor-ms")
	b.ReportMetric(float64(load)/float64(floor), "load/floor")
}

// loadFloor is the least a loader of the file must do: tokenize it with
// encoding/xml and parse and compile each script and cond with
// gopher-lua (conds as the return of an expression).
func loadFloor(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	var in string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local
		case xml.EndElement:
			in = ""
		case xml.CharData:
			src := string(t)
			switch in {
			case "cond":
				src = "return " + src
			case "script":
			default:
				continue
			}
			chunk, err := parse.Parse(strings.NewReader(src), in)
			if err != nil {
				return err
			}
			if _, err := lua.Compile(chunk, in); err != nil {
				return err
			}
		}
	}
}

// BenchmarkControlCycle is one control cycle over the full NAO tree on the
// simulator, with every joint moving.
func BenchmarkControlCycle(b *testing.B) {
	e, err := hal.NewEngine(hal.NAOTree(), hal.NewSim(), hal.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, j := range e.Tree().Joints {
		e.SetSub(j.Hardness, []hal.Command{{Value: 1, At: 0}}, hal.ClearAll)
		e.SetSub(j.Position, []hal.Command{{Value: j.Position.Max, At: time.Hour}}, hal.ClearAll)
	}
	now := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		now += 10 * time.Millisecond
		if err := e.Step(now); err != nil {
			b.Fatal(err)
		}
	}
}
