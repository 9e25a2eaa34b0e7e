package interpreter

import (
	"regexp"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter/scxml"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// motionDecl is a compiled <motion> action.
type motionDecl struct {
	name       string
	scripts    []*motion.Script
	stop       []*motion.Script
	priority   int
	duration   time.Duration
	multiplier float64
	start      time.Duration
	timeout    time.Duration
}

// Program is a compiled behavior: immutable once Load returns, so one
// Program may back several machines.
type Program struct {
	File    string
	Name    string
	Rate    float64
	Devices string // general@devices, as written
	Scripts string // general@scripts, as written
	// UsesDevices is set when the file itself shows that the behavior
	// drives the device layer: a <motion>, a memory or motion source, or
	// general@devices or @scripts. Its control loop then starts with the
	// behavior; otherwise it starts when a script first calls a device
	// function, so a behavior without devices costs no 100 Hz loop.
	UsesDevices bool
	// Tree is the device tree: LoadOptions.Tree, else general@devices, else
	// the built-in NAO tree. DevicesFile is the resolved general@devices.
	Tree        *hal.Tree
	DevicesFile string
	// ScriptsDir is where motion script names resolve; Servos maps servo
	// ids to joints (defaults, overridden by servos.yaml in ScriptsDir).
	ScriptsDir string
	Servos     map[int]motion.Mapping
	Adaptors   []AdaptorDecl
	// Session names the adaptor whose peers (session="peer") or topic
	// values (session="topic") each get their own instance of the
	// behavior; "" when the behavior is one conversation.
	Session string
	Setup   []setupItem
	General *Scope
	States  []*State
	Initial *State
	// Diagnostics holds the warnings of a successful load.
	Diagnostics schema.List
	// Sources are the behavior files read: the file and its includes.
	Sources []string

	// chart is the behavior's statechart: the engine enters and exits
	// its states; SEATML picks the rules and runs their actions.
	chart  *statechart.Chart
	onExit bool // some state has an onexit list
	nested bool // some state holds others (or is parallel, final or history)
	// hearsInternal: some rule or key names the source "event"; script
	// failures then raise error.execution for them.
	hearsInternal bool
	// scxml is the SCXML document the program runs, if it is one; its
	// states are mirrored in States (scxmlStates maps them).
	scxml       *scxml.Document
	scxmlStates map[*statechart.State]*State
	stateByName map[string]*State
	sourceIDs   map[string]int // sources of keyed rules; "" is 0
	widgets     map[string]*Widget
	rules       []*Rule // every rule, indexed by Rule.id
}

// State looks up a state by name.
func (p *Program) State(name string) *State { return p.stateByName[name] }

// AdaptorDecl is a declared adaptor.
type AdaptorDecl struct {
	Name  string
	Type  string
	Attrs map[string]string
	Pos   schema.Pos
	// Ignored is set for eSEAT types that seat does not run.
	Ignored bool
}

// Scope holds the lists and rules of general or of one state.
type Scope struct {
	OnExec  []action
	Timeout *Timeout
	// OnConnect and OnDisconnect hold the onconnect and ondisconnect lists
	// by adaptor name.
	OnConnect, OnDisconnect map[string][]action
	Rules                   []*Rule
	DataRules               []*Rule
	groups                  map[string]*group // by source; "" = rules with no source
	bySource                []*group          // the same, by Program.sourceIDs (0: no source)
}

// State is one SEATML state.
type State struct {
	Scope
	Name    string
	Pos     schema.Pos
	OnEntry []action
	OnExit  []action
	Widgets []*Widget

	// Kind is Basic for a <state> (atomic or compound), or Parallel,
	// Final, ShallowHistory or DeepHistory. Parent is the enclosing state
	// (nil at the top level); Children the states it holds, in order.
	Kind     statechart.Kind
	Parent   *State
	Children []*State

	xml     *schema.Node
	initial *State                 // the initial child of a compound state
	node    *statechart.State      // the state in Program.chart
	into    *statechart.Transition // a statetransition to it, from wherever
}

// Atomic reports whether the state holds no other state.
func (s *State) Atomic() bool { return s.node.Atomic() }

// InitialChild is the state a compound state enters first (its initial,
// or its first child); nil for the others.
func (s *State) InitialChild() *State { return s.initial }

// Timeout is an ontimeout list.
type Timeout struct {
	After   time.Duration
	Actions []action
}

// Rule is a compiled rule.
type Rule struct {
	id     int
	Pos    schema.Pos
	Source string
	// Keys are the rule's <key> texts as written (trimmed), before
	// expansion into Words.
	Keys    []string
	Words   []*Word
	cond    *chunk
	condPre *chunk // <cond execfile>: run before the cond
	actions []action
}

// Word is one expanded key word.
type Word struct {
	Text   string
	Source string // the key's own source, else the rule's
	Pos    schema.Pos
	re     *regexp.Regexp // nil for plain words
	rule   *Rule
}

// group indexes the keyed rules of a scope for one source.
type group struct {
	exact    map[string][]*Rule
	patterns []*Word
}

// Widget is a GUI widget of a state (SEATML §11).
type Widget struct {
	Kind    string
	ID      string // id, or label for buttons
	Ref     string // "state:id"
	Label   string
	Initial string
	Attrs   map[string]string
	Pos     schema.Pos
	State   string
	actions []action
}

type setupItem struct {
	pos    schema.Pos
	isVar  bool
	name   string
	value  lua.LValue
	chunks []*chunk
}

// chunk is Lua from a behavior (or an execfile) with its place in the
// file; its bytecode is compiled once, at load or on first use (get).
type chunk struct {
	id   int // its index among its program's chunks (Machine.fns)
	file string
	line int
	src  string
	col  int
	expr bool // a <cond>

	once     sync.Once
	compiled *lua.FunctionProto
	err      error
}

// kind is what luadm.Compile calls the chunk: a cond, or a script.
func (ch *chunk) kind() string { return condKind(ch.expr) }

func condKind(expr bool) string {
	if expr {
		return "cond"
	}
	return ""
}

type actionKind int

const (
	actMessage actionKind = iota
	actTransition
	actLog
	actShell
	actScript
	actMotion
	actRaise
)

type transFunc int

const (
	transGoto transFunc = iota
	transPush
	transPop
)

type action struct {
	kind   actionKind
	pos    schema.Pos
	text   string
	sendto string
	topic  string // an MQTT message's own topic
	retain bool
	slot   int                         // index of sendto in Program.Adaptors
	input  string                      // message: "state:id" of a widget
	encode func(string) (string, rune) // returns the first character it could not encode
	level  zapcore.Level
	fn     transFunc
	target *State
	chunks []*chunk // script: execfile, then text
	motion *motionDecl
	// inExit marks a statetransition written in onexit: refused at run time.
	inExit bool
}

// wantsConnections reports whether any scope has an onconnect or
// ondisconnect for the adaptor.
func (p *Program) wantsConnections(adaptor string) bool {
	if adaptor == p.Session {
		return true // sessions begin and end with connections
	}
	if p.scxml != nil {
		return p.scxmlHears(adaptor+".connect") || p.scxmlHears(adaptor+".disconnect")
	}
	scopes := []*Scope{p.General}
	for _, s := range p.States {
		scopes = append(scopes, &s.Scope)
	}
	for _, sc := range scopes {
		_, c := sc.OnConnect[adaptor]
		_, d := sc.OnDisconnect[adaptor]
		if c || d {
			return true
		}
	}
	return false
}
