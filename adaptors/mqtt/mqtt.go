// Package mqtt is the MQTT adaptor: a behavior as a client of a broker
// (Mosquitto, EMQX, HiveMQ), through Eclipse Paho. Publications on the
// subscribed topics are events whose text is the payload (event.topic
// names the topic); messages are published to the publish topic, or to a
// message's own topic. With session="topic" each value of the
// subscription's "+" level is a session of its own (one per robot), and
// its replies go to the publish topic with that value in the "+".
// docs/mqtt.md describes it.
package mqtt

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/schema"
)

func init() {
	adaptors.RegisterKind(adaptors.Kind{Name: "mqtt", New: New, Caps: adaptors.SessionsEndIdle | adaptors.Topics,
		Attrs: map[string]schema.AttrSpec{
			"broker":      {},
			"subscribe":   {Kind: schema.TopicFilters},
			"publish":     {Kind: schema.TopicName},
			"qos":         {Kind: schema.Enum, Enum: []string{"0", "1", "2"}},
			"clientid":    {},
			"clean":       {Kind: schema.Enum, Enum: []string{"true", "false"}},
			"username":    {},
			"password":    {},
			"cafile":      {},
			"keepalive":   {Kind: schema.PosInt},
			"will":        {},
			"maxline":     {Kind: schema.PosInt},
			"session":     {Kind: schema.Enum, Enum: []string{"topic"}},
			"maxsessions": {Kind: schema.PosInt},
			"retained":    {Kind: schema.Enum, Enum: []string{"once", "every", "ignore"}},
			"sessionidle": {Kind: schema.NonNegInt},
		},
		Check: adaptors.Check{Decl: checkDecl}})
}

// checkDecl: a topic session is one per value of the subscription's +
// level, so the subscription needs one.
func checkDecl(d adaptors.Decl) []adaptors.Problem {
	if d.Attrs["session"] == "topic" && !strings.Contains(d.Attrs["subscribe"], "+") {
		return []adaptors.Problem{{Attr: "session", AtName: true,
			Msg: fmt.Sprintf("session=\"topic\" makes a session per value of the subscription's + level, and subscribe=%q has none (for example robot/+/asr)", d.Attrs["subscribe"])}}
	}
	return nil
}

// Defaults.
const (
	DefaultKeepAlive  = 30 * time.Second
	DefaultMaxPayload = adaptors.DefaultMaxLine
	connectTimeout    = 10 * time.Second
	publishTimeout    = 10 * time.Second
	maxReconnect      = 10 * time.Second
	// closeWait bounds how long Close waits for the outbox to reach the
	// broker: a broker that hangs must not hold a stop.
	closeWait = 2 * time.Second
	// maxTracked bounds the QoS 1 and 2 publications whose outcome the
	// writer watches, to log the ones the broker never took.
	maxTracked = 1024
	// inboxSize bounds the publications received and not yet given to
	// the behavior. At QoS 1 and 2 the broker's window of unacknowledged
	// messages (20 for mosquitto) keeps far below it; at QoS 0 a full
	// inbox holds the broker's flow back.
	inboxSize = 1024
	// maxRemembered bounds the topics whose last payload the adaptor
	// remembers, to tell a retained message sent again from a new one.
	maxRemembered = 65536
)

// What is done with retained messages (the retained attribute).
const (
	retainedOnce   = "once"   // handled once per process, unless it changes
	retainedEvery  = "every"  // handled each time the broker sends it
	retainedIgnore = "ignore" // never handled: only live publications are
)

// Adaptor is one connection to a broker.
type Adaptor struct {
	name      string
	broker    string
	subscribe []string
	plus      []bool // by subscribe's index: the filter has a "+" level
	publish   string
	qos       byte
	maxline   int
	willTopic string
	// topicSessions is session="topic": each sender (a filter with "+"
	// and its value) is a session of the behavior.
	topicSessions bool
	emptyWarned   atomic.Bool
	fullWarned    atomic.Bool
	log           *zap.Logger
	stats         adaptors.Counters
	opts          *paho.ClientOptions
	keep          time.Duration
	kept          bool // clean="false": the broker keeps the session

	// out holds publications until the writer hands them to Paho, whose
	// Publish blocks while the broker does not read: sending never blocks
	// the behavior. Each is packed by pack. refusing is set while out
	// refuses (the broker took nothing for the stall time); dropped counts
	// the publications refused since.
	out      *adaptors.Outbox
	refusing atomic.Bool
	dropped  atomic.Int64
	up       chan struct{} // signalled on each connection
	drain    chan struct{} // closed by Close: the writer sends what is queued and ends
	written  chan struct{} // closed when the writer ends

	// inbox holds what Paho received until the deliverer gives it to the
	// behavior: Paho's reading goroutine never waits for the behavior,
	// so its pings and acknowledgements flow while the behavior is busy.
	// A QoS 1 or 2 message is acknowledged once the behavior has handled
	// it, by the writer after the publications made before (unacked).
	inbox     chan paho.Message
	delivered chan struct{} // closed when the deliverer ends
	ackMu     sync.Mutex
	ackSeq    uint64
	unacked   map[uint64]paho.Message

	// retained says what is done with retained messages; last is, by
	// topic, hashes of the last retained and the last live payload
	// handled (retained="once"; the deliverer's alone).
	retained string
	last     map[string][2]uint64

	closeOnce sync.Once
	mu        sync.Mutex
	client    paho.Client
	sink      adaptors.Sink
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// New builds an MQTT adaptor from its attributes.
func New(cfg adaptors.Config) (adaptors.Adaptor, error) {
	a := &Adaptor{name: cfg.Name, log: cfg.Log, publish: cfg.Attrs["publish"], topicSessions: cfg.Attrs["session"] == "topic",
		out: adaptors.NewOutbox(cfg.Tuning), up: make(chan struct{}, 1), drain: make(chan struct{}), written: make(chan struct{}),
		inbox: make(chan paho.Message, inboxSize), delivered: make(chan struct{}), unacked: map[uint64]paho.Message{}}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	switch a.retained = cfg.Attrs["retained"]; a.retained {
	case "":
		a.retained = retainedOnce
	case retainedOnce, retainedEvery, retainedIgnore:
	default:
		return nil, fmt.Errorf("retained %q: want once, every or ignore", a.retained)
	}
	if a.retained == retainedOnce {
		a.last = map[string][2]uint64{}
	}
	broker := cfg.Attrs["broker"]
	if broker == "" {
		broker = "tcp://127.0.0.1:1883"
	}
	u, err := url.Parse(broker)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("broker %q: want tcp://HOST:PORT, mqtt://, mqtts:// or ssl://", Redact(broker))
	}
	// Credentials in the URL (tcp://alice:secret@host) are the username and
	// password; the broker is shown and logged without the password.
	user, pass := cfg.Attrs["username"], cfg.Attrs["password"]
	shown := u.User
	if u.User != nil {
		if user == "" {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		if _, has := u.User.Password(); has {
			shown = url.UserPassword(u.User.Username(), "xxxxx")
		}
		u.User = nil
	}
	tlsOn := false
	switch u.Scheme {
	case "tcp", "mqtt":
		u.Scheme = "tcp"
	case "mqtts", "ssl", "tls":
		u.Scheme, tlsOn = "ssl", true
	default:
		return nil, fmt.Errorf("broker %q: scheme %q is not tcp, mqtt, mqtts or ssl", Redact(broker), u.Scheme)
	}
	if u.Port() == "" {
		port := "1883"
		if tlsOn {
			port = "8883"
		}
		u.Host = u.Hostname() + ":" + port
	}
	dial := u.String()
	u.User = shown
	a.broker = u.String() // as shown and logged
	for _, f := range strings.Split(cfg.Attrs["subscribe"], ",") {
		if f = strings.TrimSpace(f); f != "" {
			a.subscribe = append(a.subscribe, f)
			a.plus = append(a.plus, hasPlus(f))
		}
	}
	qos := 0
	if v := cfg.Attrs["qos"]; v != "" {
		if qos, err = strconv.Atoi(v); err != nil || qos < 0 || qos > 2 {
			return nil, fmt.Errorf("qos %q: want 0, 1 or 2", v)
		}
	}
	a.qos = byte(qos)
	if a.maxline, err = cfg.PositiveInt("maxline", DefaultMaxPayload); err != nil {
		return nil, err
	}
	keep := DefaultKeepAlive
	if v := cfg.Attrs["keepalive"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("keepalive %q: want a whole number of seconds, 1 or more", v)
		}
		keep = time.Duration(n) * time.Second
	}
	clean := true
	if v := cfg.Attrs["clean"]; v != "" {
		if clean, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("clean %q: want true or false", v)
		}
	}
	a.kept = !clean
	id := cfg.Attrs["clientid"]
	if id == "" {
		if !clean {
			return nil, errors.New(`clean="false" keeps a session at the broker under a client id: give one with clientid`)
		}
		host, _ := os.Hostname()
		var r [3]byte
		_, _ = rand.Read(r[:]) // two behaviors' adaptors of one name must not share an id
		id = fmt.Sprintf("seat-%s-%s-%d-%x", cfg.Name, host, os.Getpid(), r)
	}
	a.keep = keep
	// Subscriptions are made again on each connection (subscribeAll), not
	// resumed by Paho: its resume runs beside the connect handler and took
	// over the handler's pending subscription, whose token then never
	// completed (a false "subscription failed" and a 10 s wait on restarts).
	// A broker that hangs with its connection open (stopped, or its host
	// swapping) must be noticed: a ping unanswered for the keep-alive, or a
	// write that waits that long, ends the connection, and Paho reconnects.
	opts := paho.NewClientOptions().AddBroker(dial).SetClientID(id).SetCleanSession(clean).
		SetKeepAlive(keep).SetPingTimeout(keep).SetWriteTimeout(keep).SetAutoReconnect(true).SetMaxReconnectInterval(maxReconnect).
		SetConnectTimeout(connectTimeout).SetOrderMatters(true).SetAutoAckDisabled(true)
	if user != "" {
		opts.SetUsername(user)
		opts.SetPassword(pass)
	}
	if tlsOn {
		conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: u.Hostname()}
		if ca := cfg.Attrs["cafile"]; ca != "" {
			if !filepath.IsAbs(ca) {
				ca = filepath.Join(cfg.Dir, ca)
			}
			pem, err := os.ReadFile(ca)
			if err != nil {
				return nil, fmt.Errorf("cafile: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("cafile %s: no PEM certificate in it", ca)
			}
			conf.RootCAs = pool
		}
		opts.SetTLSConfig(conf)
	} else if cfg.Attrs["cafile"] != "" {
		return nil, errors.New("cafile is for mqtts:// brokers")
	}
	opts.SetCustomOpenConnectionFn(a.dial)
	if will := cfg.Attrs["will"]; will != "" {
		topic, payload, ok := strings.Cut(will, ":")
		if !ok || topic == "" || strings.ContainsAny(topic, "+#") {
			return nil, fmt.Errorf("will %q: want TOPIC:PAYLOAD, for example robot/seat/status:offline", will)
		}
		a.willTopic = topic
		opts.SetWill(topic, payload, 1, true)
	}
	a.opts = opts
	return a, nil
}

// Name returns the adaptor's name.
func (a *Adaptor) Name() string { return a.name }

// Stats reports the adaptor's counts: Open is 1 while connected.
func (a *Adaptor) Stats() adaptors.Stats { return a.stats.Snapshot() }

// Addr is the broker's address.
func (a *Adaptor) Addr() string { return a.broker }

// Open connects to the broker and subscribes; it fails with the broker's
// reason (bad credentials, not reachable). Later losses of the connection
// are reconnected with back-off, and the subscriptions resumed.
func (a *Adaptor) Open(ctx context.Context, sink adaptors.Sink) error {
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.sink = sink
	go a.deliver()
	// "online" (on the will's topic) says that seat receives: it goes
	// after the subscriptions are confirmed, or, when the broker kept the
	// session and so has them already, before seat subscribes again (the
	// confirmation then comes after what the broker kept). ready is
	// closed once the first connection has announced itself; present
	// tells its goroutine whether the broker kept the session.
	ready := make(chan struct{})
	present := make(chan bool, 1)
	var first sync.Once
	a.opts.SetDefaultPublishHandler(a.receive) // a persistent session's queue may arrive before Subscribe
	a.opts.SetOnConnectHandler(func(c paho.Client) {
		a.stats.Open.Store(1)
		a.stats.Accepted.Add(1)
		select { // wake the writer: what was queued while away goes now
		case a.up <- struct{}{}:
		default:
		}
		a.log.Info("connected to the broker", zap.String("broker", a.broker))
		a.wg.Add(1)
		go func() { // not in the handler: Paho waits for it before routing
			defer a.wg.Done()
			isFirst, kept := false, a.kept // on a reconnection a kept session has its subscriptions
			first.Do(func() { isFirst = true })
			if isFirst {
				select {
				case kept = <-present:
				case <-a.ctx.Done():
					return
				}
			}
			if kept {
				a.announce(c)
			}
			if isFirst && kept {
				close(ready)
			}
			a.subscribeAll(c)
			if !kept {
				a.announce(c)
			}
			if isFirst && !kept {
				close(ready)
			}
		}()
	})
	a.opts.SetConnectionLostHandler(func(_ paho.Client, err error) {
		a.stats.Open.Store(0)
		a.log.Warn("connection to the broker lost; reconnecting", zap.String("broker", a.broker), zap.Error(err))
	})
	c := paho.NewClient(a.opts)
	tok := c.Connect()
	if !tok.WaitTimeout(connectTimeout + time.Second) {
		c.Disconnect(0)
		a.cancel()
		return fmt.Errorf("broker %s did not answer within %v", a.broker, connectTimeout)
	}
	if err := tok.Error(); err != nil {
		a.cancel()
		if msg := err.Error(); strings.HasPrefix(msg, "network Error : ") {
			return fmt.Errorf("broker %s is not reachable (is it running?): %s", a.broker, strings.TrimPrefix(msg, "network Error : "))
		}
		return fmt.Errorf("broker %s refused the connection: %w", a.broker, explain(err))
	}
	a.mu.Lock()
	a.client = c
	a.mu.Unlock()
	go a.write(c)
	// Ready means subscribed: a persistent session then keeps what is
	// published while seat is away, from the start. A session the broker
	// kept has its subscriptions already, and what it kept comes before
	// the broker's confirmation: waiting for it would hold it all back.
	ct, _ := tok.(*paho.ConnectToken)
	present <- ct != nil && ct.SessionPresent()
	select {
	case <-ready:
	case <-time.After(publishTimeout):
		a.log.Warn("subscriptions not confirmed by the broker yet; going on", zap.String("broker", a.broker))
	}
	return nil
}

// announce publishes "online", retained, on the will's topic.
func (a *Adaptor) announce(c paho.Client) {
	if a.willTopic != "" {
		c.Publish(a.willTopic, 1, true, "online").WaitTimeout(publishTimeout)
	}
}

// Redact returns a broker URL with its password replaced by "xxxxx", for
// showing it; text that is not a URL but has an "@" loses what comes
// before it.
func Redact(broker string) string {
	if u, err := url.Parse(broker); err == nil && (u.User != nil || !strings.Contains(broker, "@")) {
		return u.Redacted()
	}
	if i := strings.LastIndex(broker, "@"); i >= 0 {
		scheme, _, ok := strings.Cut(broker, "://")
		if !ok {
			return "xxxxx" + broker[i:]
		}
		return scheme + "://xxxxx" + broker[i:]
	}
	return broker
}

// explain makes Paho's errors read as the user's problem.
func explain(err error) error {
	switch {
	case errors.Is(err, packets.ErrorRefusedNotAuthorised):
		return fmt.Errorf("not authorized: check username and password (%w)", err)
	case errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword):
		return fmt.Errorf("bad username or password (%w)", err)
	}
	return err
}

func (a *Adaptor) subscribeAll(c paho.Client) {
	toks := make([]paho.Token, len(a.subscribe))
	for i, f := range a.subscribe {
		// No handler of its own: every publication goes to the default
		// handler once, even where two filters match its topic.
		toks[i] = c.Subscribe(f, a.qos, nil)
	}
	for i, f := range a.subscribe {
		tok := toks[i]
		if !tok.WaitTimeout(publishTimeout) {
			// What a persistent session kept comes before the broker's
			// answer, and waits for the behavior to start.
			a.log.Info("subscription not confirmed yet; still waiting (what the broker kept for seat may come first)", zap.String("topic", f))
			select {
			case <-tok.Done():
			case <-a.ctx.Done():
				return
			}
		}
		err := tok.Error()
		if st, ok := tok.(*paho.SubscribeToken); ok && err == nil && st.Result()[f] == 0x80 {
			err = errors.New("the broker refused it (is the client allowed to read this topic?)")
		}
		if err != nil {
			a.log.Error("subscription failed", zap.String("topic", f), zap.Error(err))
			continue
		}
		a.log.Info("subscribed", zap.String("topic", f), zap.Int("qos", int(a.qos)))
	}
}

// receive is Paho's handler: it checks a publication and passes it to
// the deliverer. It waits only while the inbox is full.
func (a *Adaptor) receive(_ paho.Client, m paho.Message) {
	if len(m.Payload()) > a.maxline {
		a.stats.LineTooLong.Add(1)
		a.log.Error("publication over maxline; dropped", zap.String("topic", m.Topic()), zap.Int("bytes", len(m.Payload())), zap.Int("maxline", a.maxline))
		a.ack(m)
		return
	}
	if m.Qos() == 0 {
		// At most once: a behavior that is behind loses QoS 0 messages
		// rather than stop Paho reading (its pings would go unanswered,
		// and the connection drop).
		select {
		case a.inbox <- m:
		default:
			a.stats.Dropped.Add(1)
			if !a.fullWarned.Swap(true) {
				a.log.Warn("the behavior is behind: QoS 0 publications dropped while 1,024 wait (counted as dropped; logged once)", zap.String("topic", m.Topic()))
			}
		}
		return
	}
	select { // QoS 1 and 2: wait; the broker keeps what is not acknowledged
	case a.inbox <- m:
	case <-a.ctx.Done():
	}
}

// deliver gives the publications to the behavior in order, once it has
// started (adaptors.Readier): what a persistent session kept arrives at
// connection, before the behavior runs, and must not be dropped.
func (a *Adaptor) deliver() {
	defer close(a.delivered)
	if r, ok := a.sink.(adaptors.Readier); ok {
		select {
		case <-r.Ready():
		case <-a.ctx.Done():
			return
		}
	}
	for {
		select {
		case m := <-a.inbox:
			a.event(m)
		case <-a.ctx.Done():
			return
		}
	}
}

// event turns a publication into an event and delivers it.
func (a *Adaptor) event(m paho.Message) {
	text, repaired := adaptors.CleanText(string(m.Payload()))
	if repaired {
		a.stats.Repaired.Add(1)
	}
	from := a.sender(m.Topic())
	if a.topicSessions && from.plus && from.value == "" {
		a.stats.EmptyLevel.Add(1)
		if !a.emptyWarned.Swap(true) {
			a.log.Warn(`publication with an empty "+" level refused: no sender to give a session to (counted as empty_level; logged once)`,
				zap.String("topic", m.Topic()), zap.String("filter", from.filter))
		}
		a.ack(m)
		return
	}
	if !a.fresh(m) {
		a.ack(m)
		return
	}
	ev := adaptors.Event{Source: a.name, Text: text, Topic: m.Topic(), From: from, Retained: m.Retained()}
	if m.Qos() > 0 {
		ev.Done = func(handled bool) {
			if handled {
				a.ack(m)
			}
		}
	}
	if err := a.sink.Deliver(a.ctx, ev); err != nil && a.ctx.Err() == nil {
		a.log.Warn("publication not delivered", zap.String("topic", m.Topic()), zap.Error(err))
	}
}

// fresh reports whether a message is to be handled under the retained
// policy. The broker sends a topic's retained message each time a
// subscription is made, so after every reconnection; with
// retained="once" it is handled again only if its payload is not the
// last one handled on that topic (live or retained).
func (a *Adaptor) fresh(m paho.Message) bool {
	switch a.retained {
	case retainedIgnore:
		return !m.Retained()
	case retainedEvery:
		return true
	}
	// A retained message is the topic's value: seen already if it is the
	// last retained one handled (a live message since, "off" after "on",
	// does not make the broker's "on" new), or the last live one (a
	// value published live with retain, sent again as retained).
	h := fnv.New64a()
	h.Write(m.Payload())
	sum := h.Sum64() | 1 // never 0: 0 is "none yet"
	seen, known := a.last[m.Topic()]
	again := m.Retained() && known && (seen[0] == sum || seen[1] == sum)
	if known || len(a.last) < maxRemembered {
		if m.Retained() {
			seen[0] = sum // the broker's value now, handled or not
		} else {
			seen[1] = sum
		}
		a.last[m.Topic()] = seen
	}
	if again {
		a.stats.RetainedAgain.Add(1)
		a.log.Debug("retained message sent again by the broker; already handled", zap.String("topic", m.Topic()))
		return false
	}
	return true
}

// ack acknowledges a QoS 1 or 2 message to the broker. The writer sends
// it, after the publications queued before: a message is acknowledged
// only once what its handling published is on its way, so that a crash
// in between makes the broker send it again instead of losing its answer.
// It never blocks; an outbox that refuses keeps the acknowledgement
// back, and the broker sends the message again after a reconnection.
func (a *Adaptor) ack(m paho.Message) {
	if m.Qos() == 0 {
		return
	}
	a.ackMu.Lock()
	a.ackSeq++
	seq := a.ackSeq
	a.unacked[seq] = m
	a.ackMu.Unlock()
	if !a.out.Put(ackMark + strconv.FormatUint(seq, 10)) {
		a.ackMu.Lock()
		delete(a.unacked, seq)
		a.ackMu.Unlock()
	}
}

// ackMark starts an acknowledgement in the outbox (a publication starts
// with its retain flag, 0 or 1).
const ackMark = "A"

// acked sends the acknowledgement queued as s.
func (a *Adaptor) acked(s string) {
	seq, _ := strconv.ParseUint(s[len(ackMark):], 10, 64)
	a.ackMu.Lock()
	m := a.unacked[seq]
	delete(a.unacked, seq)
	a.ackMu.Unlock()
	if m != nil {
		m.Ack()
	}
}

// sender describes who published on topic: the first subscription filter
// it matches, and what the topic has at that filter's first "+" level ("7"
// for robot/7/asr under robot/+/asr).
func (a *Adaptor) sender(topic string) *topicConn {
	c := &topicConn{a: a, topic: topic}
	for i, f := range a.subscribe {
		if v, ok := Match(f, topic); ok {
			c.filter, c.value, c.plus = f, v, a.plus[i]
			break
		}
	}
	return c
}

// Match reports whether topic matches filter, and what the topic has at
// the filter's first "+" level. It walks both level by level, without
// splitting them: it runs on every publication.
func Match(filter, topic string) (string, bool) {
	value, plus := "", false
	for {
		f, frest, fmore := strings.Cut(filter, "/")
		if f == "#" {
			return value, true
		}
		t, trest, tmore := strings.Cut(topic, "/")
		switch {
		case f == "+":
			if !plus {
				value, plus = t, true
			}
		case f != t:
			return "", false
		}
		if fmore && tmore {
			filter, topic = frest, trest
			continue
		}
		// One ended: they match if both did, or if all the filter has
		// left is "#" ("robot/#" matches "robot").
		if fmore && frest == "#" || !fmore && !tmore {
			return value, true
		}
		return "", false
	}
}

// hasPlus reports whether a topic pattern has a "+" level.
func hasPlus(pattern string) bool {
	for l := range strings.SplitSeq(pattern, "/") {
		if l == "+" {
			return true
		}
	}
	return false
}

// Fill puts value into the first "+" level of a topic pattern.
func Fill(pattern, value string) string {
	levels := strings.Split(pattern, "/")
	for i, l := range levels {
		if l == "+" {
			levels[i] = value
			break
		}
	}
	return strings.Join(levels, "/")
}

// Send publishes text to the publish topic.
func (a *Adaptor) Send(text string) error { return a.SendTopic("", text, false) }

// SendTopic publishes text to a topic, or to the publish topic when topic
// is empty. It never waits for the broker: the publication is queued for
// the writer. While the broker takes nothing for the stall time with more
// than the queue bound waiting (it hangs, or the connection is down),
// publications are refused: the first refusal is logged and counted as
// slow_peer, and the return to normal logged with how many were refused.
func (a *Adaptor) SendTopic(topic, text string, retain bool) error {
	if topic == "" {
		topic = a.publish
	}
	switch {
	case topic == "":
		return errors.New("no publish topic: give the adaptor publish=, or the message a topic=")
	case strings.ContainsAny(topic, "+#"):
		return fmt.Errorf("topic %q has a wildcard: only a reply (in a topic session, or seat.reply) fills its +", topic)
	}
	if a.out.Put(pack(topic, text, retain)) {
		return nil
	}
	select {
	case <-a.drain:
		return adaptors.ErrNotConnected
	default:
	}
	a.dropped.Add(1)
	if !a.refusing.Swap(true) {
		a.stats.SlowPeer.Add(1)
		a.log.Error("the broker is not taking publications; refusing them until it does",
			zap.String("broker", a.broker), zap.Int("queue_bytes", a.out.Max()), zap.Bool("connected", a.stats.Open.Load() == 1))
	}
	return errBrokerStalled
}

var errBrokerStalled = errors.New("the broker is not taking publications (output queue full)")

// pack puts a publication into one string for the outbox: the retain
// flag, the topic, NUL (which no topic holds), the payload.
func pack(topic, text string, retain bool) string {
	flag := "0"
	if retain {
		flag = "1"
	}
	return flag + topic + "\x00" + text
}

func unpack(s string) (topic, text string, retain bool) {
	topic, text, _ = strings.Cut(s[1:], "\x00")
	return topic, text, s[0] == '1'
}

// write hands the queued publications to Paho, in order, while the broker
// is connected; Paho's Publish may block (up to the keep-alive) while the
// broker does not read, and only this goroutine waits. It ends when Close
// asks, after handing over what is queued.
func (a *Adaptor) write(c paho.Client) {
	defer close(a.written)
	var batch []string
	var tracked []pending
	for {
		closing := false
		select {
		case <-a.out.Wait():
		case <-a.up:
		case <-a.drain:
			closing = true
		}
		for !closing && !c.IsConnectionOpen() { // keep them until the broker is back
			select {
			case <-a.up:
			case <-a.drain:
				closing = true
			}
		}
		batch = a.out.Take(batch)
		if len(batch) > 0 && a.refusing.Swap(false) {
			a.log.Info("the broker takes publications again", zap.String("broker", a.broker), zap.Int64("refused", a.dropped.Swap(0)))
		}
		for i, p := range batch {
			if strings.HasPrefix(p, ackMark) {
				a.acked(p)
				batch[i] = ""
				continue
			}
			topic, text, retain := unpack(p)
			tok := c.Publish(topic, a.qos, retain, text)
			batch[i] = ""
			if a.qos > 0 || tok.Error() != nil {
				tracked = a.track(append(tracked, pending{tok, topic}))
			}
		}
		if closing {
			return
		}
	}
}

// pending is a publication handed to Paho, to be logged if it fails.
type pending struct {
	tok   paho.Token
	topic string
}

// track logs the publications that the broker refused or that failed,
// and returns those still under way (the oldest forgotten past
// maxTracked).
func (a *Adaptor) track(ps []pending) []pending {
	kept := ps[:0]
	for _, p := range ps {
		select {
		case <-p.tok.Done():
			if err := p.tok.Error(); err != nil {
				a.log.Warn("publication failed", zap.String("topic", p.topic), zap.Error(err))
			}
		default:
			kept = append(kept, p)
		}
	}
	if n := len(kept) - maxTracked; n > 0 {
		kept = append(kept[:0], kept[n:]...)
	}
	clear(ps[len(kept):])
	return kept
}

// dial opens the connection to the broker. Every write on it has the
// keep-alive as its deadline: Paho writes its pings on the same
// connection, so a broker that stopped reading would otherwise hold the
// ping that should tell it is gone.
func (a *Adaptor) dial(u *url.URL, o paho.ClientOptions) (net.Conn, error) {
	d := net.Dialer{Timeout: o.ConnectTimeout}
	conn, err := d.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "ssl" {
		tc := tls.Client(conn, o.TLSConfig)
		_ = tc.SetDeadline(time.Now().Add(o.ConnectTimeout))
		if err := tc.Handshake(); err != nil {
			conn.Close()
			return nil, err
		}
		_ = tc.SetDeadline(time.Time{})
		conn = tc
	}
	return &deadlineConn{Conn: conn, limit: a.keep, eof: make(chan struct{})}, nil
}

// deadlineConn is a connection whose writes fail when the peer has not
// taken them within limit, and whose Close lets the broker read what was
// written last.
type deadlineConn struct {
	net.Conn
	limit time.Duration
	eof   chan struct{} // closed when a read meets the end of the stream
	once  sync.Once
}

// closeLinger bounds how long Close waits for the broker to end its side.
const closeLinger = 500 * time.Millisecond

func (c *deadlineConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.once.Do(func() { close(c.eof) })
	}
	return n, err
}

// Close ends the writing side first and waits until the broker has closed
// its own (it read everything, the DISCONNECT last). Closing at once,
// with the broker's publications still unread, resets the connection, and
// the broker may lose the last acknowledgements: it would then send those
// messages again to the next seat.
func (c *deadlineConn) Close() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		select {
		case <-c.eof:
		case <-time.After(closeLinger):
		}
	}
	return c.Conn.Close()
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.limit)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// Close disconnects from the broker (the will is not published: this is
// a clean stop) and waits for the adaptor's goroutines.
func (a *Adaptor) Close() error {
	a.closeOnce.Do(a.close)
	return nil
}

func (a *Adaptor) close() {
	a.mu.Lock()
	c := a.client
	a.client = nil
	a.mu.Unlock()
	if a.cancel != nil {
		a.cancel() // what the deliverer has not given to the behavior stays unacknowledged
		<-a.delivered
	}
	a.out.Close()
	close(a.drain)
	if c != nil {
		select {
		case <-a.written:
		case <-time.After(closeWait):
			a.log.Warn("the broker did not take the last publications in time; stopping without them", zap.String("broker", a.broker))
		}
		if a.willTopic != "" {
			// Publish itself may wait for a broker that does not read.
			sent := make(chan struct{})
			go func() {
				c.Publish(a.willTopic, 1, true, "offline").WaitTimeout(time.Second)
				close(sent)
			}()
			select {
			case <-sent:
			case <-time.After(time.Second):
			}
		}
		c.Disconnect(250)
	}
	a.stats.Open.Store(0)
	a.wg.Wait()
}

// topicConn is where a publication came from: a reply goes to the
// publish topic with the sender's "+" value filled in (robot/+/say
// answers robot 7 on robot/7/say), else to the publish topic.
type topicConn struct {
	a      *Adaptor
	topic  string
	filter string // the subscription it matched
	value  string // at the filter's first "+"
	plus   bool   // the filter has a "+": the value names a sender
}

func (c *topicConn) Send(text string) error { return c.SendTopic("", text, false) }

// SendTopic publishes to topic (the publish topic if empty) with this
// sender's value in its "+": robot/+/gesture is robot 7's
// robot/7/gesture.
func (c *topicConn) SendTopic(topic, text string, retain bool) error {
	if topic == "" {
		topic = c.a.publish
	}
	if topic == "" {
		return errors.New("no publish topic to reply on: give the adaptor publish=")
	}
	if !c.plus && hasPlus(topic) {
		return fmt.Errorf("no sender to reply to: %s came through %q, a filter without \"+\", so nothing fills the + of %s", c.topic, c.filter, topic)
	}
	return c.a.SendTopic(Fill(topic, c.value), text, retain)
}

func (c *topicConn) String() string { return c.a.name + " " + c.topic }

// SessionKey is the sender's session in a topic session host: the filter
// matched and its "+" value, so robot 7 and kiosk 7 are two sessions.
// A publication through a filter without "+" has none: it is input to
// every session (adaptors.SessionKeyed).
func (c *topicConn) SessionKey() string {
	if !c.plus {
		return ""
	}
	return c.filter + "\x00" + c.value
}

// Peer is the "+" value of the topic (a robot's id), or the topic.
func (c *topicConn) Peer() string {
	if c.value != "" {
		return c.value
	}
	return c.topic
}

// Keep serves the next version of the behavior after a reload, with its
// broker connection and subscriptions (adaptors.Keeper).
func (a *Adaptor) Keep(adaptors.Config) {}
