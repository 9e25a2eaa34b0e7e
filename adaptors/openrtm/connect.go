package openrtm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors/openrtm/corba"
	"github.com/seatml/seat/adaptors/openrtm/rtc"
)

// watchEvery is how often a connection that connect= made checks that
// its peer is still there (tests shorten it).
var watchEvery = time.Second

// The delays between attempts to connect to a peer that is not there.
const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
)

// keepConnected connects the port to a peer port and keeps it
// connected: when the peer is not there yet, or its process or the
// naming service restarts, it tries again with back-off, saying so in
// the log once.
func (a *port) keepConnected(peer peerPort) {
	defer a.wg.Done()
	wait := backoffMin
	var failing string
	everConnected := false
	for a.ctx.Err() == nil {
		cn, err := a.connectTo(peer)
		if err != nil {
			if errors.Is(err, corba.ErrClientClosed) {
				return // the component has exited (a tool's exit)
			}
			var inc *rtc.IncompatibleError
			var np *noPortError
			switch {
			case errors.As(err, &inc) && failing != err.Error():
				a.refused.Add(1)
				a.log.Error("OpenRTM connection refused", zap.String("peer", peer.String()), zap.Error(err))
			case errors.As(err, &np) && failing != err.Error():
				a.log.Error("OpenRTM peer port not found; retrying", zap.String("peer", peer.String()), zap.Error(err))
			case failing == "":
				a.log.Warn("OpenRTM peer not reachable; retrying", zap.String("peer", peer.String()), zap.Error(err))
			}
			a.log.Debug("OpenRTM connection attempt failed", zap.String("peer", peer.String()), zap.Error(err))
			failing = err.Error()
			select {
			case <-a.ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, backoffMax)
			continue
		}
		msg := "OpenRTM connected"
		if everConnected {
			msg = "OpenRTM connected again"
		}
		a.log.Info(msg, zap.Stringer("connection", cn), zap.String("peer", peer.String()))
		everConnected, failing, wait = true, "", backoffMin
		if reason := a.watch(cn); reason != "" {
			a.log.Warn("OpenRTM connection lost; reconnecting", zap.Stringer("connection", cn), zap.String("reason", reason))
		}
	}
}

// watch returns when the connection ends: "" when the port closes,
// else why.
func (a *port) watch(cn *rtc.Conn) string {
	peers := cn.PeerRefs()
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-a.ctx.Done():
			return ""
		case <-t.C:
		}
		if !a.hasConn(cn) {
			return "disconnected"
		}
		for _, ref := range peers {
			ctx, cancel := context.WithTimeout(a.ctx, 3*time.Second)
			gone, err := a.comp.c.Client().Object(ref).NonExistent(ctx)
			cancel()
			if a.ctx.Err() != nil {
				return ""
			}
			if err == nil && !gone {
				continue
			}
			reason := "the peer port no longer exists"
			if err != nil {
				reason = err.Error()
			}
			if gone || rtc.PeerGone(err) {
				a.p.Drop(cn, reason)
				return reason
			}
		}
	}
}

func (a *port) hasConn(cn *rtc.Conn) bool {
	for _, c := range a.p.Conns() {
		if c == cn {
			return true
		}
	}
	return false
}

// connectTo resolves the peer's component in the naming services, finds
// its port, and connects to it.
func (a *port) connectTo(peer peerPort) (*rtc.Conn, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	name, err := corba.ParseName(peer.name)
	if err != nil {
		return nil, err
	}
	client := a.comp.c.Client()
	var ref *corba.IOR
	var errs []error
	for _, ns := range a.set.nameservers {
		nc, err := client.NameService(ns)
		if err == nil {
			if ref, err = nc.Resolve(ctx, name); err == nil {
				break
			}
		}
		errs = append(errs, err)
	}
	if ref == nil {
		return nil, fmt.Errorf("%s: %w", peer.name, errors.Join(errs...))
	}
	pref, names, err := a.comp.c.FindPort(ctx, ref, peer.port)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", peer.name, err)
	}
	if pref != nil {
		return a.p.Connect(ctx, pref, "", a.conn.props)
	}
	return nil, &noPortError{fmt.Sprintf("%s has no port %q (its ports: %s)", peer.name, peer.port, strings.Join(names, ", "))}
}

// noPortError is a peer component found without the port connect=
// names.
type noPortError struct{ msg string }

func (e *noPortError) Error() string { return e.msg }
