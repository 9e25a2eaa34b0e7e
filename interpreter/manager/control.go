package manager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/seatml/seat/interpreter/seatml"
)

// APIError is the body of every error answer of the control endpoint.
type APIError struct {
	Message     string   `json:"error"`
	Diagnostics []string `json:"diagnostics,omitempty"`
}

// Error returns the message and the diagnostics, one per line.
func (e *APIError) Error() string {
	if len(e.Diagnostics) == 0 {
		return e.Message
	}
	return e.Message + ":\n" + strings.Join(e.Diagnostics, "\n")
}

// EngineStats is the answer of GET /engine: the control loop's counters and
// its jitter histogram (hal.Histogram buckets, for hal.Quantile).
type EngineStats struct {
	Cycles          int64    `json:"cycles"`
	LateCycles      int64    `json:"late_cycles"`
	HardnessCuts    int64    `json:"hardness_cuts"`
	JitterMaxMicros int64    `json:"jitter_max_us"`
	JitterHistogram []uint64 `json:"jitter_histogram"`
	Priority        string   `json:"priority"` // the loop thread's: "SCHED_FIFO 10", "nice -10", "normal (why)"
}

// Handler serves the control API:
//
//	GET  /engine                     the control loop's figures
//	GET  /behaviors                  list
//	GET  /behaviors/{name}           one behavior
//	GET  /behaviors/{name}/sessions  its sessions (session="peer")
//	POST /behaviors {"file":F,"start":true}   load (and start)
//	POST /behaviors/{name}/{op}      op: start, stop, unload, reload
//	POST /behaviors/{name}/reload {"set":["chat.port=5100"]}  reload with overrides
//
// Answers are JSON: Info or a list of Info on success, APIError otherwise
// (404 unknown behavior, 409 wrong state or duplicate, 422 a file with
// errors, 400 a bad request). Requests from browsers (with an Origin
// header) are refused, and on loopback the Host must be a loopback name.
func Handler(mg *Manager) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /engine", func(w http.ResponseWriter, r *http.Request) {
		dev := mg.opts.Machine.Devices
		if dev == nil {
			writeJSON(w, http.StatusNotFound, APIError{Message: "no device layer"})
			return
		}
		s := dev.Engine.Stats()
		writeJSON(w, http.StatusOK, EngineStats{
			Cycles: s.Cycles, LateCycles: s.LateCycles, HardnessCuts: s.HardnessCuts,
			JitterMaxMicros: s.JitterMax.Microseconds(), JitterHistogram: dev.Engine.Jitter().Snapshot(),
			Priority: dev.Engine.Priority(),
		})
	})
	debugRoutes(mux, mg)
	mux.HandleFunc("GET /behaviors", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, mg.List())
	})
	mux.HandleFunc("GET /behaviors/{name}", func(w http.ResponseWriter, r *http.Request) {
		info, err := mg.Info(r.PathValue("name"))
		answer(w, info, err, http.StatusOK)
	})
	mux.HandleFunc("GET /behaviors/{name}/sessions", func(w http.ResponseWriter, r *http.Request) {
		list, err := mg.Sessions(r.PathValue("name"))
		if err != nil {
			answer(w, Info{}, err, http.StatusOK)
			return
		}
		writeJSON(w, http.StatusOK, list)
	})
	mux.HandleFunc("POST /behaviors", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			File  string `json:"file"`
			Start bool   `json:"start"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || req.File == "" {
			writeJSON(w, http.StatusBadRequest, APIError{Message: `want {"file": "path.seatml", "start": true|false}`})
			return
		}
		info, err := mg.Load(req.File)
		if err == nil && req.Start {
			info, err = mg.Start(info.Name)
		}
		answer(w, info, err, http.StatusCreated)
	})
	mux.HandleFunc("POST /behaviors/{name}/reload", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Set   []string `json:"set"`
			Fresh bool     `json:"fresh"`
		}
		if r.ContentLength != 0 {
			dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
				writeJSON(w, http.StatusBadRequest, APIError{Message: `want {"set": ["ADAPTOR.ATTRIBUTE=VALUE", ...], "fresh": true} or no body`})
				return
			}
		}
		var set []seatml.Override
		for _, v := range req.Set {
			o, err := seatml.ParseOverride(v)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, APIError{Message: "--set " + err.Error()})
				return
			}
			set = append(set, o)
		}
		info, err := mg.ReloadWith(r.PathValue("name"), ReloadOptions{Set: set, Fresh: req.Fresh})
		answer(w, info, err, http.StatusOK)
	})
	mux.HandleFunc("POST /behaviors/{name}/{op}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		ops := map[string]func(string) (Info, error){"start": mg.Start, "stop": mg.Stop, "unload": mg.Unload, "reload": mg.Reload}
		op := ops[r.PathValue("op")]
		if op == nil {
			writeJSON(w, http.StatusNotFound, APIError{Message: fmt.Sprintf("unknown operation %q: use start, stop, unload or reload", r.PathValue("op"))})
			return
		}
		info, err := op(name)
		answer(w, info, err, http.StatusOK)
	})
	return guard(mux)
}

func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			writeJSON(w, http.StatusForbidden, APIError{Message: "the control API does not accept requests from web pages"})
			return
		}
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			host, _, _ := net.SplitHostPort(local.String())
			if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() && !LoopbackHost(r.Host) {
				writeJSON(w, http.StatusForbidden, APIError{Message: "unexpected Host header"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackHost reports whether a Host header names this machine
// (localhost or a loopback address), against DNS rebinding.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func answer(w http.ResponseWriter, info Info, err error, okStatus int) {
	if err == nil {
		writeJSON(w, okStatus, info)
		return
	}
	var le *LoadError
	switch {
	case errors.As(err, &le):
		body := APIError{Message: fmt.Sprintf("%s has errors", le.File)}
		for _, d := range le.Diagnostics {
			body.Diagnostics = append(body.Diagnostics, d.Error())
		}
		writeJSON(w, http.StatusUnprocessableEntity, body)
	case errors.Is(err, ErrUnknown):
		writeJSON(w, http.StatusNotFound, APIError{Message: err.Error()})
	case errors.Is(err, ErrDuplicate), errors.Is(err, ErrAlreadyRunning), errors.Is(err, ErrNotRunning),
		errors.Is(err, ErrNotLoaded), errors.Is(err, ErrBusy), errors.Is(err, ErrNoSessions):
		writeJSON(w, http.StatusConflict, APIError{Message: err.Error()})
	default:
		writeJSON(w, http.StatusInternalServerError, APIError{Message: err.Error()})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// ControlAddr completes a --control address: a bare port or ":port" listens
// on 127.0.0.1.
func ControlAddr(addr string) string {
	if !strings.Contains(addr, ":") {
		return "127.0.0.1:" + addr
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

// Client calls a control endpoint.
type Client struct {
	Addr string
	HTTP *http.Client
}

// Do sends one request; on an error answer it returns the APIError as error.
func (c *Client) Do(method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+ControlAddr(c.Addr)+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach seat at %s (is it running with --control?): %w", ControlAddr(c.Addr), err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var ae APIError
		if json.Unmarshal(data, &ae) == nil && ae.Message != "" {
			return &ae
		}
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	return json.Unmarshal(data, out)
}
