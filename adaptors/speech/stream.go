package speech

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/adaptors"
	"github.com/seatml/seat/adaptors/speech/wav"
)

// mic is input's word for the microphone.
const mic = "mic"

// recorder is the program that records from the microphone: ALSA's
// arecord, or sox's rec; "" if neither is installed.
func recorder() string {
	for _, p := range []string{"arecord", "rec"} {
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return ""
}

// recordCommand records 16 kHz mono 16-bit samples from the device ("":
// the default one) to its standard output.
func recordCommand(ctx context.Context, program, device string) *exec.Cmd {
	if program == "arecord" {
		args := []string{"-q", "-t", "raw", "-f", "S16_LE", "-r", "16000", "-c", "1"}
		if device != "" {
			args = append(args, "-D", device)
		}
		return exec.CommandContext(ctx, "arecord", args...)
	}
	cmd := exec.CommandContext(ctx, "rec", "-q", "-t", "raw", "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", "-")
	if device != "" {
		cmd.Env = append(os.Environ(), "AUDIODRIVER=alsa", "AUDIODEV="+device)
	}
	return cmd
}

// isPipe says whether path is a named pipe (mkfifo).
func isPipe(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode()&os.ModeNamedPipe != 0
}

// utterances is how many utterances heard in a stream may wait for the
// decoder; more are dropped and counted.
const utterances = 8

// hearStream hears the microphone or a named pipe: it cuts the sound
// into utterances where the speaker pauses, and decodes each in turn
// while it goes on listening.
func (a *asr) hearStream(ctx context.Context, sink adaptors.Sink) {
	defer close(a.done)
	work := make(chan string, utterances)
	decoded := make(chan struct{})
	go func() {
		defer close(decoded)
		for file := range work {
			if text, ok := a.recognize(ctx, file, a.source); ok {
				_ = sink.Deliver(ctx, adaptors.Event{Source: a.name, Text: text})
			}
			os.Remove(file)
		}
	}()
	n := 0
	seg := &wav.Segmenter{Rate: 16000, Pause: a.l.pause, Start: a.bargeIn, Utterance: func(samples []byte) {
		n++
		file := filepath.Join(a.dir, fmt.Sprintf("utterance-%d.wav", n))
		if err := wav.Write(file, 16000, 1, samples); err != nil {
			a.log.Warn("utterance not heard", zap.String("input", a.source), zap.Error(err))
			a.stats.Dropped.Add(1)
			return
		}
		select {
		case work <- file:
		default:
			a.log.Warn("utterance not heard: the decoder is behind", zap.String("input", a.source), zap.Int("waiting", utterances))
			a.stats.Dropped.Add(1)
			os.Remove(file)
		}
	}}
	if a.l.input == mic {
		a.hearMic(ctx, seg)
	} else {
		a.hearPipe(ctx, seg)
	}
	close(work)
	<-decoded
}

// hearMic records from the microphone. A recorder that fails (no sound
// card, a device another program holds) is logged and started again,
// less and less often.
func (a *asr) hearMic(ctx context.Context, seg *wav.Segmenter) {
	wait := time.Second
	for ctx.Err() == nil {
		cmd := recordCommand(ctx, a.l.recorder, a.l.device)
		var stderr tail
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err == nil {
			began := time.Now()
			_, _ = io.Copy(seg, out)
			seg.Flush()
			err = cmd.Wait()
			if time.Since(began) > time.Minute {
				wait = time.Second // it worked for a while: a new fault
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("it stopped")
		}
		if msg := stderr.last(); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		a.log.Warn("the microphone cannot be heard; trying again", zap.String("recorder", a.l.recorder),
			zap.String("device", a.l.device), zap.Duration("in", wait), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// hearPipe reads the named pipe, one writer after another: each sends
// 16 kHz mono 16-bit samples, raw or as a WAV stream.
func (a *asr) hearPipe(ctx context.Context, seg *wav.Segmenter) {
	for ctx.Err() == nil {
		f, err := os.Open(a.l.input) // waits for a writer (Close opens it to end the wait)
		if err != nil {
			a.log.Warn("pipe not heard", zap.String("input", a.l.input), zap.Error(err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				continue
			}
		}
		stop := context.AfterFunc(ctx, func() { f.Close() })
		rate, channels, samples, err := wav.StreamFormat(f)
		switch {
		case err == io.EOF:
		case err != nil:
			a.log.Warn("pipe not heard", zap.String("input", a.l.input), zap.Error(err))
			a.stats.Dropped.Add(1)
		case rate != 0 && (rate != 16000 || channels != 1):
			a.log.Warn("pipe not heard: it carries "+strconv.Itoa(rate)+" Hz "+channelsOf(channels)+"; asr hears 16 kHz mono "+
				"(sox FILE -r 16000 -c 1 -b 16 -t wav PIPE)", zap.String("input", a.l.input))
			a.stats.Dropped.Add(1)
			_, _ = io.Copy(io.Discard, samples) // the rest of this writer's stream
		default:
			_, _ = io.Copy(seg, samples)
			seg.Flush()
		}
		stop()
		f.Close()
	}
}

// endPipeWait ends a wait for the pipe's writer: it opens the pipe to
// write, until the stream's reader has stopped.
func (a *asr) endPipeWait() {
	for {
		if fd, err := syscall.Open(a.l.input, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
		}
		select {
		case <-a.done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// bargeIn ends the robot's turn, when bargein names its voice and speech
// starts while it speaks.
func (a *asr) bargeIn() {
	if a.l.bargein == "" || a.peer == nil {
		return
	}
	if v, ok := a.peer(a.l.bargein).(adaptors.Interrupter); ok && v.Interrupt() {
		a.log.Info("barge-in: the user spoke while the robot did; it stops", zap.String("voice", a.l.bargein))
	}
}

// tail keeps the last line a program wrote.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tail) last() string { return lastLine(t.b) }

// channelsOf says how many channels a stream has, in words.
func channelsOf(n int) string {
	switch n {
	case 1:
		return "mono"
	case 2:
		return "stereo"
	}
	return strconv.Itoa(n) + " channels"
}
