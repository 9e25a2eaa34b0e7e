package interpreter

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter/seatml"
)

// runShell runs a <shell> action (§6): /bin/sh -c text with empty standard
// input, awaited up to the script time limit, its process group killed on
// overrun. It reports whether the list may go on.
func (m *seatmlBehavior) runShell(a *seatml.Action) bool {
	if !m.opts.AllowShell {
		m.log.Error("<shell> refused: seat was not started with --allow-shell", zap.String("at", a.Pos.String()))
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.opts.ScriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", a.Text)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 100 * time.Millisecond
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		m.log.Error("shell command cannot start", zap.String("at", a.Pos.String()), zap.Error(err))
		return false
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		m.log.Error("shell command stopped: time limit exceeded", zap.String("at", a.Pos.String()),
			zap.Duration("limit", m.opts.ScriptTimeout))
		return false
	}
	if stderr.Len() > 0 {
		m.log.Warn("shell command wrote to standard error", zap.String("at", a.Pos.String()), zap.String("stderr", strings.TrimRight(stderr.String(), "\n")))
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		m.log.Warn("shell command failed", zap.String("at", a.Pos.String()), zap.Int("status", exit.ExitCode()))
	}
	out := strings.TrimSuffix(stdout.String(), "\n")
	if a.SendTo != "" {
		m.send(a.SendTo, out, &a.Pos)
	} else if out != "" {
		m.log.Debug("shell output", zap.String("at", a.Pos.String()), zap.String("stdout", out))
	}
	return true
}
