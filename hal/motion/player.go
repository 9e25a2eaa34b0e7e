package motion

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seatml/seat/hal"
)

// DefaultTimeout is how long a request waits for its joints.
const DefaultTimeout = 2 * time.Second

// Request asks for a chain of scripts to play (docs/devices.md §6, §7,
// NUbots' ExecuteScript): a higher Priority takes joints from lower ones.
type Request struct {
	// Owner names the requesting behavior, for messages and ownership.
	Owner    string
	Name     string
	Priority int
	Scripts  []*Script
	// Duration scales the chain to a total length; Multiplier scales it by a
	// factor (default 1). Not both.
	Duration   time.Duration
	Multiplier float64
	// Start is the engine time to start at; a past time means now.
	Start time.Duration
	// Timeout bounds the wait for joints (DefaultTimeout if 0).
	Timeout time.Duration
	// StopPose plays after a Stop, on the motion's joints only.
	StopPose []*Script
	// Notify receives the motion's events; it must not block.
	Notify func(Event)
}

// Event is a motion outcome for its requester: Kind is "done", "lost" or
// "error"; the behavior sees the key Kind + ":" + Motion.
type Event struct {
	Owner  string
	Kind   string
	Motion string
	Text   string
}

// Key is the event key behaviors match: "done:wave".
func (e Event) Key() string { return e.Kind + ":" + e.Motion }

type motionState int

const (
	waiting motionState = iota
	running
	ended
)

// Motion is an accepted request; its methods are safe from any goroutine.
type Motion struct {
	p        *Player
	req      Request
	needed   []*hal.Joint
	held     map[*hal.Joint]bool
	plans    []*jointPlan
	timing   Timing
	commands []ServoCommand
	state    motionState
	asked    time.Duration
	end      time.Duration
	stopped  bool
	done     chan struct{} // closed when the motion has ended
}

// Done is closed once the motion has ended: done, stopped, lost all its
// joints, timed out or cancelled.
func (m *Motion) Done() <-chan struct{} { return m.done }

// markEnded ends the motion once; the caller holds p.mu.
func (m *Motion) markEnded() {
	if m.state != ended {
		m.state = ended
		close(m.done)
	}
}

// Name returns the motion's name.
func (m *Motion) Name() string { return m.req.Name }

// Player arbitrates joints between motions and feeds their commands to an
// engine, at each cycle's motion tick.
type Player struct {
	engine   *hal.Engine
	servos   map[int]Mapping
	hardness float64

	mu        sync.Mutex
	now       time.Duration
	owner     map[*hal.Joint]*Motion
	active    []*Motion
	waitQ     []*Motion
	observers []chan ServoCommand
}

// NewPlayer attaches a player to an engine. servos maps servo ids to joints
// (DefaultServos if nil); hardness is the hardness of torque 100 (1 if 0).
func NewPlayer(e *hal.Engine, servos map[int]Mapping, hardness float64) (*Player, error) {
	if servos == nil {
		servos = DefaultServos()
	}
	if err := CheckMapping(servos, e.Tree()); err != nil {
		return nil, err
	}
	if hardness <= 0 {
		hardness = 1
	}
	p := &Player{engine: e, servos: servos, hardness: hardness, owner: map[*hal.Joint]*Motion{}, now: e.Now()}
	e.OnTick(p.tick)
	return p, nil
}

// Servos returns the servo mapping.
func (p *Player) Servos() map[int]Mapping { return p.servos }

// Observe returns a channel of every ServoCommand of accepted motions; a
// full channel drops commands rather than block.
func (p *Player) Observe(buf int) <-chan ServoCommand {
	ch := make(chan ServoCommand, buf)
	p.mu.Lock()
	p.observers = append(p.observers, ch)
	p.mu.Unlock()
	return ch
}

// Owner returns the behavior whose motion holds a joint, if any.
func (p *Player) Owner(joint string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j := p.engine.Tree().Joint(joint)
	if m := p.owner[j]; m != nil {
		return m.req.Owner, true
	}
	return "", false
}

// JointOf returns the joint a subdevice belongs to ("" if none).
func (p *Player) JointOf(s *hal.SubDevice) string {
	for _, j := range p.engine.Tree().Joints {
		if j.Position == s || j.Hardness == s || j.Sensor == s {
			return j.Name
		}
	}
	return ""
}

// Play accepts a request: it claims every joint the chain maps to, all or
// nothing, taking joints held at lower priority at once and waiting (FIFO,
// up to the timeout) for joints held at equal or higher priority.
func (p *Player) Play(req Request) (*Motion, error) {
	if req.Name == "" {
		names := make([]string, len(req.Scripts))
		for i, s := range req.Scripts {
			names[i] = s.Name
		}
		req.Name = strings.Join(names, "-")
	}
	if req.Timeout <= 0 {
		req.Timeout = DefaultTimeout
	}
	if _, err := Plan(req.Scripts, 0, req.Duration, req.Multiplier); err != nil {
		return nil, err
	}
	m := &Motion{p: p, req: req, held: map[*hal.Joint]bool{}, done: make(chan struct{})}
	seen := map[*hal.Joint]bool{}
	for _, s := range req.Scripts {
		for _, f := range s.Frames {
			for _, t := range f.Targets {
				if mp, ok := p.servos[t.Servo]; ok && mp.Joint != "" {
					if j := p.engine.Tree().Joint(mp.Joint); j != nil && !seen[j] {
						seen[j] = true
						m.needed = append(m.needed, j)
					}
				}
			}
		}
	}
	p.engine.Wake() // a quiet engine ticks the player now
	p.mu.Lock()
	defer p.mu.Unlock()
	m.asked = p.now
	if blocker := p.blocker(m); blocker == nil {
		// Accepted between cycles: the first frame starts at the next one,
		// as any command for a past time does.
		p.grant(m, p.now+p.engine.Period())
	} else {
		p.waitQ = append(p.waitQ, m)
	}
	return m, nil
}

// blocker returns a joint held at equal or higher priority, or nil.
func (p *Player) blocker(m *Motion) *hal.Joint {
	for _, j := range m.needed {
		if o := p.owner[j]; o != nil && o != m && o.req.Priority >= m.req.Priority {
			return j
		}
	}
	return nil
}

// grant gives m its joints, preempting lower owners, and queues its chain
// to start at its start time or at from, whichever is later.
func (p *Player) grant(m *Motion, from time.Duration) {
	losers := map[*Motion][]string{}
	var loserOrder []*Motion
	for _, j := range m.needed {
		if o := p.owner[j]; o != nil && o != m {
			p.clearJoint(j)
			delete(o.held, j)
			if _, ok := losers[o]; !ok {
				loserOrder = append(loserOrder, o)
			}
			losers[o] = append(losers[o], j.Name)
		}
		p.owner[j] = m
		m.held[j] = true
	}
	for _, o := range loserOrder {
		if len(o.held) == 0 {
			p.finish(o)
		}
		o.notify("lost", strings.Join(losers[o], ","))
	}
	start := max(m.req.Start, from)
	m.timing, _ = Plan(m.req.Scripts, start, m.req.Duration, m.req.Multiplier)
	m.plans, m.commands = compile(m.req.Name, m.req.Scripts, m.timing, p.servos, p.engine.Tree(), p.hardness)
	m.end = m.timing.End()
	m.state = running
	p.active = append(p.active, m)
	for _, pl := range m.plans {
		_ = p.engine.SetSub(pl.joint.Hardness, pl.hardness, hal.Merge)
		_ = p.engine.SetSub(pl.joint.Position, pl.position, hal.Merge)
	}
	for _, c := range m.commands {
		for _, ch := range p.observers {
			select {
			case ch <- c:
			default:
			}
		}
	}
}

// clearJoint empties a joint's position and hardness buffers; held values stay.
func (p *Player) clearJoint(j *hal.Joint) {
	_ = p.engine.SetSub(j.Position, nil, hal.ClearAll)
	_ = p.engine.SetSub(j.Hardness, nil, hal.ClearAll)
}

// finish ends a running motion and releases its joints.
func (p *Player) finish(m *Motion) {
	for j := range m.held {
		if p.owner[j] == m {
			delete(p.owner, j)
		}
	}
	m.held = map[*hal.Joint]bool{}
	m.markEnded()
	for i, x := range p.active {
		if x == m {
			p.active = append(p.active[:i], p.active[i+1:]...)
			break
		}
	}
}

func (m *Motion) notify(kind, text string) {
	if m.req.Notify != nil {
		m.req.Notify(Event{Owner: m.req.Owner, Kind: kind, Motion: m.req.Name, Text: text})
	}
}

// tick runs at the start of each cycle: motions past their last deadline
// end (done), then waiting requests are granted or time out.
func (p *Player) tick(now time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now = now
	for _, m := range append([]*Motion(nil), p.active...) {
		if now >= m.end {
			p.finish(m)
			text := "completed"
			if m.stopped {
				text = "stopped"
			}
			m.notify("done", text)
		}
	}
	var still []*Motion
	for _, m := range p.waitQ {
		switch j := p.blocker(m); {
		case j == nil:
			p.grant(m, now)
		case now-m.asked >= m.req.Timeout:
			o := p.owner[j]
			m.markEnded()
			m.notify("error", fmt.Sprintf("resource timeout: %s held by %s/%s", j.Name, o.req.Owner, o.req.Name))
		default:
			still = append(still, m)
		}
	}
	p.waitQ = still
}

// Stop ends a motion: its commands after the current frame's deadline are
// removed and its stop pose, if any, follows from there; with now, its
// buffers are cleared and it ends at once. A waiting request is cancelled
// silently.
func (m *Motion) Stop(now bool) {
	p := m.p
	p.mu.Lock()
	defer p.mu.Unlock()
	switch m.state {
	case ended:
		return
	case waiting:
		m.markEnded()
		for i, x := range p.waitQ {
			if x == m {
				p.waitQ = append(p.waitQ[:i], p.waitQ[i+1:]...)
				break
			}
		}
		return
	}
	m.stopped = true
	if now {
		for j := range m.held {
			p.clearJoint(j)
		}
		m.end = p.now
		p.finish(m)
		m.notify("done", "stopped")
		return
	}
	k, _ := m.cursorLocked()
	cut := m.timing.Start
	if k > 0 {
		cut = m.timing.Deadlines[k-1]
	}
	for j := range m.held {
		p.engine.Truncate(j.Position, cut)
		p.engine.Truncate(j.Hardness, cut)
	}
	m.end = cut
	if len(m.req.StopPose) > 0 {
		t, _ := Plan(m.req.StopPose, cut, 0, 0)
		plans, cmds := compile(m.req.Name, m.req.StopPose, t, p.servos, p.engine.Tree(), p.hardness)
		for _, pl := range plans {
			if !m.held[pl.joint] {
				continue // the stop pose only moves the motion's own joints
			}
			_ = p.engine.SetSub(pl.joint.Hardness, pl.hardness, hal.Merge)
			_ = p.engine.SetSub(pl.joint.Position, pl.position, hal.Merge)
		}
		m.commands = append(m.commands, cmds...)
		m.end = t.End()
	}
}

// Cursor returns the frame playing (0 before the first starts, -1 once
// the motion has ended) and the time since its start.
func (m *Motion) Cursor() (int, time.Duration) {
	m.p.mu.Lock()
	defer m.p.mu.Unlock()
	return m.cursorLocked()
}

func (m *Motion) cursorLocked() (int, time.Duration) {
	now := m.p.now
	switch {
	case m.state == waiting:
		return 0, 0
	case m.state == ended || now >= m.end && len(m.timing.Deadlines) > 0:
		return -1, now - m.timing.Start
	case now < m.timing.Start:
		return 0, 0
	}
	k := sort.Search(len(m.timing.Deadlines), func(i int) bool { return m.timing.Deadlines[i] > now })
	return k + 1, now - m.timing.Start
}

// Commands returns the motion's ServoCommands, in frame order.
func (m *Motion) Commands() []ServoCommand {
	m.p.mu.Lock()
	defer m.p.mu.Unlock()
	return append([]ServoCommand(nil), m.commands...)
}

// Timing returns the motion's frame times (zero while it waits).
func (m *Motion) Timing() Timing {
	m.p.mu.Lock()
	defer m.p.mu.Unlock()
	return m.timing
}
