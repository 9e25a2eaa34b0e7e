package seatml

import (
	"regexp"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/interpreter/scxml"
	"github.com/seatml/seat/interpreter/statechart"
	"github.com/seatml/seat/schema"
)

// MotionDecl is a compiled <motion> action.
type MotionDecl struct {
	Name       string
	Scripts    []*motion.Script
	Stop       []*motion.Script
	Priority   int
	Duration   time.Duration
	Multiplier float64
	Start      time.Duration
	Timeout    time.Duration
}

// Program is a compiled behavior: immutable once Load returns, so one
// Program may back several machines.
type Program struct {
	File string
	Name string
	Rate float64
	// ScoreLimit is general@scorelimit: the hypotheses of a Julius result
	// scored under it are not tried (0: all are).
	ScoreLimit float64
	// Anonymous is general@anonymous: the behavior's ROS node name gets
	// a suffix of its own.
	Anonymous bool
	Devices   string // general@devices, as written
	Scripts   string // general@scripts, as written
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
	// ScriptDirs is where motion script names resolve, in order
	// (ScriptDirs, FindScript). ScriptsDir is the first of them that is a
	// directory (--scripts or general@scripts when given); Servos maps
	// servo ids to joints (defaults, overridden by servos.yaml in
	// ScriptsDir).
	ScriptDirs []string
	ScriptsDir string
	Servos     map[int]motion.Mapping
	Adaptors   []AdaptorDecl
	// Session names the adaptor whose peers (session="peer") or topic
	// values (session="topic") each get their own instance of the
	// behavior; "" when the behavior is one conversation.
	Session string
	Setup   []SetupItem
	General *Scope
	States  []*State
	Initial *State
	// Diagnostics holds the warnings of a successful load.
	Diagnostics schema.List
	// Sources are the behavior files read: the file and its includes.
	Sources []string

	// Chart is the behavior's statechart: the engine enters and exits
	// its states; SEATML picks the rules and runs their actions.
	Chart     *statechart.Chart
	HasOnExit bool // some state has an onexit list
	Nested    bool // some state holds others (or is parallel, final or history)
	// HearsInternal: some rule or key names the source "event"; script
	// failures then raise error.execution for them.
	HearsInternal bool
	// Document is the SCXML document the program runs, if it is one; its
	// states are mirrored in States (SCXMLStates maps them).
	Document    *scxml.Document
	SCXMLStates map[*statechart.State]*State
	stateByName map[string]*State
	SourceIDs   map[string]int // sources of keyed rules; "" is 0
	WidgetByRef map[string]*Widget
	Rules       []*Rule // every rule, indexed by Rule.ID
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
	OnExec  []Action
	Timeout *Timeout
	// OnConnect and OnDisconnect hold the onconnect and ondisconnect lists
	// by adaptor name.
	OnConnect, OnDisconnect map[string][]Action
	Rules                   []*Rule
	DataRules               []*Rule
	groups                  map[string]*Group // by source; "" = rules with no source
	BySource                []*Group          // the same, by Program.sourceIDs (0: no source)
}

// State is one SEATML state.
type State struct {
	Scope
	Name    string
	Pos     schema.Pos
	OnEntry []Action
	OnExit  []Action
	Widgets []*Widget

	// Kind is Basic for a <state> (atomic or compound), or Parallel,
	// Final, ShallowHistory or DeepHistory. Parent is the enclosing state
	// (nil at the top level); Children the states it holds, in order.
	Kind     statechart.Kind
	Parent   *State
	Children []*State
	// InnerTimeout is the ontimeout that counts while the state is the
	// innermost active one: its own, else the nearest state's around it,
	// else general's (nil: none).
	InnerTimeout *Timeout

	XML     *schema.Node
	initial *State                 // the initial child of a compound state
	Node    *statechart.State      // the state in Program.Chart
	Into    *statechart.Transition // a statetransition to it, from wherever
}

// Widget returns the state's widget with id (an input's or text's id, a
// button's label), or nil.
func (s *State) Widget(id string) *Widget {
	for _, w := range s.Widgets {
		if w.ID != "" && w.ID == id {
			return w
		}
	}
	return nil
}

// Atomic reports whether the state holds no other state.
func (s *State) Atomic() bool { return s.Node.Atomic() }

// InitialChild is the state a compound state enters first (its initial,
// or its first child); nil for the others.
func (s *State) InitialChild() *State { return s.initial }

// Timeout is an ontimeout list.
type Timeout struct {
	After   time.Duration
	Actions []Action
}

// Rule is a compiled rule.
type Rule struct {
	ID     int
	Pos    schema.Pos
	Source string
	// Keys are the rule's <key> texts as written (trimmed), before
	// expansion into Words.
	Keys    []string
	Words   []*Word
	Cond    *luadm.Code
	CondPre *luadm.Code // <cond execfile>: run before the cond
	Actions []Action
}

// Word is one expanded key word.
type Word struct {
	Text   string
	Source string // the key's own source, else the rule's
	Pos    schema.Pos
	RE     *regexp.Regexp // nil for plain words
	Rule   *Rule
}

// Group indexes the keyed rules of a scope for one source.
type Group struct {
	Exact    map[string][]*Rule
	Patterns []*Word
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
	Actions []Action
}

// SetupItem is a <var> or a <script> of <general>, run in order when a
// machine starts.
type SetupItem struct {
	Pos    schema.Pos
	IsVar  bool
	Name   string
	Value  lua.LValue
	Chunks []*luadm.Code
}

// condKind is what luadm.Compile calls a chunk: a cond, or a script.
func condKind(expr bool) string {
	if expr {
		return "cond"
	}
	return ""
}

// ActionKind is what an Action does.
type ActionKind int

const (
	ActMessage ActionKind = iota
	ActTransition
	ActLog
	ActShell
	ActScript
	ActMotion
	ActRaise
)

// TransFunc is a statetransition's func: goto (none), push or pop.
type TransFunc int

const (
	TransGoto TransFunc = iota
	TransPush
	TransPop
)

// Action is one compiled action of a rule or a list: a message, a
// statetransition, a log, a shell command, a script, a motion or a raise.
type Action struct {
	Kind   ActionKind
	Pos    schema.Pos
	Text   string
	SendTo string
	Topic  string // an MQTT message's own topic
	Retain bool
	Slot   int                         // index of sendto in Program.Adaptors
	Input  string                      // message: "state:id" of a widget
	Encode func(string) (string, rune) // returns the first character it could not encode
	Level  zapcore.Level
	Fn     TransFunc
	Target *State
	Chunks []*luadm.Code // script: execfile, then text
	Motion *MotionDecl
	// InExit marks a statetransition written in onexit: refused at run time.
	InExit bool
}

// WantsConnections reports whether any scope has an onconnect or
// ondisconnect for the adaptor.
func (p *Program) WantsConnections(adaptor string) bool {
	if adaptor == p.Session {
		return true // sessions begin and end with connections
	}
	if p.Document != nil {
		return p.SCXMLHears(adaptor+".connect") || p.SCXMLHears(adaptor+".disconnect")
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
