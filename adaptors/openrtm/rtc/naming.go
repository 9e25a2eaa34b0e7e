package rtc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// DefaultNamingFormat is OpenRTM's naming.formats default.
const DefaultNamingFormat = "%h.host_cxt/%n.rtc"

// FormatName expands one of OpenRTM's naming.formats as its manager
// does: %n the instance name, %t the type name, %v version, %V vendor,
// %c category, %h the host name, %p the process id, %% a percent sign.
func (c *Component) FormatName(format string) string {
	host, _ := os.Hostname()
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		switch format[i] {
		case 'n':
			b.WriteString(c.opts.InstanceName)
		case 't', 'm':
			b.WriteString(c.opts.TypeName)
		case 'v':
			b.WriteString(c.opts.Version)
		case 'V':
			b.WriteString(c.opts.Vendor)
		case 'c':
			b.WriteString(c.opts.Category)
		case 'h':
			b.WriteString(host)
		case 'p':
			fmt.Fprint(&b, os.Getpid())
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// Registration keeps a component bound under its names in one naming
// service: it binds them, checks them every interval, binds them again
// when the naming service restarted without them (or another object
// took them), and unbinds them on Stop. The naming service's
// unavailability is logged once, and its return.
type Registration struct {
	c        *Component
	addr     string
	names    []corba.Name
	every    time.Duration
	cancel   context.CancelFunc
	done     chan struct{}
	mu       sync.Mutex
	bound    bool
	ready    chan struct{}
	readyOne sync.Once
}

// Register binds the component under names (stringified, as
// "host.host_cxt/Foo.rtc") in the naming service at addr ("HOST:PORT",
// or a corbaloc), and keeps them bound, checking every interval (2 s
// when 0). It returns at once; Bound says whether the names are bound.
func (c *Component) Register(addr string, names []string, every time.Duration) (*Registration, error) {
	r := &Registration{c: c, addr: addr, every: every, done: make(chan struct{}), ready: make(chan struct{})}
	if r.every <= 0 {
		r.every = 2 * time.Second
	}
	for _, s := range names {
		n, err := corba.ParseName(s)
		if err != nil {
			return nil, fmt.Errorf("naming name %q: %w", s, err)
		}
		r.names = append(r.names, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go r.run(ctx)
	return r, nil
}

// Bound reports whether the names were bound at the last check.
func (r *Registration) Bound() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bound
}

// Ready is closed once the names have been bound the first time.
func (r *Registration) Ready() <-chan struct{} { return r.ready }

// Names are the names, as the naming service shows them.
func (r *Registration) Names() []string {
	var out []string
	for _, n := range r.names {
		out = append(out, n.String())
	}
	return out
}

func (r *Registration) run(ctx context.Context) {
	defer close(r.done)
	failing := false
	for {
		err := r.check(ctx)
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		r.bound = err == nil
		r.mu.Unlock()
		switch {
		case err != nil && !failing:
			failing = true
			r.c.log.Warn("OpenRTM naming service not reachable; retrying", zap.String("nameserver", r.addr), zap.Error(err))
		case err == nil && failing:
			failing = false
			r.c.log.Info("OpenRTM naming service back; component registered", zap.String("nameserver", r.addr), zap.Strings("names", r.Names()))
		}
		if err == nil {
			r.readyOne.Do(func() { close(r.ready) })
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.every):
		}
	}
}

// check binds each name that is not bound to the component.
func (r *Registration) check(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, r.c.opts.CallTimeout)
	defer cancel()
	nc, err := r.c.client.NameService(r.addr)
	if err != nil {
		return err
	}
	for _, n := range r.names {
		if ior, err := nc.Resolve(cctx, n); err == nil && sameObject(ior, r.c.ref) {
			continue
		}
		if err := nc.RebindPath(cctx, n, r.c.ref); err != nil {
			return err
		}
	}
	return nil
}

// Stop ends the checks and unbinds the names (within ctx).
func (r *Registration) Stop(ctx context.Context) {
	r.cancel()
	<-r.done
	nc, err := r.c.client.NameService(r.addr)
	if err != nil {
		return
	}
	for _, n := range r.names {
		if ior, err := nc.Resolve(ctx, n); err == nil && sameObject(ior, r.c.ref) {
			_ = nc.Unbind(ctx, n)
		}
	}
}
