package wav

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Segmenter finds utterances in a stream of 16-bit mono samples (a
// microphone, a pipe): sound that rises above the background for a
// while, up to a pause. It follows the background's level, so a fan's
// hum does not count as speech.
type Segmenter struct {
	// Rate is the samples' rate, in Hz.
	Rate int
	// Pause is the quiet that ends an utterance.
	Pause time.Duration
	// Start is called when speech starts (barge-in); Utterance with the
	// utterance's samples when it ends, from a little before its start.
	Start     func()
	Utterance func(samples []byte)

	partial []byte   // the samples of a frame not yet whole
	floor   float64  // the background's level
	heard   bool     // floor has been measured
	loud    int      // frames in a row above the threshold
	quiet   int      // frames in a row under it, in an utterance
	voiced  int      // frames above it, in this utterance
	in      bool     // in an utterance
	pre     [][]byte // the last frames before an utterance (ring)
	utt     []byte   // the utterance's samples so far
}

// What the Segmenter listens for, in frames (Frame).
const (
	startFrames = 5    // loud frames in a row start an utterance (50 ms)
	preFrames   = 30   // kept from before its start (300 ms)
	minVoiced   = 15   // fewer loud frames is a click, not speech (150 ms)
	maxFrames   = 2000 // an utterance is cut at 20 s
	// floorMin is the threshold's lowest level (-50 dB of full scale),
	// and aboveFloor how far above the background speech is (12 dB).
	floorMin   = 0.003
	aboveFloor = 4
)

// Write takes the next samples.
func (s *Segmenter) Write(p []byte) (int, error) {
	n := len(p)
	step := s.Rate / int(time.Second/Frame) * 2
	if step <= 0 {
		return 0, errors.New("no sample rate")
	}
	if len(s.partial) > 0 {
		k := min(step-len(s.partial), len(p))
		s.partial = append(s.partial, p[:k]...)
		p = p[k:]
		if len(s.partial) < step {
			return n, nil
		}
		s.frame(s.partial)
		s.partial = s.partial[:0]
	}
	for ; len(p) >= step; p = p[step:] {
		s.frame(p[:step])
	}
	s.partial = append(s.partial, p...)
	return n, nil
}

// frame takes one frame's samples.
func (s *Segmenter) frame(f []byte) {
	level := rms(f)
	threshold := max(floorMin, s.floor*aboveFloor)
	if !s.in {
		if level < s.floor || !s.heard {
			s.floor, s.heard = level, true
		} else {
			s.floor += (level - s.floor) * 0.02 // a steady noise is the background within a second
		}
		if level > threshold {
			s.loud++
		} else {
			s.loud = 0
		}
		s.pre = append(s.pre, append([]byte(nil), f...))
		if len(s.pre) > preFrames {
			s.pre = s.pre[1:]
		}
		if s.loud < startFrames {
			return
		}
		s.in, s.quiet, s.voiced = true, 0, s.loud
		s.utt = s.utt[:0]
		for _, p := range s.pre {
			s.utt = append(s.utt, p...)
		}
		s.pre = s.pre[:0]
		if s.Start != nil {
			s.Start()
		}
		return
	}
	s.utt = append(s.utt, f...)
	if level > threshold {
		s.quiet = 0
		s.voiced++
	} else {
		s.quiet++
	}
	if time.Duration(s.quiet)*Frame >= s.Pause || len(s.utt) >= maxFrames*len(f) {
		s.end()
	}
}

// end ends the utterance.
func (s *Segmenter) end() {
	s.in, s.loud = false, 0
	if s.voiced >= minVoiced && s.Utterance != nil {
		s.Utterance(s.utt)
	}
	s.utt = nil
}

// Flush ends an utterance the stream ended in.
func (s *Segmenter) Flush() {
	if s.in {
		s.end()
	}
	s.partial = s.partial[:0]
}

// StreamFormat reads the start of a stream: a WAV header, whose format
// it returns, or nothing (raw samples, as the caller expects them). It
// returns the stream from its first sample.
func StreamFormat(r io.Reader) (rate, channels int, samples io.Reader, err error) {
	var h [12]byte
	n, err := io.ReadFull(r, h[:])
	if err != nil {
		if n > 0 && err == io.ErrUnexpectedEOF {
			return 0, 0, bytes.NewReader(h[:n]), nil
		}
		return 0, 0, nil, err
	}
	if string(h[:4]) != "RIFF" || string(h[8:]) != "WAVE" {
		return 0, 0, io.MultiReader(bytes.NewReader(h[:]), r), nil
	}
	bits := 0
	for {
		var c [8]byte
		if _, err := io.ReadFull(r, c[:]); err != nil {
			return 0, 0, nil, fmt.Errorf("a WAV header with no data: %w", err)
		}
		size := binary.LittleEndian.Uint32(c[4:])
		if string(c[:4]) == "data" {
			break
		}
		if size > 1<<16 {
			return 0, 0, nil, fmt.Errorf("a WAV header's %q chunk of %d bytes", c[:4], size)
		}
		body := make([]byte, size+size%2)
		if _, err := io.ReadFull(r, body); err != nil {
			return 0, 0, nil, err
		}
		if string(c[:4]) == "fmt " && len(body) >= 16 {
			if binary.LittleEndian.Uint16(body) != 1 {
				return 0, 0, nil, errors.New("not PCM")
			}
			channels = int(binary.LittleEndian.Uint16(body[2:]))
			rate = int(binary.LittleEndian.Uint32(body[4:]))
			bits = int(binary.LittleEndian.Uint16(body[14:]))
		}
	}
	if bits != 16 {
		return 0, 0, nil, fmt.Errorf("want 16-bit PCM, have %d bits", bits)
	}
	return rate, channels, r, nil
}
