// Package speechtest is Debian's speech engines for tests: what they need
// installed, the WAV files they write, and their processes.
package speechtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Packages are Debian's packages the speech tests need (the voice is in
// Debian's contrib section; .ci/run enables it for that one install).
const Packages = "open-jtalk open-jtalk-mecab-naist-jdic hts-voice-nitech-jp-atr503-m001 espeak-ng sox"

// Require skips a test when one of the programs is not installed, or
// fails it when CI=true or SEAT_REQUIRE_TOOLS=1.
func Require(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" || os.Getenv("SEAT_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s is not installed, and CI or SEAT_REQUIRE_TOOLS requires it (apt-get install %s)", p, Packages)
			}
			t.Skipf("%s is not installed; install Debian's %s", p, Packages)
		}
	}
}

// WAV is a PCM WAV file's format and samples.
type WAV struct {
	Rate, Channels, Bits int
	Data                 []byte
}

// ReadWAV reads a PCM WAV file.
func ReadWAV(path string) (*WAV, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, fmt.Errorf("%s: not a WAV file", path)
	}
	w := &WAV{}
	for p := 12; p+8 <= len(b); {
		id, n := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(p+8+n, len(b))]
		switch id {
		case "fmt ":
			if len(body) < 16 || binary.LittleEndian.Uint16(body) != 1 {
				return nil, fmt.Errorf("%s: not PCM", path)
			}
			w.Channels = int(binary.LittleEndian.Uint16(body[2:]))
			w.Rate = int(binary.LittleEndian.Uint32(body[4:]))
			w.Bits = int(binary.LittleEndian.Uint16(body[14:]))
		case "data":
			w.Data = body
		}
		p += 8 + n + n%2
	}
	if w.Rate == 0 || w.Bits != 16 || w.Channels == 0 {
		return nil, fmt.Errorf("%s: want 16-bit PCM, have %d bits at %d Hz", path, w.Bits, w.Rate)
	}
	if w.Data == nil {
		return nil, errors.New(path + ": no data")
	}
	return w, nil
}

// Duration is how long the sound lasts.
func (w *WAV) Duration() time.Duration {
	frames := len(w.Data) / (2 * w.Channels)
	return time.Duration(frames) * time.Second / time.Duration(w.Rate)
}

// RMS is the samples' root mean square, 1 for full scale.
func (w *WAV) RMS() float64 {
	var sum float64
	n := len(w.Data) / 2
	for i := 0; i < n; i++ {
		v := float64(int16(binary.LittleEndian.Uint16(w.Data[2*i:]))) / 32768
		sum += v * v
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(sum / float64(n))
}

// Speech says whether the file holds sound, not silence: an RMS level
// above -40 dB of full scale.
func (w *WAV) Speech() bool { return w.RMS() > 0.01 }

// Child is the process id of a running child of this process whose
// command name is name, or 0.
func Child(t testing.TB, name string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) > 1 && s[open+1:end] == name && f[1] == strconv.Itoa(self) {
			return pid
		}
	}
	return 0
}
