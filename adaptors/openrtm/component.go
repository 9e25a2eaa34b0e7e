package openrtm

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/openrtm/rtc"
)

// A behavior with rtcin or rtcout adaptors is one RT-Component, named
// after the behavior and shared by those adaptors: each is one of its
// data ports. The component is made with its first port and ends with
// its last, and is kept registered in its naming services meanwhile.

// compSettings are the component-wide attributes. The first rtcin or
// rtcout of a behavior to open makes the component with its own; the
// others may leave them out, or give the same.
type compSettings struct {
	nameservers []string // corba.nameservers
	formats     []string // naming.formats
	endpoint    string   // corba.endpoints
	// given lists the attributes the declaration gave.
	given []string
}

// The attributes that configure the component rather than a port.
const (
	attrNameservers = "corba.nameservers"
	attrFormats     = "naming.formats"
	attrEndpoint    = "corba.endpoints"
)

// NameserversEnv is read when no adaptor gives corba.nameservers: the
// variable rtshell's tools read.
const NameserversEnv = "RTCTREE_NAMESERVERS"

// DefaultNameserver is OpenRTM's default naming service address.
const DefaultNameserver = "127.0.0.1:2809"

// settings reads the component-wide attributes of one declaration.
func settings(attrs map[string]string) (compSettings, error) {
	s := compSettings{endpoint: strings.TrimSpace(attrs[attrEndpoint])}
	for _, a := range []string{attrNameservers, attrFormats, attrEndpoint} {
		if strings.TrimSpace(attrs[a]) != "" {
			s.given = append(s.given, a)
		}
	}
	ns := attrs[attrNameservers]
	if ns == "" {
		ns = os.Getenv(NameserversEnv)
	}
	for _, f := range splitList(ns) {
		s.nameservers = append(s.nameservers, nameserverAddr(f))
	}
	if len(s.nameservers) == 0 {
		s.nameservers = []string{DefaultNameserver}
	}
	s.formats = splitList(attrs[attrFormats])
	if len(s.formats) == 0 {
		s.formats = []string{rtc.DefaultNamingFormat}
	}
	if s.endpoint != "" {
		if strings.Contains(s.endpoint, ",") {
			return s, fmt.Errorf("%s %q: seat listens on one endpoint (HOST:PORT)", attrEndpoint, s.endpoint)
		}
		if !strings.Contains(s.endpoint, ":") {
			s.endpoint += ":0"
		}
		if strings.HasSuffix(s.endpoint, ":") {
			s.endpoint += "0"
		}
	}
	return s, nil
}

// nameserverAddr is a corba.nameservers entry as a naming service
// address: "host" is host:2809, as OpenRTM reads it; a corbaloc or IOR
// stays as it is.
func nameserverAddr(s string) string {
	l := strings.ToLower(s)
	if strings.HasPrefix(l, "corbaloc:") || strings.HasPrefix(l, "ior:") || strings.Contains(s, ":") {
		return s
	}
	return s + ":2809"
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		out = append(out, f)
	}
	return out
}

// value is an attribute's value as the settings have it.
func (s compSettings) value(attr string) string {
	switch attr {
	case attrNameservers:
		return strings.Join(s.nameservers, ",")
	case attrFormats:
		return strings.Join(s.formats, ",")
	}
	return s.endpoint
}

// component is a behavior's RT-Component and its registrations.
type component struct {
	key  string
	set  compSettings
	log  *zap.Logger
	c    *rtc.Component
	regs []*rtc.Registration
	refs int // guarded by compsMu
	// active is the component's state, for the ports' Receive.
	mu     sync.Mutex
	active bool
}

var (
	compsMu sync.Mutex
	comps   = map[string]*component{}
)

// joinComponent returns the component of a behavior, making it when
// this is its first port. A port whose component-wide attributes
// differ from those of the behavior's first port is an error.
func joinComponent(behavior string, set compSettings, log *zap.Logger) (*component, error) {
	compsMu.Lock()
	defer compsMu.Unlock()
	if cp := comps[behavior]; cp != nil {
		for _, a := range set.given {
			if set.value(a) != cp.set.value(a) {
				return nil, fmt.Errorf("%s %q: the behavior's rtcin and rtcout adaptors are one RT-Component, made by its first port with %s %q; give %s on the first rtcin or rtcout (the others may leave it out)", a, set.value(a), a, cp.set.value(a), a)
			}
		}
		cp.refs++
		return cp, nil
	}
	cp := &component{key: behavior, set: set, log: log, refs: 1}
	c, err := rtc.New(rtc.Options{
		InstanceName: behavior, TypeName: "seat", Description: "a SEATML behavior run by seat",
		Vendor: "seat", Category: "OpenHRI", Version: "1.0", Addr: set.endpoint, Logger: log,
		OnState: cp.stateChanged,
		OnExit: func() {
			cp.unregister()
			log.Warn("OpenRTM tool asked the component to exit: it has left its naming services and its ports close; the behavior runs on without them",
				zap.String("component", behavior))
		},
	})
	if err != nil {
		return nil, fmt.Errorf("starting the RT-Component: %w", err)
	}
	cp.c = c
	// A component runs from the start, as a manager's preactivation
	// would make it; a tool may deactivate it.
	c.Activate()
	for _, ns := range set.nameservers {
		var names []string
		for _, f := range set.formats {
			names = append(names, c.FormatName(f))
		}
		r, err := c.Register(ns, names, 0)
		if err != nil {
			_ = c.Close(context.Background())
			return nil, err
		}
		cp.regs = append(cp.regs, r)
		log.Info("OpenRTM component", zap.String("component", behavior), zap.String("orb", c.Addr()),
			zap.String("nameserver", ns), zap.Strings("names", names))
	}
	comps[behavior] = cp
	return cp, nil
}

func (cp *component) stateChanged(s rtc.LifeCycleState) {
	cp.mu.Lock()
	cp.active = s == rtc.Active
	cp.mu.Unlock()
}

func (cp *component) isActive() bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.active
}

// unregister leaves the naming services.
func (cp *component) unregister() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cp.mu.Lock()
	regs := cp.regs
	cp.regs = nil
	cp.mu.Unlock()
	for _, r := range regs {
		r.Stop(ctx)
	}
}

// leave ends a port's use of the component: it ends with its last port,
// unbound from its naming services, its connections' peers told.
func (cp *component) leave() {
	compsMu.Lock()
	cp.refs--
	last := cp.refs == 0
	if last {
		delete(comps, cp.key)
	}
	compsMu.Unlock()
	if !last {
		return
	}
	cp.unregister()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = cp.c.Close(ctx)
}
