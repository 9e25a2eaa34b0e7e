package hal

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrReadOnly is returned when a user writes a Device/ key: only the engine
// writes those.
var ErrReadOnly = errors.New("Device/ keys are written by the device layer only")

// MemEvent is a memory change delivered to a subscriber.
type MemEvent struct {
	Key   string
	Value any
	At    time.Duration
}

// Text formats the event's value as behaviors see it: numbers as Lua
// prints them, booleans as true/false, lists as JSON.
func (e MemEvent) Text() string { return FormatValue(e.Value) }

// FormatValue formats a memory value as text.
func FormatValue(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', 14, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	case nil:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

type entry struct {
	v  any
	at time.Duration
}

// Memory is the key store of docs/devices.md §2: values with the engine time
// of their last update, and prefix subscriptions that never block a writer.
type Memory struct {
	mu   sync.RWMutex
	m    map[string]*entry // pointers stay valid: the engine keeps its own
	subs []*Subscription
	now  func() time.Duration
}

// NewMemory returns an empty memory on a clock.
func NewMemory(now func() time.Duration) *Memory {
	return &Memory{m: map[string]*entry{}, now: now}
}

// Get returns a key's value and the time of its last update.
func (m *Memory) Get(key string) (any, time.Duration, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.m[key]
	if !ok {
		return nil, 0, false
	}
	return e.v, e.at, true
}

// KeyValue is one entry of GetPrefix.
type KeyValue struct {
	Key   string
	Value any
	At    time.Duration
}

// GetPrefix returns every key starting with p, sorted.
func (m *Memory) GetPrefix(p string) []KeyValue {
	m.mu.RLock()
	var out []KeyValue
	for k, e := range m.m {
		if strings.HasPrefix(k, p) {
			out = append(out, KeyValue{Key: k, Value: e.v, At: e.at})
		}
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Set inserts a user value and raises an event, even when the value is
// unchanged. Device/ keys are refused.
func (m *Memory) Set(key string, v any) error {
	if strings.HasPrefix(key, "Device/") {
		return fmt.Errorf("set %q: %w", key, ErrReadOnly)
	}
	// The time is read before the memory's lock is taken: now is the
	// engine's, whose loop writes memory holding the engine's lock.
	at := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.store(key, v, at)
	m.publish(MemEvent{Key: key, Value: v, At: at})
	return nil
}

// write is the engine's store: it publishes only a change of value.
func (m *Memory) write(key string, v any, at time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.m[key]
	if ok && equalValues(old.v, v) {
		old.at = at
		return
	}
	m.store(key, v, at)
	m.publish(MemEvent{Key: key, Value: v, At: at})
}

// store sets a key's entry in place; the caller holds m.mu.
func (m *Memory) store(key string, v any, at time.Duration) {
	if e, ok := m.m[key]; ok {
		e.v, e.at = v, at
		return
	}
	m.m[key] = &entry{v: v, at: at}
}

// writeFloat is write for the engine's own float keys. *slot caches the
// key's entry after the first write, so that an unchanged value only
// updates its time, without a map lookup or boxing the float.
func (m *Memory) writeFloat(key string, slot **entry, v float64, at time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := *slot
	if e == nil {
		if e = m.m[key]; e == nil {
			e = &entry{}
			m.m[key] = e
		}
		*slot = e
	} else if old, ok := e.v.(float64); ok && old == v {
		e.at = at
		return
	}
	e.v, e.at = v, at
	m.publish(MemEvent{Key: key, Value: v, At: at})
}

func equalValues(a, b any) bool {
	switch a.(type) {
	case float64, int64, bool, string:
		return a == b
	case nil:
		return b == nil
	}
	return FormatValue(a) == FormatValue(b)
}

// publish delivers e to matching subscribers without blocking; the caller
// holds m.mu.
func (m *Memory) publish(e MemEvent) {
	for _, s := range m.subs {
		if !strings.HasPrefix(e.Key, s.prefix) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
		}
	}
}

// Subscription delivers the events of keys starting with a prefix.
type Subscription struct {
	prefix  string
	ch      chan MemEvent
	dropped atomic.Uint64
	mem     *Memory
}

// Subscribe returns a subscription with a buffer of buf events; when it is
// full, new events are dropped and counted.
func (m *Memory) Subscribe(prefix string, buf int) *Subscription {
	s := &Subscription{prefix: prefix, ch: make(chan MemEvent, max(buf, 1)), mem: m}
	m.mu.Lock()
	m.subs = append(m.subs, s)
	m.mu.Unlock()
	return s
}

// C is the channel of events; it is closed by Close.
func (s *Subscription) C() <-chan MemEvent { return s.ch }

// Prefix is the subscribed prefix.
func (s *Subscription) Prefix() string { return s.prefix }

// Dropped counts the events lost to a full buffer.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close ends the subscription; it never waits.
func (s *Subscription) Close() {
	m := s.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.subs {
		if x == s {
			m.subs = append(m.subs[:i], m.subs[i+1:]...)
			close(s.ch)
			return
		}
	}
}
