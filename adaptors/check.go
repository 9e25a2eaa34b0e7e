package adaptors

// Check is what seat check asks an adaptor kind about a behavior before
// it runs: what the adaptor would refuse at start or when sending, found
// from the file alone.
type Check struct {
	// Decl reports the problems of a declaration (a message type that
	// cannot be found, attributes that do not go together), each naming
	// its attribute.
	Decl func(d Decl) []Problem
	// Message reports why the text of a <message> to the adaptor would
	// not be sent (a value that does not fit its message type); nil when
	// it would.
	Message func(d Decl, text string) error
	// Keys returns what reports why a key of a rule whose source is the
	// adaptor cannot be listened for (a recognizer's grammar cannot hold
	// it; a warning), or nil when it does not matter. It is asked once per
	// declaration, and what it returns once per key.
	Keys func(d Decl) func(key string) error
	// Refs are the attributes that name another adaptor of the behavior,
	// each with the kind it must be, or AnyAdaptors for a comma-separated
	// list of adaptors of any kind: seat check reports a name that is no
	// such adaptor (Config.Peer finds it at run time).
	Refs map[string]string
}

// Decl is an adaptor's declaration, as a kind's check sees it.
type Decl struct {
	Name  string
	Attrs map[string]string
	// Dir is the behavior file's directory, which relative paths are
	// read from.
	Dir string
}

// Problem is an error in one attribute of a declaration ("" for the
// element itself), or a warning: what the declaration needs is not on
// this machine (a ROS package), and seat run will say so if it still is
// not. Check prints it as `adaptor "NAME": Msg`, at the attribute's value
// (or its eSEAT alias's); AtName puts it at the attribute's name (the
// attribute as a whole is wrong), and Whole prints Msg alone.
//
// Machine marks what this machine lacks for the adaptor to run (a
// speech engine, its voice): an error where the behavior is to run here
// (seat check, seat run), a warning where it is not (seat test stands in
// for the adaptor; seat graph, seat port).
type Problem struct {
	Attr, Msg string
	Warning   bool
	Machine   bool
	AtName    bool
	Whole     bool
}

// AnyAdaptors, as a kind in Check.Refs, is an attribute that lists
// adaptors of any kind, separated by commas.
const AnyAdaptors = "*"
