// Package wav reads 16-bit PCM WAV files: their format, their samples,
// and where in them there is sound.
package wav

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// File is a 16-bit PCM WAV file's format and samples.
type File struct {
	Rate, Channels int
	Data           []byte // little-endian 16-bit samples, channels interleaved
}

// Read reads a 16-bit PCM WAV file.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, errors.New("not a WAV file")
	}
	w := &File{}
	bits := 0
	for p := 12; p+8 <= len(b); {
		id, n := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(p+8+n, len(b))]
		switch id {
		case "fmt ":
			if len(body) < 16 || binary.LittleEndian.Uint16(body) != 1 {
				return nil, errors.New("not PCM")
			}
			w.Channels = int(binary.LittleEndian.Uint16(body[2:]))
			w.Rate = int(binary.LittleEndian.Uint32(body[4:]))
			bits = int(binary.LittleEndian.Uint16(body[14:]))
		case "data":
			w.Data = body
		}
		if n < 0 || p+8+n > len(b) {
			break
		}
		p += 8 + n + n%2
	}
	if w.Rate <= 0 || w.Channels <= 0 || bits != 16 {
		return nil, fmt.Errorf("want 16-bit PCM, have %d bits at %d Hz", bits, w.Rate)
	}
	if len(w.Data) == 0 {
		return nil, errors.New("no samples")
	}
	return w, nil
}

// Write writes 16-bit PCM samples as a WAV file.
func Write(path string, rate, channels int, data []byte) error {
	h := make([]byte, 44, 44+len(data))
	copy(h, "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+len(data)))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1)
	binary.LittleEndian.PutUint16(h[22:], uint16(channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*channels*2))
	binary.LittleEndian.PutUint16(h[32:], uint16(channels*2))
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(len(data)))
	return os.WriteFile(path, append(h, data...), 0o644)
}

// Duration is how long the sound lasts.
func (w *File) Duration() time.Duration {
	frames := len(w.Data) / (2 * w.Channels)
	return time.Duration(frames) * time.Second / time.Duration(w.Rate)
}

// RMS is the samples' root mean square, 1 for full scale.
func (w *File) RMS() float64 { return rms(w.Data) }

func rms(data []byte) float64 {
	n := len(data) / 2
	if n == 0 {
		return 0
	}
	var sum float64
	for i := 0; i < n; i++ {
		v := float64(int16(binary.LittleEndian.Uint16(data[2*i:]))) / 32768
		sum += v * v
	}
	return math.Sqrt(sum / float64(n))
}

// Frame is the length of the frames Speech measures.
const Frame = 10 * time.Millisecond

// Speech says, frame by frame (Frame), whether there is sound: a level
// above a tenth of the loudest frame's, and above -50 dB of full scale.
func (w *File) Speech() []bool {
	step := w.Rate * w.Channels * 2 / int(time.Second/Frame)
	if step <= 0 {
		return nil
	}
	var levels []float64
	peak := 0.0
	for i := 0; i+step <= len(w.Data); i += step {
		l := rms(w.Data[i : i+step])
		levels = append(levels, l)
		peak = max(peak, l)
	}
	out := make([]bool, len(levels))
	for i, l := range levels {
		out[i] = l > peak/10 && l > 0.003
	}
	return out
}
