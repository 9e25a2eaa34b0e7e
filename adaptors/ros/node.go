package ros

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/apimaster"
	"github.com/bluenviron/goroslib/v2/pkg/apislave"
	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
)

// A behavior is one ROS node, named general@name, shared by its ROS
// adaptors: each adaptor is a user of the node and makes its own
// registrations (a publisher, a subscriber…) on it. The node connects in
// the background with back-off when the master is not there, and when the
// master restarts (it no longer knows the node) it is made again and its
// users register again.

// user is an adaptor of a node.
type user interface {
	// attach makes the user's registrations on a node just made.
	attach(n *goroslib.Node) error
	// detach closes them, before the node is closed or made again.
	detach()
}

// node is a behavior's ROS node on one master.
type node struct {
	key          string
	name, master string
	log          *zap.Logger
	// refs counts the users that joined and have not left; nodesMu guards
	// it, so that the map knows when a node ends without waiting for mu,
	// which a connect to a master that does not answer holds for seconds.
	refs int

	mu    sync.Mutex
	n     *goroslib.Node // nil while not connected
	users []user
	// failing is set while the master cannot be reached, so that an
	// outage is logged once.
	failing bool
	// uri is the node's own address as the master first gave it; another
	// one under the same name is another node that took it (and the
	// master shut this one down). taken is set once that is logged.
	uri   string
	taken bool

	// every is how often the master is asked; from checkEvery.
	every  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
	// checked holds the publishers whose type has been looked at, by
	// "topic node"; uris the publishers' slave API URLs, by node (the
	// watch's own).
	checked map[string]bool
	uris    map[string]string
}

var (
	nodesMu sync.Mutex
	nodes   = map[string]*node{}
)

// checkEvery is how often a node asks the master whether it still knows
// it (tests shorten it before opening adaptors).
var checkEvery = time.Second

// The delays between attempts to reach a master that does not answer.
const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
)

// nodeName is the node name of a behavior: its name in the characters ROS
// allows, with rospy's suffix (_PID_MILLISECONDS) when anonymous, so that
// two runs of one behavior do not shut each other down.
func nodeName(behavior string, anonymous bool) string {
	n := rosName(behavior)
	if anonymous {
		n = fmt.Sprintf("%s_%d_%d", n, os.Getpid(), processStart.UnixMilli())
	}
	return n
}

var processStart = time.Now()

// join makes u a user of the node of name on master, making the node
// when u is its first user. It returns once u is registered, or, when the
// master cannot be reached yet, at once: the node keeps trying. nodesMu
// is never held while waiting for a node's mu: a master that does not
// answer delays the behaviors that use it, not the others.
func join(name, master string, log *zap.Logger, u user) *node {
	key := name + " " + master
	nodesMu.Lock()
	nd := nodes[key]
	made := nd == nil
	if made {
		ctx, cancel := context.WithCancel(context.Background())
		nd = &node{key: key, name: name, master: master, log: log, every: checkEvery, cancel: cancel, done: make(chan struct{})}
		nodes[key] = nd
		nd.mu.Lock() // before the watch, which would connect too
		go nd.watch(ctx)
	}
	nd.refs++
	nodesMu.Unlock()
	if made {
		defer nd.mu.Unlock()
		nd.users = append(nd.users, u)
		nd.connect()
		return nd
	}
	nd.mu.Lock()
	defer nd.mu.Unlock()
	nd.users = append(nd.users, u)
	if nd.n != nil {
		if err := u.attach(nd.n); err != nil {
			// A registration the master refused: made again at the next
			// check, with the others.
			nd.log.Warn("ROS registration failed; retrying", zap.String("node", nd.name), zap.Error(err))
			nd.reset()
		}
	}
	return nd
}

// leave ends u's use of the node: its registrations are closed, and the
// node with its last user.
func (nd *node) leave(u user) {
	nd.mu.Lock()
	i := slices.Index(nd.users, u)
	if i < 0 {
		nd.mu.Unlock()
		return
	}
	nd.users = slices.Delete(nd.users, i, i+1)
	if nd.n != nil {
		u.detach()
	}
	nd.mu.Unlock()
	nodesMu.Lock()
	nd.refs--
	last := nd.refs == 0
	if last && nodes[nd.key] == nd {
		delete(nodes, nd.key)
	}
	nodesMu.Unlock()
	if !last {
		return
	}
	nd.cancel()
	<-nd.done
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.n != nil {
		nd.n.Close()
		nd.n = nil
	}
}

// connect makes the node and registers every user; nd.mu is held. It
// logs a master out of reach once per outage.
func (nd *node) connect() bool {
	n, err := goroslib.NewNode(goroslib.NodeConf{Name: nd.name, MasterAddress: nd.master, Host: "127.0.0.1",
		// goroslib's own messages go to seat's log, not to the console.
		LogDestinations: goroslib.LogDestinationCallback,
		OnLog: func(level goroslib.LogLevel, msg string) {
			// "… got an error: EOF" is a peer that closed its connection:
			// a rostopic pub -1 that is done, a node that stopped.
			if level >= goroslib.LogLevelWarn && !strings.HasSuffix(msg, ": EOF") {
				nd.log.Warn("ROS: "+msg, zap.String("node", nd.name))
			} else {
				nd.log.Debug("ROS: "+msg, zap.String("node", nd.name))
			}
		}})
	if err == nil {
		nd.n = n
		for i, u := range nd.users {
			if err = u.attach(n); err != nil {
				for _, v := range nd.users[:i] {
					v.detach()
				}
				n.Close()
				nd.n = nil
				break
			}
		}
	}
	if err != nil {
		if !nd.failing {
			nd.failing = true
			nd.log.Warn("ROS master not reachable; retrying in the background", zap.String("master", nd.master), zap.String("node", nd.name), zap.Error(err))
		}
		return false
	}
	if nd.failing {
		nd.failing = false
		nd.log.Info("connected to the ROS master", zap.String("master", nd.master), zap.String("node", nd.name))
	}
	return true
}

// reset closes the node and its users' registrations; nd.mu is held.
func (nd *node) reset() {
	if nd.n == nil {
		return
	}
	for _, u := range nd.users {
		u.detach()
	}
	nd.n.Close()
	nd.n = nil
	nd.uri, nd.taken = "", false
}

// watch keeps the node registered until ctx ends: it connects with
// back-off while the master cannot be reached, and asks the master every
// checkEvery whether it still knows the node. A master that was
// restarted does not: the node is made again, and its users register
// again.
func (nd *node) watch(ctx context.Context) {
	defer close(nd.done)
	master := apimaster.NewClient(nd.master, "/"+nd.name+"_watch", &http.Client{Timeout: 2 * time.Second})
	wait := backoffMin
	for {
		nd.mu.Lock()
		connected := nd.n != nil
		nd.mu.Unlock()
		delay := nd.every
		if !connected {
			delay = wait
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		nd.mu.Lock()
		if nd.n == nil {
			if nd.connect() {
				wait = backoffMin
			} else {
				wait = min(2*wait, backoffMax)
			}
			nd.mu.Unlock()
			continue
		}
		nd.mu.Unlock()
		uri, err := master.LookupNode("/" + nd.name)
		switch {
		case err == nil:
			nd.checkPublishers(master)
			nd.mu.Lock()
			switch {
			case nd.uri == "":
				nd.uri = uri
			case uri != nd.uri && !nd.taken:
				nd.taken = true
				nd.log.Error("another ROS node took this node's name, and the master shut this one down: what the behavior publishes goes nowhere (a second run of the behavior? give it <general anonymous=\"1\">)",
					zap.String("node", nd.name), zap.String("master", nd.master), zap.String("other", uri))
			}
			if nd.failing {
				nd.failing = false
				nd.log.Info("the ROS master answers again", zap.String("master", nd.master), zap.String("node", nd.name))
			}
			nd.mu.Unlock()
		case strings.Contains(err.Error(), "(code -1)"): // rosmaster: "unknown node"
			// The master answers but does not know the node: restarted.
			nd.mu.Lock()
			nd.log.Warn("the ROS master no longer knows this node (restarted?); registering again", zap.String("master", nd.master), zap.String("node", nd.name))
			nd.reset()
			nd.failing = false
			nd.connect()
			nd.mu.Unlock()
		default:
			nd.mu.Lock()
			if !nd.failing {
				nd.failing = true
				nd.log.Warn("the ROS master does not answer; waiting for it", zap.String("master", nd.master), zap.String("node", nd.name), zap.Error(err))
			}
			nd.mu.Unlock()
		}
	}
}

// endpoint is what every ROS adaptor has: its name in the behavior, what
// it is called on the ROS graph (a topic, service or action; by eSEAT's
// convention the adaptor's name unless an attribute says otherwise), its
// master, and the behavior's node.
type endpoint struct {
	name, remote string
	master       string
	nodeName     string
	log          *zap.Logger
	nodeLog      *zap.Logger // the behavior's: the node is every adaptor's
	node         *node
	stats        *adaptors.Counters
}

// newEndpoint reads an adaptor's endpoint: remoteAttr names the attribute
// that overrides the adaptor's name on the graph.
func newEndpoint(cfg adaptors.Config, remoteAttr string) (endpoint, error) {
	master, err := MasterAddress(cfg.Attrs)
	if err != nil {
		return endpoint{}, err
	}
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	remote := cfg.Attrs[remoteAttr]
	if remote == "" {
		remote = cfg.Name
	}
	nodeLog := cfg.BehaviorLog
	if nodeLog == nil {
		nodeLog = log
	}
	return endpoint{name: cfg.Name, remote: remote, master: master, nodeName: nodeName(cfg.Behavior, cfg.Anonymous), log: log, nodeLog: nodeLog, stats: &adaptors.Counters{}}, nil
}

func (e *endpoint) Name() string { return e.name }

// registered logs, at info, that the adaptor's end on the ROS graph is
// there (again, after the master restarted): what it is ("publisher"),
// on which kind of name ("topic") and of which type.
func (e *endpoint) registered(what, kind, typ string) {
	e.log.Info("ROS "+what+" registered", zap.String(kind, e.remote), zap.String("type", typ), zap.String("node", "/"+e.nodeName))
}

// Keep lets a reload hand the open adaptor to the new version of its
// behavior when it declares it the same: opening a second one beside it
// would register the same topic, service or action twice on the one node.
func (e *endpoint) Keep(adaptors.Config) {}

// Stats reports the peers the adaptor refused (seat ctl status).
func (e *endpoint) Stats() adaptors.Stats { return e.stats.Snapshot() }

// checkPublishers looks at the publishers the master lists for the
// topics the node subscribes to. Each subscriber is handed the list: it
// connects to the new publishers and drops the gone. A publisher of
// another message type refuses the subscription (rospy says so on the
// connection, goroslib does not), so it is logged once and counted
// (wrong_type in seat ctl status). Each publisher's type is looked at
// once.
func (nd *node) checkPublishers(master *apimaster.Client) {
	nd.mu.Lock()
	var list []*topic
	subs := map[string]*topic{}
	for _, u := range nd.users {
		if t, ok := u.(*topic); ok && !t.pub {
			list = append(list, t)
			if subs[absolute(t.remote)] == nil {
				subs[absolute(t.remote)] = t
			}
		}
	}
	nd.mu.Unlock()
	if len(list) == 0 {
		return
	}
	state, err := master.GetSystemState()
	if err != nil {
		return
	}
	if nd.checked == nil {
		nd.checked, nd.uris = map[string]bool{}, map[string]string{}
	}
	published := map[string][]string{}
	for _, e := range state.PublishedTopics {
		published[e.Name] = e.Nodes
	}
	for _, t := range list {
		var urls []string
		for _, peer := range published[absolute(t.remote)] {
			uri := nd.uris[peer]
			if uri == "" || !t.reached(uri) { // new, or perhaps made again elsewhere
				if uri, err = master.LookupNode(peer); err != nil {
					continue // gone already
				}
				nd.uris[peer] = uri
			}
			urls = append(urls, uri)
		}
		t.publishers(urls)
	}
	for _, e := range state.PublishedTopics {
		t := subs[e.Name]
		if t == nil {
			continue
		}
		for _, peer := range e.Nodes {
			key := e.Name + " " + peer
			if peer == "/"+nd.name || nd.checked[key] {
				continue
			}
			uri, err := master.LookupNode(peer)
			if err != nil {
				continue // gone already
			}
			u, err := url.Parse(uri)
			if err != nil {
				continue
			}
			pubs, err := apislave.NewClient(u.Host, "/"+nd.name, &http.Client{Timeout: 2 * time.Second}).GetPublications()
			if err != nil {
				continue // looked at again next time
			}
			nd.checked[key] = true
			for _, p := range pubs {
				if len(p) == 2 && p[0] == e.Name && p[1] != t.typ.Spec.FullName() {
					t.log.Warn("ROS publisher refused: it publishes another message type on the topic", zap.String("topic", e.Name),
						zap.String("publisher", peer), zap.String("type", p[1]), zap.String("want", t.typ.Spec.FullName()))
					t.stats.WrongType.Add(1)
				}
			}
		}
	}
}
