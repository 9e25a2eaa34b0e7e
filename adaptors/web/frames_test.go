package web

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// clientFrame encodes a client's frame (masked) as a browser sends it.
func clientFrame(fin bool, op int, payload []byte) []byte {
	var b []byte
	first := byte(op)
	if fin {
		first |= 0x80
	}
	b = append(b, first)
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xffff:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	b = append(b, key[:]...)
	start := len(b)
	b = append(b, payload...)
	unmask(key, b[start:]) // masking is its own inverse
	return b
}

// hugeHeader is the header of a final text frame whose 64-bit length is
// n, masked with a zero key.
func hugeHeader(n uint64) []byte {
	return append(binary.BigEndian.AppendUint64([]byte{0x80 | opText, 0x80 | 127}, n), 0, 0, 0, 0)
}

// trickle is a reader that gives one byte per Read, as a slow network.
type trickle struct{ r io.Reader }

func (t trickle) Read(p []byte) (int, error) { return t.r.Read(p[:min(len(p), 1)]) }

func TestFrameReader(t *testing.T) {
	text := []byte(`{"type":"event","text":"こんにちは"}`)
	long := bytes.Repeat([]byte("長い"), 30000) // 180,000 bytes: a 64-bit length
	type msg struct {
		op   int
		data string
	}
	cases := []struct {
		name   string
		in     [][]byte
		max    int
		want   []msg
		pings  []string
		errIs  error
		errMsg string // a protocolError's words, or a peerClosed's code
	}{
		{name: "one text frame", in: [][]byte{clientFrame(true, opText, text)}, want: []msg{{opText, string(text)}}, errIs: io.EOF},
		{name: "16-bit length", in: [][]byte{clientFrame(true, opText, bytes.Repeat([]byte("x"), 300))}, want: []msg{{opText, strings.Repeat("x", 300)}}, errIs: io.EOF},
		{name: "64-bit length", in: [][]byte{clientFrame(true, opBinary, long)}, max: 200000, want: []msg{{opBinary, string(long)}}, errIs: io.EOF},
		{name: "fragments with a ping between", in: [][]byte{
			clientFrame(false, opText, text[:10]), clientFrame(true, opPing, []byte("p1")),
			clientFrame(false, opContinuation, text[10:20]), clientFrame(true, opContinuation, text[20:]),
		}, want: []msg{{opText, string(text)}}, pings: []string{"p1"}, errIs: io.EOF},
		{name: "a pong is ignored", in: [][]byte{clientFrame(true, opPong, nil), clientFrame(true, opText, text)}, want: []msg{{opText, string(text)}}, errIs: io.EOF},
		{name: "close with a code", in: [][]byte{clientFrame(true, opClose, websocket.FormatCloseMessage(websocket.CloseGoingAway, "bye"))}, errMsg: "1001"},
		{name: "close without a code", in: [][]byte{clientFrame(true, opClose, nil)}, errMsg: "1005"},
		{name: "too big", in: [][]byte{clientFrame(true, opText, bytes.Repeat([]byte("x"), 101))}, max: 100, errIs: errTooBig},
		{name: "too big in fragments", in: [][]byte{clientFrame(false, opText, bytes.Repeat([]byte("x"), 60)), clientFrame(true, opContinuation, bytes.Repeat([]byte("x"), 60))}, max: 100, errIs: errTooBig},
		{name: "unmasked", in: [][]byte{{0x81, 0x02, 'h', 'i'}}, errMsg: "must be masked"},
		{name: "reserved bits", in: [][]byte{append([]byte{0xc1}, clientFrame(true, opText, text)[1:]...)}, errMsg: "reserved bits"},
		{name: "unknown data opcode", in: [][]byte{clientFrame(true, 3, text)}, errMsg: "unknown opcode 3"},
		{name: "unknown control opcode", in: [][]byte{clientFrame(true, 11, nil)}, errMsg: "unknown opcode 11"},
		{name: "continuation first", in: [][]byte{clientFrame(true, opContinuation, text)}, errMsg: "no message to continue"},
		{name: "new message inside a fragmented one", in: [][]byte{clientFrame(false, opText, text), clientFrame(true, opText, text)}, errMsg: "before the last one's final frame"},
		{name: "fragmented control frame", in: [][]byte{clientFrame(false, opPing, nil)}, errMsg: "must be final"},
		{name: "long control frame", in: [][]byte{clientFrame(true, opPing, bytes.Repeat([]byte("x"), 126))}, errMsg: "at most 125 bytes"},
		{name: "one-byte close", in: [][]byte{clientFrame(true, opClose, []byte{3})}, errMsg: "one-byte payload"},
		{name: "close code 1005 sent", in: [][]byte{clientFrame(true, opClose, []byte{0x03, 0xed})}, errMsg: "close code 1005 may not be sent"},
		{name: "close reason not UTF-8", in: [][]byte{clientFrame(true, opClose, []byte{0x03, 0xe8, 0xff})}, errMsg: "not UTF-8"},
		// A length no int of 32 bits holds (GOARCH=386, arm) is too big
		// too, not cut to a small or negative int.
		{name: "64-bit length of 2 GiB", in: [][]byte{hugeHeader(1 << 31), text}, errIs: errTooBig},
		{name: "64-bit length of 4 GiB and 30 bytes", in: [][]byte{hugeHeader(1<<32 + 30), text}, errIs: errTooBig},
		{name: "64-bit length of 1 TiB", in: [][]byte{hugeHeader(1 << 40), text}, errIs: errTooBig},
		{name: "largest 64-bit length", in: [][]byte{hugeHeader(1<<63 - 1), text}, errIs: errTooBig},
		{name: "cut in the header", in: [][]byte{clientFrame(true, opText, text)[:4]}, errIs: io.ErrUnexpectedEOF},
		{name: "cut in the payload", in: [][]byte{clientFrame(true, opText, text)[:12]}, errIs: io.ErrUnexpectedEOF},
	}
	for _, tc := range cases {
		for _, slow := range []bool{false, true} {
			name := tc.name
			if slow {
				name += ", a byte at a time"
			}
			t.Run(name, func(t *testing.T) {
				var in io.Reader = bytes.NewReader(bytes.Join(tc.in, nil))
				if slow {
					in = trickle{in}
				}
				var pings []string
				max := tc.max
				if max == 0 {
					max = MaxFrame
				}
				r := newFrameReader(in, max, func(p []byte) { pings = append(pings, string(p)) })
				var got []msg
				var err error
				for {
					var op int
					var data []byte
					if op, data, err = r.next(); err != nil {
						break
					}
					got = append(got, msg{op, string(data)})
				}
				if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
					t.Errorf("messages %d, want %d (first equal: %v)", len(got), len(tc.want), len(got) > 0 && len(tc.want) > 0 && got[0] == tc.want[0])
				}
				if strings.Join(pings, ",") != strings.Join(tc.pings, ",") {
					t.Errorf("pings %q, want %q", pings, tc.pings)
				}
				var pe protocolError
				var pc *peerClosed
				switch {
				case tc.errIs != nil:
					if !errors.Is(err, tc.errIs) {
						t.Errorf("error %v, want %v", err, tc.errIs)
					}
				case errors.As(err, &pc):
					if !strings.Contains(pc.Error(), tc.errMsg) {
						t.Errorf("close %v, want code %s", pc, tc.errMsg)
					}
				case errors.As(err, &pe):
					if !strings.Contains(string(pe), tc.errMsg) {
						t.Errorf("protocol error %q, want %q", pe, tc.errMsg)
					}
				default:
					t.Errorf("error %v, want %q", err, tc.errMsg)
				}
			})
		}
	}
}

func TestFrameReaderReady(t *testing.T) {
	text := clientFrame(true, opText, []byte(`{"type":"event","text":"ping"}`))
	two := append(append([]byte{}, text...), text...)
	for _, tc := range []struct {
		name string
		in   []byte
		want bool // after the first message was read
	}{
		{"a whole second frame", two, true},
		{"half a second frame", two[:len(text)+len(text)/2], false},
		{"nothing more", text, false},
		{"a fragment", append(append([]byte{}, text...), clientFrame(false, opText, []byte("x"))...), false},
		{"a ping", append(append([]byte{}, text...), clientFrame(true, opPing, nil)...), false},
		{"a frame of 4 GiB and 30 bytes", append(append(append([]byte{}, text...), hugeHeader(1<<32+30)...), text...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFrameReader(bytes.NewReader(tc.in), MaxFrame, func([]byte) {})
			if _, _, err := r.next(); err != nil {
				t.Fatal(err)
			}
			if got := r.ready(); got != tc.want {
				t.Errorf("ready %v, want %v", got, tc.want)
			}
		})
	}
}

// messageJSON is what encoding/json writes for a message frame.
func messageJSON(t testing.TB, name, text string) string {
	b, err := json.Marshal(frame{Type: "message", Adaptor: name, Text: str(text)})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// payloadOf strips a server frame's header, checking it.
func payloadOf(t testing.TB, f string) string {
	h := []byte(f)
	if h[0] != 0x81 || h[1]&0x80 != 0 {
		t.Fatalf("header % x: want a final text frame, not masked", h[:2])
	}
	n, off := int(h[1]), 2
	switch n {
	case 126:
		n, off = int(binary.BigEndian.Uint16(h[2:])), 4
	case 127:
		n, off = int(binary.BigEndian.Uint64(h[2:])), 10
	}
	if off+n != len(f) {
		t.Fatalf("length %d in the header, %d in the frame", n, len(f)-off)
	}
	return f[off:]
}

func TestMessageFrameIsJSONs(t *testing.T) {
	a := &Adaptor{name: "web"}
	for _, text := range []string{
		"", "pong", "こんにちは、受付です", `"quoted" \ back`, "<b>&amp;</b>", "tab\tnew\nline\rcr\bbs\ff",
		"\x00\x01\x1f\x7f", "bad \xff\xfe utf-8 \xe3\x81", "line\u2028para\u2029", "emoji 🤖", strings.Repeat("ロボット", 100),
		strings.Repeat("x", 70000),
	} {
		if got, want := payloadOf(t, a.messageFrame(text)), messageJSON(t, "web", text); got != want {
			t.Errorf("%q:\n got %s\nwant %s", text, got, want)
		}
	}
	b := &Adaptor{name: "画面<1>"}
	if got, want := payloadOf(t, b.messageFrame("x")), messageJSON(t, "画面<1>", "x"); got != want {
		t.Errorf("adaptor name: got %s, want %s", got, want)
	}
}

// FuzzMessageFrame: the hand-written message frame is encoding/json's.
func FuzzMessageFrame(f *testing.F) {
	for _, s := range []string{"pong", "受付", "<&>", "\u2028\xff\"\\\n"} {
		f.Add(s)
	}
	a := &Adaptor{name: "web"}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := payloadOf(t, a.messageFrame(text)), messageJSON(t, "web", text); got != want {
			t.Fatalf("%q:\n got %s\nwant %s", text, got, want)
		}
	})
}

// FuzzFrameReader: any bytes give messages within the limit, then an
// error; never a panic.
func FuzzFrameReader(f *testing.F) {
	f.Add(clientFrame(true, opText, []byte(`{"type":"event","text":"ping"}`)))
	f.Add(append(clientFrame(false, opText, []byte("ab")), clientFrame(true, opContinuation, []byte("cd"))...))
	f.Add(clientFrame(true, opClose, []byte{3, 0xe8}))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newFrameReader(bytes.NewReader(in), 1024, func(p []byte) {
			if len(p) > maxControl {
				t.Fatalf("ping of %d bytes", len(p))
			}
		})
		for range len(in) + 1 {
			op, data, err := r.next()
			if err != nil {
				return
			}
			if op != opText && op != opBinary || len(data) > 1024 {
				t.Fatalf("message op %d, %d bytes", op, len(data))
			}
		}
		t.Fatal("more messages than bytes")
	})
}
