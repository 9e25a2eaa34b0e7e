package adaptors

// Check is what seat check asks an adaptor type about a behavior before
// it runs: what the adaptor would refuse at start or when sending, found
// from the file alone. Types register one with RegisterCheck, as they
// register their factory.
type Check struct {
	// Decl reports the problems of a declaration's attributes (a message
	// type that cannot be found), each naming its attribute.
	Decl func(attrs map[string]string) []Problem
	// Message reports why the text of a <message> to the adaptor would
	// not be sent (a value that does not fit its message type); nil when
	// it would.
	Message func(attrs map[string]string, text string) error
}

// Problem is an error in one attribute of a declaration ("" for the
// element itself), or a warning: what the declaration needs is not on
// this machine (a ROS package), and seat run will say so if it still is
// not.
type Problem struct {
	Attr, Msg string
	Warning   bool
}

var checks = map[string]Check{}

// RegisterCheck makes c the check of adaptor type typ. Like Register, it
// is called from init functions.
func RegisterCheck(typ string, c Check) {
	mu.Lock()
	defer mu.Unlock()
	checks[typ] = c
}

// LookupCheck returns the check of an adaptor type.
func LookupCheck(typ string) (Check, bool) {
	mu.RLock()
	defer mu.RUnlock()
	c, ok := checks[typ]
	return c, ok
}
