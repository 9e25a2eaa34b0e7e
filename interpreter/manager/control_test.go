package manager

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// api serves the control API of a rig on a real loopback port.
func api(t *testing.T, r *rig) *Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: Handler(r.mg), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &Client{Addr: ln.Addr().String()}
}

func raw(t *testing.T, c *Client, method, path, body string, header map[string]string) (int, APIError) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+c.Addr+path, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h := header["Host"]; h != "" {
		req.Host = h
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var ae APIError
	json.Unmarshal(data, &ae)
	return resp.StatusCode, ae
}

func TestControlAPI(t *testing.T) {
	r := newRig(t)
	c := api(t, r)
	good := r.file("good", "", `<state name="idle"/><state name="busy"/>`)
	var info Info
	if err := c.Do("POST", "/behaviors", map[string]any{"file": good, "start": true}, &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "good" || info.State != Running || info.SEATMLState != "idle" {
		t.Errorf("load+start: %+v", info)
	}
	var list []Info
	if err := c.Do("GET", "/behaviors", nil, &list); err != nil || len(list) != 1 || list[0].State != Running {
		t.Fatalf("list: %+v %v", list, err)
	}

	// Bad requests: a clear status and message, and nothing changes state.
	bad := filepath.Join(r.dir, "bad.seatml")
	os.WriteFile(bad, []byte(`<seatml><general name="bad"/><state name="s"><onentry><statetransition>nowhere</statetransition></onentry></state></seatml>`), 0o644)
	cases := []struct {
		name, method, path, body string
		status                   int
		msg                      string
		diags                    []string
	}{
		{"unknown behavior", "POST", "/behaviors/ghost/start", "", 404, `no such behavior: "ghost"`, nil},
		{"unknown behavior info", "GET", "/behaviors/ghost", "", 404, `no such behavior: "ghost"`, nil},
		{"file with errors", "POST", "/behaviors", `{"file":"` + bad + `"}`, 422, bad + " has errors",
			[]string{bad + `:1:72: statetransition target "nowhere" is not a declared state (the states: s)`}},
		{"missing file", "POST", "/behaviors", `{"file":"` + filepath.Join(r.dir, "none.seatml") + `"}`, 422, "", nil},
		{"double start", "POST", "/behaviors/good/start", "", 409, `start "good": the behavior is already running`, nil},
		{"duplicate load", "POST", "/behaviors", `{"file":"` + good + `"}`, 409, "", nil},
		{"unknown op", "POST", "/behaviors/good/jump", "", 404, `unknown operation "jump": use start, stop, unload or reload`, nil},
		{"bad json", "POST", "/behaviors", `{"fil":`, 400, `want {"file": "path.seatml", "start": true|false}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, ae := raw(t, c, tc.method, tc.path, tc.body, nil)
			if status != tc.status || tc.msg != "" && ae.Message != tc.msg || ae.Message == "" {
				t.Errorf("%d %q, want %d %q", status, ae.Message, tc.status, tc.msg)
			}
			for i, d := range tc.diags {
				if i >= len(ae.Diagnostics) || ae.Diagnostics[i] != d {
					t.Errorf("diagnostics %q, want %q", ae.Diagnostics, tc.diags)
				}
			}
			c.Do("GET", "/behaviors", nil, &list)
			if len(list) != 1 || list[0].State != Running {
				t.Errorf("state changed: %+v", list)
			}
		})
	}

	if err := c.Do("POST", "/behaviors/good/stop", nil, &info); err != nil || info.State != Unloaded {
		t.Fatalf("stop: %+v %v", info, err)
	}
	status, ae := raw(t, c, "POST", "/behaviors/good/stop", "", nil)
	if status != 409 || ae.Message != `stop "good": the behavior is not running` {
		t.Errorf("stop when stopped: %d %q", status, ae.Message)
	}
	status, ae = raw(t, c, "POST", "/behaviors/good/unload", "", nil)
	if status != 409 || ae.Message != `unload "good": the behavior is not loaded` {
		t.Errorf("unload when unloaded: %d %q", status, ae.Message)
	}
	if err := c.Do("POST", "/behaviors/good/start", nil, &info); err != nil || info.State != Running {
		t.Fatalf("restart: %+v %v", info, err)
	}
	// Reload: a file that now has errors leaves the running behavior alone.
	os.WriteFile(good, []byte(`<seatml><general name="good"/><state name="idle"><onentry><statetransition>busy</statetransition></onentry></state></seatml>`), 0o644)
	status, ae = raw(t, c, "POST", "/behaviors/good/reload", "", nil)
	if status != 422 || len(ae.Diagnostics) != 1 {
		t.Errorf("reload with errors: %d %+v", status, ae)
	}
	if err := c.Do("GET", "/behaviors/good", nil, &info); err != nil || info.State != Running {
		t.Errorf("after a failed reload: %+v %v", info, err)
	}
	os.WriteFile(good, []byte(`<seatml><general name="good"/><state name="fresh"/></seatml>`), 0o644)
	if err := c.Do("POST", "/behaviors/good/reload", nil, &info); err != nil || info.State != Running || info.SEATMLState != "fresh" {
		t.Errorf("reload: %+v %v", info, err)
	}

	// Browsers and rebound host names are refused.
	if status, _ := raw(t, c, "GET", "/behaviors", "", map[string]string{"Origin": "http://evil.example"}); status != 403 {
		t.Errorf("request with an Origin: %d", status)
	}
	if status, _ := raw(t, c, "GET", "/behaviors", "", map[string]string{"Host": "evil.example"}); status != 403 {
		t.Errorf("foreign Host: %d", status)
	}
}

func TestControlAddr(t *testing.T) {
	for in, want := range map[string]string{"7070": "127.0.0.1:7070", ":7070": "127.0.0.1:7070", "0.0.0.0:7070": "0.0.0.0:7070", "[::1]:80": "[::1]:80"} {
		if got := ControlAddr(in); got != want {
			t.Errorf("ControlAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestControlAPIEngine(t *testing.T) {
	r := newRig(t)
	c := api(t, r)
	r.step(100 * time.Millisecond)
	var got EngineStats
	if err := c.Do("GET", "/engine", nil, &got); err != nil {
		t.Fatal(err)
	}
	s := r.dev.Engine.Stats()
	if got.Cycles != s.Cycles || got.Cycles < 10 || got.LateCycles != s.LateCycles {
		t.Errorf("GET /engine = cycles %d late %d, engine says %d %d", got.Cycles, got.LateCycles, s.Cycles, s.LateCycles)
	}
	if len(got.JitterHistogram) != 2001 {
		t.Errorf("jitter histogram has %d buckets", len(got.JitterHistogram))
	}
	if got.Priority != "" { // the rig steps the engine itself; Run never ran
		t.Errorf("priority %q without Run", got.Priority)
	}
}
