package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/interpreter"
)

// DebugRequest is the body of POST /behaviors/{name}/debug/{op}: what
// the op needs of it.
type DebugRequest struct {
	// break: the breakpoint.
	Breakpoint *interpreter.Breakpoint `json:"breakpoint,omitempty"`
	// clear: a breakpoint's number, 0 for all.
	ID int `json:"id,omitempty"`
	// step: to the next thing done, not the next event.
	Micro bool `json:"micro,omitempty"`
	// until: the state to run to.
	State string `json:"state,omitempty"`
	// set: a variable (name or name.field) and its value as JSON.
	Variable string `json:"variable,omitempty"`
	Value    string `json:"value,omitempty"`
	// send: an event of the adaptor, its text or, for a structured
	// message (a ROS message, an OpenRTM value), Message: the message as
	// JSON (or YAML, as rostopic pub takes it).
	Adaptor string `json:"adaptor,omitempty"`
	Text    string `json:"text,omitempty"`
	Message string `json:"message,omitempty"`
}

// debugOps are the debugger's operations: each answers with what the
// debugger shows afterwards (GET /behaviors/{name}/debug alone).
var debugOps = map[string]func(ctx context.Context, d *interpreter.Debugger, req DebugRequest) error{
	"break": func(_ context.Context, d *interpreter.Debugger, req DebugRequest) error {
		if req.Breakpoint == nil {
			return errors.New(`want {"breakpoint": {"kind": "state", "name": "確認"}}`)
		}
		_, err := d.Break(*req.Breakpoint)
		return err
	},
	"clear":    func(_ context.Context, d *interpreter.Debugger, req DebugRequest) error { return d.Clear(req.ID) },
	"pause":    func(_ context.Context, d *interpreter.Debugger, _ DebugRequest) error { return d.Pause() },
	"continue": func(_ context.Context, d *interpreter.Debugger, _ DebugRequest) error { return d.Continue() },
	"step": func(ctx context.Context, d *interpreter.Debugger, req DebugRequest) error {
		if err := d.Step(req.Micro); err != nil {
			return err
		}
		stopped(ctx, d)
		return nil
	},
	"until": func(ctx context.Context, d *interpreter.Debugger, req DebugRequest) error {
		if err := d.Until(req.State); err != nil {
			return err
		}
		stopped(ctx, d)
		return nil
	},
	"set": func(ctx context.Context, d *interpreter.Debugger, req DebugRequest) error {
		return d.Set(ctx, req.Variable, req.Value)
	},
	"send": func(ctx context.Context, d *interpreter.Debugger, req DebugRequest) error {
		if req.Message == "" {
			return d.Send(ctx, req.Adaptor, req.Text)
		}
		v, err := adaptors.ParseText(req.Message)
		if err != nil {
			return err
		}
		return d.SendMessage(ctx, req.Adaptor, v)
	},
}

// stepWait is how long a step's answer waits for the behavior to stop
// again: the answer says where it stopped, or that it is running (the
// next event has not come).
const stepWait = 2 * time.Second

// stopped waits, up to stepWait, for the behavior to stop after a step.
func stopped(ctx context.Context, d *interpreter.Debugger) {
	ctx, cancel := context.WithTimeout(ctx, stepWait)
	defer cancel()
	d.WaitPaused(ctx)
}

// debugWait bounds how long a debugger request waits for the behavior
// (a script running to its time limit before it can pause).
const debugWait = 15 * time.Second

// debugRoutes adds the debugger's routes to mux.
func debugRoutes(mux *http.ServeMux, mg *Manager) {
	show, op := DebugHandlers(mg)
	mux.HandleFunc("GET /behaviors/{name}/debug", show)
	mux.HandleFunc("POST /behaviors/{name}/debug/{op}", op)
}

// DebugHandlers serve the debugger of the behavior named by the path
// value name (of its session ?session=PEER, if it has a session per
// peer): show answers what it shows (DebugState), op does the
// operation named by the path value op with a DebugRequest in the body
// and answers what it shows afterwards. The control API and the monitor
// mount them, each behind its own guard.
func DebugHandlers(mg *Manager) (show, op http.HandlerFunc) {
	return debugHandlers(func(name, peer string) (*interpreter.Debugger, error) {
		if peer != "" {
			d, err := mg.SessionDebugger(name, peer)
			if err != nil && !errors.Is(err, ErrUnknown) && !errors.Is(err, ErrNoSessions) {
				return nil, fmt.Errorf("%w: %v", ErrNoSession, err)
			}
			return d, err
		}
		return mg.Debugger(name)
	})
}

// ErrNoSession is a session asked for that the behavior does not have.
var ErrNoSession = errors.New("no such session")

// DebugAPI serves the debugger routes of the control API alone, under the
// control API's guard, for debuggers found by find (seat replay --until
// with --control: the replayed behavior's). find returns an error wrapping
// ErrUnknown for a name it does not know.
func DebugAPI(find func(name, session string) (*interpreter.Debugger, error)) http.Handler {
	mux := http.NewServeMux()
	show, op := debugHandlers(find)
	mux.HandleFunc("GET /behaviors/{name}/debug", show)
	mux.HandleFunc("POST /behaviors/{name}/debug/{op}", op)
	return guard(mux)
}

func debugHandlers(find func(name, session string) (*interpreter.Debugger, error)) (show, op http.HandlerFunc) {
	// ?session=PEER names a session of a behavior with a session per
	// peer.
	debugger := func(w http.ResponseWriter, r *http.Request) *interpreter.Debugger {
		d, err := find(r.PathValue("name"), r.URL.Query().Get("session"))
		if errors.Is(err, ErrNoSession) {
			writeJSON(w, http.StatusNotFound, APIError{Message: strings.TrimPrefix(err.Error(), ErrNoSession.Error()+": ")})
			return nil
		}
		if err != nil {
			answer(w, Info{}, err, http.StatusOK)
			return nil
		}
		return d
	}
	answerShow := func(w http.ResponseWriter, r *http.Request, d *interpreter.Debugger) {
		ctx, cancel := context.WithTimeout(r.Context(), debugWait)
		defer cancel()
		s, err := d.Show(ctx)
		if err != nil {
			writeJSON(w, http.StatusConflict, APIError{Message: err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, s)
	}
	show = func(w http.ResponseWriter, r *http.Request) {
		if d := debugger(w, r); d != nil {
			answerShow(w, r, d)
		}
	}
	op = func(w http.ResponseWriter, r *http.Request) {
		do := debugOps[r.PathValue("op")]
		if do == nil {
			writeJSON(w, http.StatusNotFound, APIError{Message: fmt.Sprintf("unknown debugger operation %q: break, clear, pause, continue, step, until, set, send", r.PathValue("op"))})
			return
		}
		var req DebugRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
			writeJSON(w, http.StatusBadRequest, APIError{Message: "the request is not a DebugRequest: " + err.Error()})
			return
		}
		d := debugger(w, r)
		if d == nil {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), debugWait)
		defer cancel()
		if err := do(ctx, d, req); err != nil {
			writeJSON(w, http.StatusConflict, APIError{Message: err.Error()})
			return
		}
		s, err := d.Show(ctx)
		if err != nil { // done, and the behavior ended since (a replay's last step)
			s = interpreter.DebugState{DebugSummary: d.Summary()}
		}
		writeJSON(w, http.StatusOK, s)
	}
	return show, op
}
