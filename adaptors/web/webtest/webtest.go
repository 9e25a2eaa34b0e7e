// Package webtest drives a real headless Chromium over the Chrome DevTools
// Protocol, for the tests of seat's web pages (the operator page, the live
// monitor). It is used by tests only.
package webtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Browser is headless Chromium driven over the Chrome DevTools Protocol.
type Browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	conn    *websocket.Conn
	mu      sync.Mutex
	nextID  int
	pending map[int]chan cdpReply
	done    chan struct{}
	dir     string
	exited  chan struct{} // closed when Chromium has ended; exitErr is why
	exitErr error
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Start starts Debian's chromium. Without it the test is skipped,
// unless SEAT_REQUIRE_BROWSER is set (as .ci/run does): then it fails.
func Start(t *testing.T) *Browser {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("SEAT_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium is not installed and SEAT_REQUIRE_BROWSER is set (apt-get install chromium)")
		}
		t.Skip("chromium is not installed: the browser test is skipped (apt-get install chromium; CI sets SEAT_REQUIRE_BROWSER=1)")
	}
	// Not t.TempDir: Chromium's helpers may write there until they are gone.
	dir, err := os.MkdirTemp("", "seat-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-dev-shm-usage", "--user-data-dir="+dir, "--remote-debugging-port=0", "--window-size=1100,760", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers die with it
	stderr := &tail{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := &Browser{t: t, cmd: cmd, dir: dir, pending: map[int]chan cdpReply{}, done: make(chan struct{}), exited: make(chan struct{})}
	go func() { b.exitErr = cmd.Wait(); close(b.exited) }()
	t.Cleanup(b.close)
	var port string
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if err == nil && strings.Contains(string(data), "\n") {
			port = strings.SplitN(string(data), "\n", 2)[0]
			break
		}
		select {
		case <-b.exited:
			t.Fatalf("chromium ended (%v) before opening its DevTools port; it wrote:\n%s", b.exitErr, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium did not open its DevTools port within 60s; it wrote:\n%s", stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://127.0.0.1:" + port + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	var targets []struct {
		Type string `json:"type"`
		URL  string `json:"webSocketDebuggerUrl"`
	}
	json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	for _, tg := range targets {
		if tg.Type == "page" {
			b.conn, _, err = websocket.DefaultDialer.Dial(tg.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if b.conn == nil {
		t.Fatal("chromium has no page target")
	}
	go b.read()
	return b
}

func (b *Browser) read() {
	defer close(b.done)
	for {
		var msg struct {
			ID int `json:"id"`
			cdpReply
		}
		if err := b.conn.ReadJSON(&msg); err != nil {
			return
		}
		if msg.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.pending[msg.ID]
		delete(b.pending, msg.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- msg.cdpReply
		}
	}
}

func (b *Browser) close() {
	if b.conn != nil {
		b.conn.Close()
		<-b.done
	}
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	<-b.exited
	for i := 0; i < 50 && os.RemoveAll(b.dir) != nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

// tail keeps the last 8 KiB written to it: what Chromium said, for a
// failure's message.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if n := len(w.buf) - 8<<10; n > 0 {
		w.buf = append(w.buf[:0], w.buf[n:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// Call sends one CDP command and waits for its result.
func (b *Browser) Call(method string, params any) json.RawMessage {
	b.t.Helper()
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.pending[id] = ch
	err := b.conn.WriteJSON(map[string]any{"id": id, "method": method, "params": params})
	b.mu.Unlock()
	if err != nil {
		b.t.Fatalf("%s: %v", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			b.t.Fatalf("%s: %s", method, r.Error.Message)
		}
		return r.Result
	case <-time.After(30 * time.Second):
		b.t.Fatalf("%s: no answer within 30s", method)
	}
	return nil
}

// Eval evaluates JavaScript in the page and returns its value.
func (b *Browser) Eval(expr string) any {
	b.t.Helper()
	v, err := b.Try(expr)
	if err != nil {
		b.t.Fatalf("eval %s: %v", expr, err)
	}
	return v
}

// Try evaluates JavaScript, returning a thrown exception as an error.
func (b *Browser) Try(expr string) (any, error) {
	b.t.Helper()
	raw := b.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	json.Unmarshal(raw, &r)
	if r.Exception != nil {
		return nil, fmt.Errorf("%s", r.Exception.Text)
	}
	return r.Result.Value, nil
}

// WaitFor polls a JavaScript condition until it holds.
func (b *Browser) WaitFor(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, err := b.Try(expr) // the page may still be loading: errors mean "not yet"
		if v == true {
			return
		}
		if time.Now().After(deadline) {
			text, _ := b.Try("document.body.innerText")
			b.t.Fatalf("%s: %s still not true after 20s (%v); page text: %v", what, expr, err, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Navigate opens url.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.Call("Page.navigate", map[string]any{"url": url})
}

// Click clicks the middle of the element a selector finds, as a mouse does.
func (b *Browser) Click(selector string) {
	b.t.Helper()
	pos, ok := b.Eval(fmt.Sprintf(`(function(){var r=document.querySelector(%q).getBoundingClientRect();return [r.x+r.width/2,r.y+r.height/2];})()`, selector)).([]any)
	if !ok || len(pos) != 2 {
		b.t.Fatalf("no element %s", selector)
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		b.Call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": pos[0], "y": pos[1], "button": "left", "clickCount": 1})
	}
}

// TypeText focuses an element and types text, then presses Enter if asked.
func (b *Browser) TypeText(selector, text string, enter bool) {
	b.t.Helper()
	b.Eval(fmt.Sprintf(`document.querySelector(%q).focus()`, selector))
	b.Call("Input.insertText", map[string]any{"text": text})
	if enter {
		for _, typ := range []string{"keyDown", "keyUp"} {
			b.Call("Input.dispatchKeyEvent", map[string]any{"type": typ, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13, "text": "\r"})
		}
	}
}

// SetViewport lays the page out as on a screen of width by height CSS
// pixels (Emulation.setDeviceMetricsOverride), whatever the window's size.
func (b *Browser) SetViewport(width, height int) {
	b.t.Helper()
	b.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false})
}

// Fonts returns the names of the fonts Chromium drew the text of the
// element a selector finds with (CSS.getPlatformFontsForNode), each with
// how many glyphs it drew: what a screenshot shows, where the DOM only
// knows the text.
func (b *Browser) Fonts(selector string) map[string]int {
	b.t.Helper()
	b.Call("DOM.enable", nil)
	b.Call("CSS.enable", nil)
	var doc struct {
		Root struct {
			NodeID int `json:"nodeId"`
		} `json:"root"`
	}
	json.Unmarshal(b.Call("DOM.getDocument", map[string]any{"depth": 0}), &doc)
	var node struct {
		NodeID int `json:"nodeId"`
	}
	json.Unmarshal(b.Call("DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": selector}), &node)
	if node.NodeID == 0 {
		b.t.Fatalf("no element %s", selector)
	}
	var r struct {
		Fonts []struct {
			FamilyName string `json:"familyName"`
			GlyphCount int    `json:"glyphCount"`
		} `json:"fonts"`
	}
	json.Unmarshal(b.Call("CSS.getPlatformFontsForNode", map[string]any{"nodeId": node.NodeID}), &r)
	fonts := map[string]int{}
	for _, f := range r.Fonts {
		fonts[f.FamilyName] += f.GlyphCount
	}
	return fonts
}

// Screenshot returns the page as a PNG.
func (b *Browser) Screenshot() []byte {
	b.t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	json.Unmarshal(b.Call("Page.captureScreenshot", map[string]any{"format": "png"}), &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}
