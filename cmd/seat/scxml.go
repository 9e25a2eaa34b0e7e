package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/seatml/seat/interpreter/scxml"
)

// scxmlExt marks a W3C SCXML document, which seat check and seat run read
// with the SCXML front end.
const scxmlExt = ".scxml"

func isSCXML(file string) bool { return strings.EqualFold(filepath.Ext(file), scxmlExt) }

// checkSCXML checks an SCXML document, printing its diagnostics; it
// reports whether it has errors.
func checkSCXML(file string, stderr io.Writer) bool {
	_, diags := scxml.Load(file)
	printDiags(stderr, diags)
	return diags.HasErrors()
}

// scxmlLimits are seat run's script limits.
type scxmlLimits struct {
	timeout time.Duration
	memory  uint64
}

// runSCXML runs an SCXML document on its own until it reaches a top-level
// final state (exit status 0, a "finished" log line naming it) or ctx
// ends. A session that a bound stops (a runaway macrostep) exits with
// status 1. Its <log> output and error events are logged.
func runSCXML(ctx context.Context, file string, limits scxmlLimits, log *zap.Logger, stderr io.Writer) error {
	doc, diags := scxml.Load(file)
	printDiags(stderr, diags)
	if doc == nil {
		return exitStatus(1)
	}
	sys := scxml.NewSystem()
	sys.ScriptTimeout, sys.ScriptMemory = limits.timeout, limits.memory
	sys.MacrostepTimeout = max(sys.MacrostepTimeout, 10*limits.timeout)
	sys.Log = func(s *scxml.Session, label, text string) {
		fields := []zap.Field{zap.String("document", filepath.Base(s.Doc.File)), zap.String("session", s.ID)}
		if label == "error" {
			log.Warn("error event", append(fields, zap.String("error", text))...)
			return
		}
		log.Info("log", append(fields, zap.String("label", label), zap.String("text", text))...)
	}
	log.Info("starting", zap.String("document", file))
	s := sys.Start(doc)
	if err := sys.RunRealTime(ctx, s); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if !s.Ended() {
		log.Info("stopping", zap.String("cause", context.Cause(ctx).Error()))
		s.Instance().Cancel()
		return nil
	}
	if s.Final == "" {
		// A bound stopped it (a runaway macrostep): not a finish.
		log.Error("stopped without reaching a final state", zap.String("document", file), zap.String("cause", s.StopCause))
		return exitStatus(1)
	}
	log.Info("finished", zap.String("document", file), zap.String("final", s.Final))
	return nil
}
