package wav

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// stream builds 16 kHz samples: a hum under tones and pauses.
type stream struct {
	b   []byte
	rng *rand.Rand
	hum float64
}

func (s *stream) add(d time.Duration, amp float64) {
	n := int(d.Seconds() * 16000)
	for i := range n {
		v := s.hum * (s.rng.Float64()*2 - 1)
		if amp > 0 {
			v += amp * math.Sin(2*math.Pi*220*float64(i)/16000)
		}
		s.b = binary.LittleEndian.AppendUint16(s.b, uint16(int16(v*32767)))
	}
}

// TestSegmenter: tones are utterances, cut at pauses as long as Pause
// and not at shorter ones; a click and a short knock are not; a hum
// under it all is the background, not speech.
func TestSegmenter(t *testing.T) {
	for _, hum := range []float64{0, 0.02} {
		s := &stream{rng: rand.New(rand.NewPCG(1, 2)), hum: hum}
		s.add(time.Second, 0)
		s.add(30*time.Millisecond, 0.5) // a click
		s.add(500*time.Millisecond, 0)
		s.add(100*time.Millisecond, 0.5) // a knock: a start, too short to hear
		s.add(time.Second, 0)
		s.add(400*time.Millisecond, 0.3) // "hello ..."
		s.add(200*time.Millisecond, 0)   // a pause within the utterance
		s.add(300*time.Millisecond, 0.3) // "... there"
		s.add(time.Second, 0)
		s.add(600*time.Millisecond, 0.3) // a second utterance, at the stream's end
		var starts int
		var utts [][]byte
		seg := &Segmenter{Rate: 16000, Pause: 400 * time.Millisecond,
			Start:     func() { starts++ },
			Utterance: func(b []byte) { utts = append(utts, append([]byte(nil), b...)) }}
		// Written in pieces that do not fall on frames.
		for r := bytes.NewReader(s.b); ; {
			p := make([]byte, 333)
			n, err := r.Read(p)
			seg.Write(p[:n])
			if err == io.EOF {
				break
			}
		}
		seg.Flush()
		if starts != 3 || len(utts) != 2 {
			t.Fatalf("hum %v: %d starts, %d utterances; want 3 and 2", hum, starts, len(utts))
		}
		// The first: 300 ms before it, its 900 ms, the 400 ms pause
		// that ended it, give or take the frames that start it.
		got := time.Duration(len(utts[0])/2) * time.Second / 16000
		if got < 1500*time.Millisecond || got > 1700*time.Millisecond {
			t.Errorf("hum %v: the first utterance lasts %v, want about 1.6 s", hum, got)
		}
	}
}

// TestStreamFormat: a WAV stream's header gives its format and is not
// read as samples; raw samples are read from their first byte.
func TestStreamFormat(t *testing.T) {
	dir := t.TempDir()
	samples := []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0}
	Write(dir+"/a.wav", 22050, 2, samples)
	for _, c := range []struct {
		in             []byte
		rate, channels int
		want           []byte
	}{
		{mustRead(t, dir+"/a.wav"), 22050, 2, samples},
		{samples, 0, 0, samples},
		{samples[:4], 0, 0, samples[:4]},
	} {
		rate, ch, r, err := StreamFormat(bytes.NewReader(c.in))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r)
		if rate != c.rate || ch != c.channels || !bytes.Equal(got, c.want) {
			t.Errorf("%d Hz, %d channels, %v; want %d, %d, %v", rate, ch, got, c.rate, c.channels, c.want)
		}
	}
	if _, _, _, err := StreamFormat(bytes.NewReader([]byte("RIFF\x00\x00\x00\x00WAVEfmt "))); err == nil {
		t.Error("a header cut short was read")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	w, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("RIFF\xff\xff\xff\xffWAVE")
	f := make([]byte, 16)
	binary.LittleEndian.PutUint16(f, 1)
	binary.LittleEndian.PutUint16(f[2:], uint16(w.Channels))
	binary.LittleEndian.PutUint32(f[4:], uint32(w.Rate))
	binary.LittleEndian.PutUint16(f[14:], 16)
	b.WriteString("fmt \x10\x00\x00\x00")
	b.Write(f)
	b.WriteString("data\xff\xff\xff\xff") // a stream's header: its size unknown
	b.Write(w.Data)
	return b.Bytes()
}
