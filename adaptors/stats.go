package adaptors

import (
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"go.uber.org/zap"
)

// DefaultMaxConns bounds the connections a listening adaptor keeps open at
// once; more are refused (closed at once, or HTTP 503 for the web adaptor).
const DefaultMaxConns = 1024

// Stats counts an adaptor's connections and what it refused or repaired.
// Every refusal is also one log line naming the peer, written before the
// count moves, so whoever sees a count finds its line. Repairs are logged
// once per connection.
type Stats struct {
	// Open is the number of connections open now; Accepted counts every
	// connection ever accepted (a client adaptor: every connection made).
	Open     int64 `json:"open"`
	Accepted int64 `json:"accepted"`
	// Refused counts connections refused because Open was at the limit.
	Refused int64 `json:"refused,omitempty"`
	// LineTooLong counts lines (or WebSocket frames and POST bodies) over
	// the limit; each closed its connection (stdio skips the line). For a
	// ros_sub it counts messages over 16 MiB, skipped on a connection that
	// goes on (logged once per publisher).
	LineTooLong int64 `json:"line_too_long,omitempty"`
	// PartialLine counts connections that ended inside a line; the partial
	// line was dropped.
	PartialLine int64 `json:"partial_line,omitempty"`
	// Repaired counts events whose invalid UTF-8 or NUL bytes were replaced
	// by U+FFFD; the event was delivered.
	Repaired int64 `json:"repaired,omitempty"`
	// InvalidFrame counts WebSocket frames that were not a valid event and
	// were ignored.
	InvalidFrame int64 `json:"invalid_frame,omitempty"`
	// SlowPeer counts peers cut off because their output queue was full.
	SlowPeer int64 `json:"slow_peer,omitempty"`
	// EmptyLevel counts MQTT publications refused by a topic session host
	// because the "+" level naming their sender was empty (robot//asr).
	EmptyLevel int64 `json:"empty_level,omitempty"`
	// RetainedAgain counts retained MQTT messages not handled again: the
	// broker sent them after a reconnection, unchanged (retained="once").
	RetainedAgain int64 `json:"retained_again,omitempty"`
	// Dropped counts values lost on the way: MQTT QoS 0 publications
	// dropped because the behavior was too far behind (its inbox full);
	// OpenRTM values that did not go (a peer too slow or not answering),
	// that were not the port's type, or that arrived while the component
	// was inactive.
	Dropped int64 `json:"dropped,omitempty"`
	// WrongType counts peers refused because they have another type: a
	// ROS publisher of another message type on a subscriber's topic, a
	// ROS service client with another definition (MD5) of the service, an
	// OpenRTM peer port of another data type.
	WrongType int64 `json:"wrong_type,omitempty"`
}

// StatsReporter is implemented by adaptors that count their connections
// and rejections.
type StatsReporter interface {
	Stats() Stats
}

// ConnInfo is one connection of an adaptor, as seat ctl status lists it:
// its peer, how it is connected, and what went through it.
type ConnInfo struct {
	Peer   string `json:"peer"`
	Detail string `json:"detail,omitempty"`
	// Sent and Received count values; Dropped those that did not go
	// (a full queue, a peer's refusal); Failed the calls that failed.
	Sent     uint64 `json:"sent"`
	Received uint64 `json:"received"`
	Dropped  uint64 `json:"dropped,omitempty"`
	Failed   uint64 `json:"failed,omitempty"`
}

// ConnLister is implemented by adaptors whose connections seat ctl
// status lists one by one (an OpenRTM port's connectors).
type ConnLister interface {
	Connections() []ConnInfo
}

// Counters are the live counts behind Stats, safe for concurrent use.
type Counters struct {
	Open, Accepted, Refused, LineTooLong, PartialLine, Repaired, InvalidFrame, SlowPeer, EmptyLevel, RetainedAgain, Dropped, WrongType atomic.Int64
}

// Snapshot reads the counters.
func (c *Counters) Snapshot() Stats {
	return Stats{
		Open: c.Open.Load(), Accepted: c.Accepted.Load(), Refused: c.Refused.Load(),
		LineTooLong: c.LineTooLong.Load(), PartialLine: c.PartialLine.Load(), Repaired: c.Repaired.Load(),
		InvalidFrame: c.InvalidFrame.Load(), SlowPeer: c.SlowPeer.Load(), EmptyLevel: c.EmptyLevel.Load(),
		RetainedAgain: c.RetainedAgain.Load(), Dropped: c.Dropped.Load(), WrongType: c.WrongType.Load(),
	}
}

// NoteRepair counts an event whose invalid UTF-8 or NUL bytes were
// replaced. The first of a connection is logged with the peer: *logged is
// the connection's flag, set here; nil logs every one (a POST is its own
// connection).
func (c *Counters) NoteRepair(log *zap.Logger, peer string, logged *bool) {
	if logged == nil || !*logged {
		log.Warn("invalid UTF-8 or NUL bytes replaced by U+FFFD", zap.String("peer", peer))
		if logged != nil {
			*logged = true
		}
	}
	c.Repaired.Add(1)
}

// CleanText returns s with invalid UTF-8 and NUL bytes replaced by U+FFFD,
// and whether anything was replaced. Valid text is returned as is, without
// allocating.
func CleanText(s string) (string, bool) {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s, false
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD"), true
}
