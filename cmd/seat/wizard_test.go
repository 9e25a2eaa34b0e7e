package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestWizardEndsWithTheLastPage runs the wizard example with the kiosk it
// speaks for as a real seat process, and opens two operator pages over
// the web adaptor's WebSocket, as two browser tabs do. The first page
// begins a session. Closing that page while the second is open leaves the
// session going: the kiosk is not told "bye", the wizard stays in
// operator, and the second page's next button reaches the kiosk, whose
// reply it shows. Closing the last page ends the session: "bye" reaches
// the kiosk and the wizard is back at start. (Issue 21 #18: any page
// closing, even a second tab, ended the session.) The monitor's log
// (--control) says when seat has handled a page's departure.
func TestWizardEndsWithTheLastPage(t *testing.T) {
	kport, wport, ctl := freePortNumber(t), freePortNumber(t), freePort(t)
	startSeat(t, "run", "--control", ctl, "--set", "visitor.port="+kport, "--set", "web.port="+wport, "--set", "kiosk.port="+kport,
		"../../examples/kiosk.seatml", "../../examples/wizard.seatml")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	state := func(behavior string) string {
		resp, err := client.Get("http://" + ctl + "/behaviors/" + behavior)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		var info struct {
			State string `json:"seatml_state"`
		}
		json.NewDecoder(resp.Body).Decode(&info)
		return info.State
	}
	waitFor(t, func() bool { return state("wizard") == "start" && state("kiosk") == "attract" })
	mon := watchMonitor(t, "ws://"+ctl+"/monitor/ws")

	first, second := openPage(t, "ws://127.0.0.1:"+wport+"/ws"), openPage(t, "ws://127.0.0.1:"+wport+"/ws")
	for _, p := range []*wizardPage{first, second} {
		p.waitFor(t, "its greeting", func(f pageFrame) bool { return f.Type == "message" && f.Text == "operator connected from "+p.peer })
	}
	first.press(t, "Begin session")
	first.waitFor(t, "the kiosk's greeting", func(f pageFrame) bool { return f.replies("Visitor #1: tickets, map, or help?") })
	second.waitFor(t, "the operator panel", func(f pageFrame) bool { return f.Type == "state" && f.Name == "operator" })

	// The page that began the session closes; the other is still open.
	first.close(t)
	mon.waitFor(t, "the first page's departure handled", func(l monitorLine) bool {
		return l.Behavior == "wizard" && l.Kind == "disconnect" && l.Source == "web" && l.Peer == first.peer
	})
	second.press(t, "Tickets")
	f := second.waitFor(t, "the kiosk's answer, or the session's end", func(f pageFrame) bool {
		return f.replies("How many tickets? (1 to 9)") || f.Type == "state" && f.Name == "start"
	})
	if f.Type == "state" {
		t.Fatal("closing one of two operator pages ended the session: the other page is back at start")
	}
	if got := state("wizard"); got != "operator" {
		t.Errorf("with one of two pages closed the wizard is in %q, want operator", got)
	}
	if got := state("kiosk"); got != "tickets" {
		t.Errorf("with one of two pages closed the kiosk is in %q, want tickets", got)
	}
	if mon.seen(func(l monitorLine) bool { return l.Behavior == "kiosk" && l.Kind == "in" && l.Text == "bye" }) {
		t.Error(`the kiosk was told "bye" when one of two pages closed`)
	}

	// The last page closes: the session ends.
	second.close(t)
	mon.waitFor(t, `"bye" at the kiosk`, func(l monitorLine) bool { return l.Behavior == "kiosk" && l.Kind == "in" && l.Text == "bye" })
	waitFor(t, func() bool { return state("wizard") == "start" && state("kiosk") == "attract" })
}

// pageFrame is a frame the web adaptor sends a page.
type pageFrame struct {
	Type  string `json:"type"`
	Name  string `json:"name"` // a "state" frame's state
	Text  string `json:"text"` // a "message" frame's text
	ID    string `json:"id"`
	Op    string `json:"op"`
	Value string `json:"value"`
}

// replies reports whether the frame shows text in the operator's replies.
func (f pageFrame) replies(text string) bool {
	return f.Type == "gui" && f.ID == "operator:replies" && strings.Contains(f.Value, text)
}

// wizardPage is an operator page: the web adaptor's WebSocket and the
// frames it has received.
type wizardPage struct {
	ws   *websocket.Conn
	peer string // the page's address, as seat names it
	mu   sync.Mutex
	got  []pageFrame
	next int           // the first frame waitFor has not looked at
	more chan struct{} // closed and replaced on every frame
	done chan struct{} // closed when the connection ends
}

// openPage opens an operator page once the adaptor listens.
func openPage(t *testing.T, url string) *wizardPage {
	t.Helper()
	p := &wizardPage{more: make(chan struct{}), done: make(chan struct{})}
	waitFor(t, func() bool {
		var err error
		p.ws, _, err = websocket.DefaultDialer.Dial(url, nil)
		return err == nil
	})
	p.peer = p.ws.LocalAddr().String()
	t.Cleanup(func() { p.ws.Close(); <-p.done })
	go func() {
		defer close(p.done)
		for {
			var f pageFrame
			if err := p.ws.ReadJSON(&f); err != nil {
				return
			}
			p.mu.Lock()
			p.got = append(p.got, f)
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	return p
}

// waitFor returns the next frame that ok accepts, among those after the
// last one it returned, failing the test after 10 s.
func (p *wizardPage) waitFor(t *testing.T, what string, ok func(pageFrame) bool) pageFrame {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		p.mu.Lock()
		got, more := p.got, p.more
		p.mu.Unlock()
		for ; p.next < len(got); p.next++ {
			if ok(got[p.next]) {
				p.next++
				return got[p.next-1]
			}
		}
		select {
		case <-more:
		case <-p.done:
			t.Fatalf("page %s: connection closed while waiting for %s", p.peer, what)
		case <-deadline:
			t.Fatalf("page %s: no %s within 10 s; it got %+v", p.peer, what, got)
		}
	}
}

// press presses a button of the panel, as the page's script does.
func (p *wizardPage) press(t *testing.T, label string) {
	t.Helper()
	if err := p.ws.WriteJSON(map[string]string{"type": "event", "source": "gui", "id": label, "text": label}); err != nil {
		t.Fatal(err)
	}
}

// close closes the page as a browser closing its tab does: a close frame,
// then the connection.
func (p *wizardPage) close(t *testing.T) {
	t.Helper()
	p.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
	p.ws.Close()
	<-p.done
}

// monitorLine is a line of the monitor's log.
type monitorLine struct {
	Behavior string `json:"behavior"`
	Kind     string `json:"kind"`
	Source   string `json:"source"`
	Peer     string `json:"peer"`
	Text     string `json:"text"`
}

// monitorLog is the monitor's log as its page receives it.
type monitorLog struct {
	mu    sync.Mutex
	lines []monitorLine
	more  chan struct{}
	done  chan struct{}
}

// watchMonitor opens the monitor's WebSocket and keeps its lines.
func watchMonitor(t *testing.T, url string) *monitorLog {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &monitorLog{more: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() { ws.Close(); <-m.done })
	go func() {
		defer close(m.done)
		for {
			var f struct {
				Type      string        `json:"type"`
				Lines     []monitorLine `json:"lines"`
				Behaviors []struct {
					Name   string        `json:"name"`
					Recent []monitorLine `json:"recent"`
				} `json:"behaviors"`
			}
			if err := ws.ReadJSON(&f); err != nil {
				return
			}
			lines := f.Lines
			for _, b := range f.Behaviors { // hello: what happened before
				for _, l := range b.Recent {
					l.Behavior = b.Name
					lines = append(lines, l)
				}
			}
			if len(lines) == 0 {
				continue
			}
			m.mu.Lock()
			m.lines = append(m.lines, lines...)
			close(m.more)
			m.more = make(chan struct{})
			m.mu.Unlock()
		}
	}()
	return m
}

// seen reports whether a line so far is one ok accepts.
func (m *monitorLog) seen(ok func(monitorLine) bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.lines {
		if ok(l) {
			return true
		}
	}
	return false
}

// waitFor waits for a line ok accepts, failing the test after 10 s.
func (m *monitorLog) waitFor(t *testing.T, what string, ok func(monitorLine) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for i := 0; ; {
		m.mu.Lock()
		lines, more := m.lines, m.more
		m.mu.Unlock()
		for ; i < len(lines); i++ {
			if ok(lines[i]) {
				return
			}
		}
		select {
		case <-more:
		case <-m.done:
			t.Fatalf("the monitor closed while waiting for %s", what)
		case <-deadline:
			t.Fatalf("the monitor showed no %s within 10 s (%d lines)", what, len(lines))
		}
	}
}
