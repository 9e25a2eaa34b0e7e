package adaptors

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/seatml/seat/schema"
)

// Kind is an adaptor type, described in one place: its name, its
// attributes, its checks, what it can do, and its constructor. The
// package of a transport registers its kinds in an init function
// (RegisterKind); adaptors/all imports every such package, and the
// compiler imports adaptors/all, so what seat check knows does not depend
// on what a binary happened to link. The compiler, the runtime and seat
// test ask a kind what it can do; they never compare type names.
type Kind struct {
	Name string
	// Attrs are the attributes it takes besides name and type; Max is
	// how many a behavior may declare (0: any).
	Attrs map[string]schema.AttrSpec
	Max   int
	// Ignored: an eSEAT type seat does not run. It loads with a warning,
	// unopened, its attributes unchecked; New is nil.
	Ignored bool
	New     Factory
	// Check is what seat check asks it about a behavior.
	Check Check
	Caps  Caps
	// Holds names what an adaptor of these attributes holds exclusively
	// (a sound device, a named pipe), "" for nothing: a reload opens the
	// new version's adaptor that holds the same only once the old one's
	// is closed. Listening addresses and standard input are known
	// without it.
	Holds func(attrs map[string]string) string
}

// Caps are what a kind's adaptors can do, that the compiler, the runtime
// and seat test need to know before one is opened.
type Caps uint

const (
	// Connections: peers connect and leave, so onconnect and
	// ondisconnect may name it, and seat.reply answers one peer.
	Connections Caps = 1 << iota
	// SessionsEndIdle: its session="topic" sessions end when their
	// sender falls silent, which is their ondisconnect.
	SessionsEndIdle
	// Page: it shows the active states' widgets on pages, whose clicks
	// come back as "gui" events (from the page's session, if any).
	Page
	// UTF8: it sends text as UTF-8 only, so a message's encode= has no
	// effect.
	UTF8
	// Topics: its messages may name a topic and be retained (a
	// TopicSender).
	Topics
	// Stdin: it reads the process's standard input, which one behavior
	// of a process may hold.
	Stdin
	// Messages: it is a MessageSender (structured messages,
	// seat.publish with a table).
	Messages
	// Calls: it is a Caller (a request with an answer, seat.call).
	Calls
	// Goals: it is a Finisher (an action server's goals, with feedback
	// and a result).
	Goals
	// Cancels: it is a Canceler (an action client that can cancel its
	// goal).
	Cancels
	// NoInput: it brings nothing from outside; its events only tell what
	// became of what the behavior sent it (a voice). It does not keep a
	// run going after standard input ends: the run ends once it is idle
	// (Worker).
	NoInput
	// Grammar: it listens for the behavior's keys (a recognizer's
	// grammar): it is given them (Config.Keys) and told the active
	// states (ActiveObserver); seat check asks it about the keys of the
	// rules whose source it is (Check.Keys).
	Grammar
)

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Kind{}
)

// RegisterKind makes a kind available. It panics on a duplicate or a
// kind without a constructor that is not Ignored: those are programming
// errors.
func RegisterKind(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[k.Name]; dup {
		panic(fmt.Sprintf("adaptors: kind %q registered twice", k.Name))
	}
	if k.New == nil && !k.Ignored {
		panic(fmt.Sprintf("adaptors: kind %q has no constructor", k.Name))
	}
	kinds[k.Name] = k
}

// LookupKind returns a kind by its type name. An unknown "ros_" type is
// the kind "ros_*" (eSEAT's other ROS types, which seat does not run).
func LookupKind(typ string) (Kind, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	k, ok := kinds[typ]
	if !ok && strings.HasPrefix(typ, "ros_") && len(typ) > 4 {
		k, ok = kinds["ros_*"]
	}
	return k, ok
}

// KindsWith returns the names of the kinds seat runs that have every
// capability of caps, sorted.
func KindsWith(caps Caps) []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	var out []string
	for name, k := range kinds {
		if !k.Ignored && k.Caps&caps == caps {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Has reports whether the kind has every capability of caps.
func (k Kind) Has(caps Caps) bool { return k.Caps&caps == caps }

// Kinds are the registered kinds as the schema checker sees them
// (schema.AdaptorKinds).
var Kinds schema.AdaptorKinds = kindTable{}

type kindTable struct{}

func (kindTable) Lookup(typ string) (schema.AdaptorType, bool) {
	k, ok := LookupKind(typ)
	return schema.AdaptorType{Attrs: k.Attrs, Max: k.Max, Ignored: k.Ignored}, ok
}

func (kindTable) Names() []string { return KindsWith(0) }

// Foreign kinds: eSEAT's types seat does not run (SEATML §10.4). They
// load with a warning, so that eSEAT's files still check and run without
// them.
func init() {
	for _, name := range []string{"provider", "consumer", "ros_*"} {
		RegisterKind(Kind{Name: name, Ignored: true})
	}
}
