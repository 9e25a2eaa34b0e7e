package adaptors

import (
	"errors"
	"net"
	"sync"
	"syscall"

	"go.uber.org/zap"
)

// Limit wraps a listener so that at most max connections are open at once:
// a connection beyond that is closed as soon as it is accepted, counted in
// Refused and logged with its peer. Accepted connections are counted in
// Open (until closed) and Accepted.
func Limit(ln net.Listener, max int, stats *Counters, log *zap.Logger) net.Listener {
	if max <= 0 {
		max = DefaultMaxConns
	}
	return &limitListener{Listener: ln, max: int64(max), stats: stats, log: log}
}

type limitListener struct {
	net.Listener
	max   int64
	stats *Counters
	log   *zap.Logger
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		// Only this goroutine adds to Open, so the check cannot be raced past.
		if l.stats.Open.Load() >= l.max {
			l.log.Warn("too many connections; refused", zap.String("peer", c.RemoteAddr().String()), zap.Int64("maxconns", l.max))
			l.stats.Refused.Add(1)
			c.Close()
			continue
		}
		return Counted(c, l.stats), nil
	}
}

// Counted counts c in Open until it is closed, and in Accepted.
func Counted(c net.Conn, stats *Counters) net.Conn {
	stats.Open.Add(1)
	stats.Accepted.Add(1)
	return &countedConn{Conn: c, stats: stats}
}

type countedConn struct {
	net.Conn
	stats *Counters
	once  sync.Once
}

// SyscallConn gives the connection's file descriptor, for writes that
// must not block (the socket adaptor's).
func (c *countedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.stats.Open.Add(-1) })
	return err
}
