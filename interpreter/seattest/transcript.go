// Package seattest runs conversation transcripts (.seattest files) against
// behaviors: inputs sent from in-memory adaptors, the messages a behavior
// sends compared with the ones the transcript expects, on a virtual clock.
// It is what "seat test" runs. docs/tools.md describes the format.
package seattest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seatml/seat/interpreter"

	"github.com/seatml/seat/schema"
)

// Ext is the extension of transcript files.
const Ext = ".seattest"

// Kind is what a step does.
type Kind uint8

// Step kinds.
const (
	Send       Kind = iota // NAME> TEXT: input from an adaptor; NAME>> JSON: a structured message; NAME:KEY>> JSON: a request
	Expect                 // NAME< TEXT: the next message is TEXT
	ExpectRe               // NAME<~ RE: the next message matches RE
	State                  // = STATE
	Advance                // +10s: move the clock
	Connect                // @connect NAME [PEER]
	Disconnect             // @disconnect NAME [PEER]
	Memory                 // memory> KEY=VALUE
	Widget                 // gui:ID> TEXT: a page's input or button
	Skip                   // ...: messages not expected so far are skipped
	Answer                 // NAME=> JSON: the next seat.call to NAME returns JSON; NAME=> !REASON: it fails
	Event                  // @event NAME [JSON]: an SCXML document gets the external event NAME
	Config                 // == A, B, C: the active states are exactly these
	Set                    // @set NAME JSON: the Lua variable NAME (or name.field) is given the value, as the debugger's set does
)

// Step is one line of a transcript.
type Step struct {
	Pos  schema.Pos
	Kind Kind
	// Adaptor is the adaptor named before the marker, or after @connect;
	// empty for "the input adaptor" (Send) and "any adaptor" (Expect).
	Adaptor string
	// Text is the input, the expected message, the state, or the peer of
	// a Connect or Disconnect ("" for the default).
	Text string
	// Peer is the peer a Send comes from (NAME@PEER> TEXT); "" for the
	// last one connected.
	Peer string
	// Data is a structured message's value (NAME>> JSON), as a ROS
	// adaptor gives it (adaptors.Event.Data), or a service's answer
	// (NAME=> JSON); Text is its JSON.
	Data any
	Re   *regexp.Regexp
	Dur  time.Duration
	// Err is a failed call's reason (NAME=> !REASON).
	Err string
	// Key and Value are a Memory step's. Key is also a structured
	// message's key: NAME:KEY>> JSON, a ROS service request
	// (ros_service) or action goal (ros_action) that the behavior answers.
	Key, Value string
	// States are a Config step's states, as written. An Event step's
	// name is Text, its data Data (nil without JSON).
	States []string
	// Line is the step as written, for reports.
	Line string
	// Recorded is set on steps made from a recording (FromRecording):
	// where and when the recording has them, and the rule that fired for
	// an expected message.
	Recorded *Recorded
}

// Recorded is what a recording says about a step.
type Recorded struct {
	Line int           `json:"line"`           // the recording's line
	T    time.Duration `json:"t"`              // time since the behavior started
	Rule string        `json:"rule,omitempty"` // file:line of the rule that sent an expected message
}

// At is the step's file:line.
func (s Step) At() string { return fmt.Sprintf("%s:%d", s.Pos.File, s.Pos.Line) }

// Transcript is a parsed .seattest file.
type Transcript struct {
	File string
	// Behavior is the file named by a "behavior:" line, relative to the
	// transcript's directory; empty when the transcript does not name one.
	Behavior    string
	BehaviorPos schema.Pos
	Steps       []Step
	// SkippedDevices counts the device events of a recording that
	// FromRecording left out.
	SkippedDevices int
}

// Parse reads a transcript. Errors name the line and column.
func Parse(file string, data []byte) (*Transcript, schema.List) {
	t := &Transcript{File: file}
	var diags schema.List
	if !utf8.Valid(data) {
		diags.Errorf(schema.Pos{File: file}, "a transcript must be UTF-8 text")
		return nil, diags
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	first := true
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSuffix(raw, "\r")
		body := strings.TrimLeft(line, " \t")
		pos := schema.Pos{File: file, Line: i + 1, Col: utf8.RuneCountInString(line[:len(line)-len(body)]) + 1}
		if body == "" || strings.HasPrefix(body, "#") {
			continue
		}
		if first {
			first = false
			if rest, ok := strings.CutPrefix(body, "behavior:"); ok {
				t.Behavior = strings.TrimSpace(rest)
				t.BehaviorPos = pos
				if t.Behavior == "" {
					diags.Errorf(pos, "behavior: names no file")
				}
				continue
			}
		}
		st, err := parseStep(body, pos)
		if err != "" {
			diags.Errorf(pos, "%s", err)
			continue
		}
		st.Line = body
		t.Steps = append(t.Steps, st)
	}
	if len(t.Steps) == 0 && !diags.HasErrors() {
		diags.Errorf(schema.Pos{File: file}, "no steps: a transcript needs at least one line such as \"> hello\" or \"< Hello!\"")
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return t, diags
}

// marker finds the adaptor name and the marker of a send or expect step.
var marker = regexp.MustCompile(`^([^\s<>=@+#]*)(?:@([^\s<>]+?))?(<~|<|>>|=>|>)( |$)`)

func parseStep(body string, pos schema.Pos) (Step, string) {
	st := Step{Pos: pos}
	switch {
	case body == "...":
		st.Kind = Skip
		return st, ""
	case strings.HasPrefix(body, "+"):
		d, err := time.ParseDuration(strings.TrimSpace(body[1:]))
		if err != nil || d <= 0 {
			return st, fmt.Sprintf("%q is not a time to advance: write +10s, +250ms or +1m30s", body)
		}
		st.Kind, st.Dur = Advance, d
		return st, ""
	case strings.HasPrefix(body, "=>"):
		return st, "=> wants the adaptor that calls the service: NAME=> JSON, for example add_two_ints=> {\"sum\": 42}"
	case strings.HasPrefix(body, "=="):
		st.Kind = Config
		seen := map[string]bool{}
		for _, name := range strings.Split(body[2:], ",") {
			name = strings.TrimSpace(name)
			switch {
			case name == "":
				return st, "== wants every active state, separated by commas, for example == 受付, 接客, 用件"
			case seen[name]:
				return st, fmt.Sprintf("== names %s twice", name)
			}
			seen[name] = true
			st.States = append(st.States, name)
		}
		return st, ""
	case strings.HasPrefix(body, "="):
		st.Kind, st.Text = State, strings.TrimSpace(body[1:])
		if st.Text == "" {
			return st, "= names no state"
		}
		return st, ""
	case body == "@event" || strings.HasPrefix(body, "@event ") || strings.HasPrefix(body, "@event\t"):
		name, data := strings.TrimSpace(body[len("@event"):]), ""
		if i := strings.IndexAny(name, " \t"); i >= 0 {
			name, data = name[:i], name[i+1:]
		}
		if name == "" {
			return st, "@event wants an event's name and, optionally, its data as JSON: @event 呼び出し {\"番号\": 3}"
		}
		st.Kind, st.Text = Event, name
		if data = strings.TrimSpace(data); data != "" {
			if err := json.Unmarshal([]byte(data), &st.Data); err != nil {
				return st, fmt.Sprintf("@event %s: its data must be JSON, for example {\"番号\": 3}: %s", name, jsonCause(data, err))
			}
		}
		return st, ""
	case body == "@set" || strings.HasPrefix(body, "@set ") || strings.HasPrefix(body, "@set\t"):
		name, value, _ := strings.Cut(strings.TrimSpace(body[len("@set"):]), " ")
		st.Kind, st.Key, st.Text = Set, name, strings.TrimSpace(value)
		if name == "" || st.Text == "" {
			return st, "@set wants a Lua variable and its value as JSON: @set guest \"田中\""
		}
		if err := interpreter.CheckSet(st.Key, st.Text); err != nil {
			return st, "@set: " + err.Error()
		}
		return st, ""
	case strings.HasPrefix(body, "@"):
		f := strings.Fields(body)
		switch f[0] {
		case "@connect":
			st.Kind = Connect
		case "@disconnect":
			st.Kind = Disconnect
		default:
			return st, fmt.Sprintf("unknown step %q: want @connect NAME, @disconnect NAME, @event NAME or @set NAME JSON", f[0])
		}
		if len(f) < 2 || len(f) > 3 {
			return st, fmt.Sprintf("%s takes an adaptor's name and, optionally, a peer's", f[0])
		}
		st.Adaptor = f[1]
		if len(f) == 3 {
			st.Text = f[2]
		}
		return st, ""
	}
	if rest, ok := strings.CutPrefix(body, "gui:"); ok {
		id, text, ok := strings.Cut(rest, ">")
		if !ok || strings.TrimSpace(id) == "" {
			return st, "gui: wants a widget, as gui:ID> TEXT for an input or gui:LABEL> for a button"
		}
		st.Kind, st.Adaptor, st.Text = Widget, strings.TrimSpace(id), strings.TrimPrefix(text, " ")
		return st, ""
	}
	m := marker.FindStringSubmatchIndex(body)
	if m == nil {
		return st, fmt.Sprintf("cannot read %q: a step is \"> TEXT\", \"< TEXT\", \"<~ REGEXP\", \"= STATE\", \"== STATE, STATE\", \"+10s\", \"@connect NAME\", \"@event NAME\", \"NAME=> JSON\" or \"...\"", schema.Excerpt(body, 40))
	}
	st.Adaptor = body[m[2]:m[3]]
	if m[4] >= 0 {
		st.Peer = body[m[4]:m[5]]
	}
	rest := body[m[1]:]
	switch body[m[6]:m[7]] {
	case ">":
		st.Kind, st.Text = Send, rest
		if st.Adaptor == "memory" {
			k, v, ok := strings.Cut(rest, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return st, "memory> wants KEY=VALUE, for example memory> Head/Touch/Front/Sensor=1"
			}
			st.Kind, st.Key, st.Value = Memory, strings.TrimSpace(k), strings.TrimSpace(v)
		}
	case ">>":
		st.Kind, st.Text = Send, rest
		if i := strings.LastIndexByte(st.Adaptor, ':'); i > 0 {
			st.Adaptor, st.Key = st.Adaptor[:i], st.Adaptor[i+1:]
		}
		if err := json.Unmarshal([]byte(rest), &st.Data); err != nil || st.Data == nil {
			return st, fmt.Sprintf("NAME>> wants a message as JSON, for example joy>> {\"axes\": [0.5, 0], \"buttons\": [1]}: %s", jsonError(rest, err))
		}
	case "=>":
		st.Kind, st.Text = Answer, rest
		if reason, ok := strings.CutPrefix(rest, "!"); ok { // the call fails
			if st.Err = strings.TrimSpace(reason); st.Err == "" {
				return st, "NAME=> ! wants the reason the call fails, for example add_two_ints=> !service /add_two_ints is not there"
			}
			break
		}
		if err := json.Unmarshal([]byte(rest), &st.Data); err != nil {
			return st, fmt.Sprintf("NAME=> wants the service's answer as JSON, for example add_two_ints=> {\"sum\": 42}: %s", jsonCause(rest, err))
		}
	case "<":
		st.Kind, st.Text = Expect, rest
	case "<~":
		re, err := regexp.Compile(rest)
		if err != nil {
			return st, fmt.Sprintf("bad regular expression: %v", err)
		}
		st.Kind, st.Re, st.Text = ExpectRe, re, rest
	}
	if st.Peer != "" && st.Kind != Send {
		return st, "only input names a peer (NAME@PEER> TEXT); a message is expected as NAME< TEXT"
	}
	return st, ""
}

// jsonError says what is wrong with a step's JSON text.
func jsonError(text string, err error) string {
	if err == nil {
		return "null is no message"
	}
	return jsonCause(text, err)
}

// jsonCause says what is wrong with JSON text: for a syntax error, the
// character (encoding/json names the first byte of a Japanese one, as
// 'ç' for 番) and where it is, counted in characters.
func jsonCause(text string, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset <= 0 || int(se.Offset) > len(text) {
		return err.Error()
	}
	i := int(se.Offset) - 1
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	msg := se.Error()
	if rest, ok := strings.CutPrefix(msg, "invalid character "); ok && len(rest) > 1 {
		if j := strings.Index(rest[1:], "' "); j >= 0 {
			msg = fmt.Sprintf("invalid character %q %s", r, rest[j+3:])
		}
	}
	return fmt.Sprintf("%s, at character %d of the JSON", msg, utf8.RuneCountInString(text[:i])+1)
}
