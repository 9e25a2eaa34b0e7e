package seattest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seatml/seat/interpreter/record"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// FromRecording makes a transcript of one behavior's part of a recording
// (seat run --record): its inputs at their times, the messages it sent as
// expectations, and its state before each input. behavior names the
// behavior, and may be empty when the recording holds only one.
//
// Device events (sources memory and motion) are not inputs of the
// transcript: on the virtual clock the simulated robot makes its own, and
// a memory key a script wrote would otherwise arrive twice.
func FromRecording(file string, lines []record.Line, behavior string) (*Transcript, error) {
	var names []string
	starts := map[string]record.Line{}
	for _, l := range lines {
		if l.Kind == record.KindStart {
			if _, ok := starts[l.Behavior]; !ok {
				names = append(names, l.Behavior)
			}
			starts[l.Behavior] = l // a reload starts again; the last start wins
		}
	}
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("%s: the recording has no behavior in it", file)
	case behavior == "" && len(names) > 1:
		return nil, fmt.Errorf("%s: the recording holds %d behaviors (%s): choose one with --name", file, len(names), strings.Join(names, ", "))
	case behavior == "":
		behavior = names[0]
	}
	start, ok := starts[behavior]
	if !ok {
		return nil, fmt.Errorf("%s: no behavior %q in the recording (it has %s)%s", file, behavior, strings.Join(names, ", "),
			schema.DidYouMean(behavior, names, "%q"))
	}
	g := &generator{t: &Transcript{File: file, Behavior: start.File}, file: file, t0: -1, last: map[string]string{}, sessions: map[string]bool{}}
	for _, l := range lines {
		if l.Behavior != behavior || l.Line < start.Line {
			continue
		}
		g.line(l)
		if g.err != nil {
			return nil, g.err
		}
	}
	g.flushAdvance()
	g.flushState()
	g.t.SkippedDevices = g.skipped
	if !slices.ContainsFunc(g.t.Steps, func(s Step) bool { return s.Kind != State && s.Kind != Advance }) {
		return nil, fmt.Errorf("%s: behavior %q did nothing in the recording that a replay can repeat (%d device events, which the simulated robot makes itself)", file, behavior, g.skipped)
	}
	return g.t, nil
}

type generator struct {
	t    *Transcript
	file string
	t0   time.Duration // the initial state's entry
	cur  time.Duration // the transcript's clock
	// pending is a timer's time: the clock moves to it before the
	// messages and states the timer caused.
	pending        time.Duration
	pendingLine    record.Line
	state, checked string
	// statePeer is the session whose state state is ("" without
	// sessions). A transcript checks the state of the session of the peer
	// that spoke or connected last (lastPeer); a session's state is
	// checked only when it is that one.
	statePeer, lastPeer string
	sessions            map[string]bool // peers whose state the recording shows
	fire                string
	last                map[string]string // the last peer connected, by adaptor
	// Skipped counts the device events left out.
	skipped int
	err     error // the first line that cannot be replayed
}

func (g *generator) at(l record.Line) time.Duration { return max(l.Duration()-g.t0, 0) }

func (g *generator) add(kind Kind, l record.Line, line string, st Step) {
	st.Kind, st.Line = kind, line
	st.Pos = schema.Pos{File: g.file, Line: l.Line}
	st.Recorded = &Recorded{Line: l.Line, T: g.at(l), Rule: g.fire}
	g.t.Steps = append(g.t.Steps, st)
}

func (g *generator) advanceTo(l record.Line, t time.Duration) {
	if t <= g.cur {
		return
	}
	d := (t - g.cur).Round(time.Microsecond)
	if d <= 0 {
		return
	}
	g.cur += d
	if n := len(g.t.Steps); n > 0 && g.t.Steps[n-1].Kind == Advance { // one step, not "+9ms" then "+85µs"
		last := &g.t.Steps[n-1]
		last.Dur += d
		last.Line = "+" + last.Dur.String()
		// It goes as far as l: the recording's line and time it reaches.
		last.Pos.Line, last.Recorded.Line, last.Recorded.T = l.Line, l.Line, g.at(l)
		return
	}
	g.add(Advance, l, "+"+d.String(), Step{Dur: d})
}

func (g *generator) flushState() {
	if g.statePeer != g.lastPeer {
		return // another session's state: not what "= STATE" looks at now
	}
	if g.state != "" && g.state != g.checked {
		g.t.Steps = append(g.t.Steps, Step{Kind: State, Text: g.state, Line: "= " + g.state, Pos: schema.Pos{File: g.file}})
		g.checked = g.state
	}
}

func (g *generator) flushAdvance() {
	if g.pending > g.cur {
		g.flushState()
		g.advanceTo(g.pendingLine, g.pending)
	}
	g.pending = 0
}

func (g *generator) line(l record.Line) {
	if g.t0 < 0 {
		if l.Kind != "state" {
			return // before the initial state: nothing of the behavior yet
		}
		g.t0 = l.Duration()
	}
	switch l.Kind {
	case "timer":
		g.pending, g.pendingLine = g.at(l), l
	case "fire":
		g.fire = l.At
	case "state":
		g.flushAdvance()
		if l.Peer != g.statePeer {
			g.checked = "" // another session: its state was not checked yet
		}
		g.state, g.statePeer = l.State, l.Peer
		if l.Peer != "" {
			g.sessions[l.Peer] = true
		}
	case "out":
		g.flushAdvance()
		text := l.TextOf()
		g.add(Expect, l, l.Source+"< "+text, Step{Adaptor: l.Source, Text: text})
	case "answer": // a service's answer to seat.call: given before the step whose rule called it
		st := Step{Kind: Answer, Adaptor: l.Source, Text: l.TextOf(), Line: l.Source + "=> " + l.TextOf(),
			Pos: schema.Pos{File: g.file, Line: l.Line}, Recorded: &Recorded{Line: l.Line, T: g.at(l), Rule: g.fire}}
		if l.Key == "error" { // the call failed
			st.Err = strings.Join(strings.Fields(l.TextOf()), " ") // one line
			st.Text, st.Line = "!"+st.Err, l.Source+"=> !"+st.Err
		} else if err := json.Unmarshal([]byte(st.Text), &st.Data); err != nil {
			g.err = fmt.Errorf("%s:%d: the answer is not JSON: %v", g.file, l.Line, err)
		}
		i := len(g.t.Steps)
		for i > 0 && !slices.Contains([]Kind{Send, Widget, Connect, Disconnect, Advance, Memory}, g.t.Steps[i-1].Kind) {
			i--
		}
		if i > 0 {
			i--
		}
		g.t.Steps = slices.Insert(g.t.Steps, i, st)
	case "set": // the debugger set a variable: the replay sets it at the same point
		g.add(Set, l, "@set "+l.Key+" "+l.TextOf(), Step{Key: l.Key, Text: l.TextOf()})
	case "paused":
		// The debugger held the behavior, and its timers, for that long:
		// the replay's clock leaves the time out, as the timers did.
		if held, err := strconv.ParseFloat(l.TextOf(), 64); err == nil && held > 0 {
			g.t0 += time.Duration(held * float64(time.Second))
		}
	case "raise":
		// An internal event: the replayed behavior raises it itself.
	case "error":
		// What failed: the replayed behavior fails again itself.
	case "cut":
		// seat stopped in the middle of the last input: it was not
		// handled, and what it did so far (a call's answer, messages) is
		// not what a replay of it would do. It is left out.
		k := len(g.t.Steps)
		for k > 0 && !slices.Contains([]Kind{Send, Widget, Connect, Disconnect}, g.t.Steps[k-1].Kind) {
			k--
		}
		if k > 0 {
			k--
			for k > 0 && g.t.Steps[k-1].Kind == Answer { // its calls' answers, given before it
				k--
			}
			g.t.Steps = g.t.Steps[:k]
			g.cur = 0 // the transcript's clock as its steps left it
			for _, st := range g.t.Steps {
				if st.Kind == Advance {
					g.cur += st.Dur
				}
			}
		}
	case "in", "connect", "disconnect":
		if l.Source == seatml.InternalSource {
			return // an internal event, as recordings before the raise kind wrote it
		}
		if l.Source == "memory" || l.Source == "motion" {
			// The simulated robot makes it again, at its control cycle:
			// the clock moves to when it came, so that the cycle runs.
			g.skipped++
			g.flushAdvance()
			g.flushState()
			g.advanceTo(l, g.at(l))
			return
		}
		g.flushAdvance()
		g.flushState()
		g.advanceTo(l, g.at(l))
		g.fire = ""
		switch {
		case l.Kind == "connect":
			g.add(Connect, l, "@connect "+l.Source+" "+l.Peer, Step{Adaptor: l.Source, Text: l.Peer})
			g.last[l.Source] = l.Peer
			g.speaks(l.Peer)
		case l.Kind == "disconnect":
			g.add(Disconnect, l, "@disconnect "+l.Source+" "+l.Peer, Step{Adaptor: l.Source, Text: l.Peer})
		case l.Source == "gui":
			g.add(Widget, l, "gui:"+l.Key+"> "+l.TextOf(), Step{Adaptor: l.Key, Text: l.TextOf()})
		default:
			name := l.Source
			st := Step{Adaptor: l.Source, Text: l.TextOf()}
			if l.Message && l.Key != "" { // a request: NAME:KEY>> JSON
				name += ":" + l.Key
				st.Key = l.Key
			}
			if l.Peer != "" && l.Peer != g.last[l.Source] {
				st.Peer = l.Peer
				name += "@" + l.Peer
				g.last[l.Source] = l.Peer // named once, the peer is the one plain input comes from
			}
			mark := "> "
			if l.Message { // a structured message, as its JSON
				mark = ">> "
				if err := json.Unmarshal([]byte(st.Text), &st.Data); err != nil || st.Data == nil {
					g.err = fmt.Errorf("%s:%d: the message is not JSON: %s", g.file, l.Line, jsonError(st.Text, err))
				}
			}
			g.add(Send, l, name+mark+l.TextOf(), st)
			g.speaks(l.Peer)
		}
	}
}

// speaks notes that a peer spoke or connected: if it has a session, a
// state check now looks at its state.
func (g *generator) speaks(peer string) {
	if g.sessions[peer] && peer != g.lastPeer {
		g.lastPeer = peer
		g.checked = ""
	}
}

// Format writes a transcript as a .seattest file. header lines become
// comments at the top.
func Format(t *Transcript, header ...string) string {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	if t.Behavior != "" {
		fmt.Fprintf(&b, "behavior: %s\n", t.Behavior)
	}
	for _, st := range t.Steps {
		b.WriteString(st.Line)
		b.WriteByte('\n')
	}
	return b.String()
}

// count is "1 input", "2 inputs".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Summary counts a transcript's steps by kind, for reports.
func Summary(t *Transcript) string {
	n := map[Kind]int{}
	for _, st := range t.Steps {
		n[st.Kind]++
	}
	parts := []string{count(n[Send]+n[Widget], "input"), count(n[Expect], "message")}
	if c := n[Connect] + n[Disconnect]; c > 0 {
		parts = append(parts, count(c, "connection"))
	}
	sort.Strings(parts[2:])
	return strings.Join(parts, ", ")
}
