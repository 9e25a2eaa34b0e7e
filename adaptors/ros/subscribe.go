package ros

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/apimaster"
	"github.com/bluenviron/goroslib/v2/pkg/apislave"
	"github.com/bluenviron/goroslib/v2/pkg/msgproc"
	"github.com/bluenviron/goroslib/v2/pkg/protocommon"
	"github.com/bluenviron/goroslib/v2/pkg/prototcp"
	"go.uber.org/zap"
)

// maxMessage bounds a message a ros_sub reads: one over it is skipped
// (its bytes read and dropped, never held), counted as line_too_long
// and logged once per publisher, and the connection goes on. It is
// goroslib's limit.
const maxMessage = 16 << 20

// A ros_sub reads its publishers over TCPROS itself, with goroslib's
// wire encoding (pkg/protocommon), as a ros_server serves its clients:
// goroslib v2.1.5's subscriber closes the connection on a message over
// its limit (or any it cannot decode), logs nothing (it logs only EOF),
// and connects again only after 5 s, losing what the publisher sent
// meanwhile. The master's list of publishers reaches the subscription at
// registration and then from the node's watch, every checkEvery:
// goroslib's node drops the master's publisherUpdate calls for topics it
// does not subscribe to itself.

// subscription is a ros_sub's registration with the master and its
// connections to the topic's publishers, one goroutine each.
type subscription struct {
	t         *topic
	topic     string // absolute
	master    *apimaster.Client
	callerID  string
	callerURL string
	header    prototcp.HeaderSubscriber
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	mu     sync.Mutex
	closed bool
	pubs   map[string]*publisherConn // by the publisher's slave API URL
	big    map[string]bool           // publishers whose message over the limit was logged
}

// publisherConn is a subscription's connection to one publisher.
type publisherConn struct {
	url    string
	cancel context.CancelFunc
	// settled is set while the publisher is connected, or once it has
	// refused the subscription (another type): its URL is good.
	settled atomic.Bool
}

// refusedError is a publisher's refusal of the subscription (another
// type, or another definition of it).
type refusedError struct{ reason string }

func (e *refusedError) Error() string { return "the publisher refused the subscription: " + e.reason }

// subscribe registers the topic's subscriber with the master, under the
// node (which the master knows by now: goroslib registers its /rosout
// publisher when it makes the node), and connects to its publishers.
func (a *topic) subscribe() (*subscription, error) {
	callerID := "/" + a.nodeName
	master := apimaster.NewClient(a.master, callerID, &http.Client{Timeout: 5 * time.Second})
	callerURL, err := master.LookupNode(callerID)
	if err != nil {
		return nil, fmt.Errorf("looking the node up: %w", err)
	}
	elem := reflect.New(a.typ.Go).Elem().Interface()
	typ, err := msgproc.Type(elem)
	if err != nil {
		return nil, err
	}
	md5, err := msgproc.MD5(elem)
	if err != nil {
		return nil, err
	}
	def, err := msgproc.Definition(elem)
	if err != nil {
		return nil, err
	}
	s := &subscription{t: a, topic: absolute(a.remote), master: master, callerID: callerID, callerURL: callerURL,
		pubs: map[string]*publisherConn{}, big: map[string]bool{}}
	s.header = prototcp.HeaderSubscriber{Callerid: callerID, Topic: s.topic, Type: typ, Md5sum: md5, MessageDefinition: def, TcpNodelay: 1}
	urls, err := master.RegisterSubscriber(s.topic, typ, callerURL)
	if err != nil {
		return nil, fmt.Errorf("registering subscriber of %s: %w", s.topic, err)
	}
	s.ctx, s.cancel = context.WithCancel(a.ctx)
	s.update(urls)
	return s, nil
}

// close unregisters the subscriber and closes its connections; a
// delivery waiting for the behavior gives up.
func (s *subscription) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	_ = s.master.UnregisterSubscriber(s.topic, s.callerURL)
	s.cancel()
	s.wg.Wait()
}

// update connects to the publishers of urls it is not connected to, and
// closes its connections to the others.
func (s *subscription) update(urls []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	want := make(map[string]bool, len(urls))
	for _, u := range urls {
		want[u] = true
		if s.pubs[u] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(s.ctx)
		p := &publisherConn{url: u, cancel: cancel}
		s.pubs[u] = p
		s.wg.Add(1)
		go s.run(ctx, p)
	}
	for u, p := range s.pubs {
		if !want[u] {
			p.cancel()
			delete(s.pubs, u)
		}
	}
}

// settled reports whether the publisher at u has been reached.
func (s *subscription) settled(u string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pubs[u]
	return p != nil && p.settled.Load()
}

// run reads from a publisher until ctx ends, connecting again with
// back-off when the connection fails or ends; a publisher that refused
// the subscription is not asked again while the master lists it.
func (s *subscription) run(ctx context.Context, p *publisherConn) {
	defer s.wg.Done()
	wait := backoffMin
	for {
		read, err := s.read(ctx, p)
		if ctx.Err() != nil {
			return
		}
		var refused *refusedError
		if errors.As(err, &refused) {
			// Another type: checkPublishers logs and counts it.
			s.t.log.Debug("ROS publisher refused", zap.String("topic", s.topic), zap.String("publisher", p.url), zap.Error(err))
			p.settled.Store(true)
			return
		}
		// A publisher that is done (a rostopic pub -1, a node stopped)
		// closes its connection: no fault.
		s.t.log.Debug("ROS publisher's connection ended: "+err.Error(), zap.String("topic", s.topic), zap.String("publisher", p.url))
		if read {
			wait = backoffMin
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, backoffMax)
	}
}

// read makes one connection to a publisher and delivers its messages
// until it ends; read reports whether a message came.
func (s *subscription) read(ctx context.Context, p *publisherConn) (read bool, err error) {
	p.settled.Store(false) // its node may have been made again elsewhere: looked up again
	u, err := url.Parse(p.url)
	if err != nil {
		return false, err
	}
	proto, err := apislave.NewClient(u.Host, s.callerID, &http.Client{Timeout: 5 * time.Second}).RequestTopic(s.topic, [][]any{{"TCPROS"}})
	if err != nil {
		return false, err
	}
	if len(proto) != 3 || proto[0] != "TCPROS" {
		return false, fmt.Errorf("requestTopic answered %v, not TCPROS", proto)
	}
	host, _ := proto[1].(string)
	port, ok := proto[2].(int)
	if !ok {
		return false, fmt.Errorf("requestTopic answered %v: no port", proto)
	}
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false, err
	}
	defer c.Close()
	defer context.AfterFunc(ctx, func() { c.Close() })()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := protocommon.HeaderEncode(c, &s.header); err != nil {
		return false, err
	}
	r := bufio.NewReaderSize(c, 64<<10)
	raw, err := protocommon.HeaderRawDecode(r)
	if err != nil {
		return false, err
	}
	if reason, ok := raw["error"]; ok {
		return false, &refusedError{reason}
	}
	var h prototcp.HeaderPublisher
	if err := protocommon.HeaderDecode(raw, &h); err != nil {
		return false, err
	}
	if h.Md5sum != s.header.Md5sum && h.Md5sum != "*" {
		return false, &refusedError{fmt.Sprintf("it publishes %s (MD5 %s), not %s (MD5 %s)", h.Type, h.Md5sum, s.header.Type, s.header.Md5sum)}
	}
	c.SetDeadline(time.Time{})
	p.settled.Store(true)
	publisher := h.Callerid
	if publisher == "" {
		publisher = p.url
	}
	for {
		b, err := r.Peek(4)
		if err != nil {
			return read, err
		}
		if n := binary.LittleEndian.Uint32(b); n > maxMessage {
			if _, err := r.Discard(4 + int(n)); err != nil {
				return read, err
			}
			s.tooLong(publisher, n)
			continue
		}
		m := reflect.New(s.t.typ.Go)
		if err := protocommon.MessageDecode(r, m.Interface()); err != nil {
			return read, err // not what the type says: the connection is made again
		}
		read = true
		_ = s.t.sink.Deliver(ctx, s.t.event(m)) // refused by a behavior that is not running: dropped, as a line is
		if err := ctx.Err(); err != nil {
			return read, err
		}
	}
}

// tooLong counts a message over the limit, logged once per publisher.
func (s *subscription) tooLong(publisher string, n uint32) {
	s.mu.Lock()
	first := !s.big[publisher]
	s.big[publisher] = true
	s.mu.Unlock()
	if first {
		s.t.log.Warn("ROS message over the limit skipped; the publisher's next messages are read as usual (logged once per publisher)",
			zap.String("topic", s.topic), zap.String("publisher", publisher), zap.Uint32("bytes", n), zap.Int("limit", maxMessage))
	}
	s.t.stats.LineTooLong.Add(1)
}
