package interpreter

import (
	"errors"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/interpreter/luadm"
	"github.com/seatml/seat/schema"
)

// logRecords is the log as an observer of a machine's records: it writes
// a line for each state entered ("state": from and to) and each failure
// ("script failed", "error event": the error, the state, and the failing
// line of code). The machine writes these lines nowhere else. It wants
// only those kinds, and only those its log's level lets through.
type logRecords struct {
	log   *zap.Logger
	kinds KindSet
}

// newLogRecords is log's observer; nil when the log writes neither.
func newLogRecords(log *zap.Logger) Observer {
	var k KindSet
	if log.Core().Enabled(zapcore.InfoLevel) {
		k |= kState
	}
	if log.Core().Enabled(zapcore.ErrorLevel) { // a failure is an error; an SCXML error event, a warning (problem)
		k |= kError
	}
	if k == 0 {
		return nil
	}
	return &logRecords{log: log, kinds: k}
}

func (l *logRecords) Kinds() KindSet { return l.kinds }

func (l *logRecords) Observe(r Record) {
	switch r.Kind {
	case RecState:
		if r.Quiet {
			return // a runaway's: one line sums them up
		}
		if ce := l.log.Check(zapcore.InfoLevel, "state"); ce != nil {
			if r.From == "" {
				ce.Write(zap.String("to", r.State))
			} else {
				ce.Write(zap.String("from", r.From), zap.String("to", r.State))
			}
		}
	case RecError:
		l.problem(r.Problem, r.State)
	}
}

// problem writes a failure's line: an error, or a warning for an SCXML
// document's error event (which the document may handle).
func (l *logRecords) problem(p *Problem, state string) {
	level := zapcore.ErrorLevel
	if p.Diagnostic.Severity == schema.Warning {
		level = zapcore.WarnLevel
	}
	ce := l.log.Check(level, p.What)
	if ce == nil {
		return
	}
	fields := make([]zap.Field, 0, 5)
	if p.Invoked != "" {
		fields = append(fields, zap.String("invoked", p.Invoked), zap.String("document", p.Document))
	}
	fields = append(fields, zap.String("error", p.Text()))
	if state != "" {
		fields = append(fields, zap.String("state", state))
	}
	if p.Diagnostic.Detail != "" {
		fields = append(fields, zap.String("code", codeLine(p.Diagnostic.Detail)))
	}
	ce.Write(fields...)
}

// codeLine is the line of code of a snippet (schema.Snippet), for a log
// line: the code after its number, without the caret line.
func codeLine(detail string) string {
	first, _, _ := strings.Cut(detail, "\n")
	_, code, _ := strings.Cut(first, " | ")
	return code
}

// Text is the failure as its log line's error says it: the diagnostic's
// place and message, or the message alone when it has no place.
func (p *Problem) Text() string {
	d := p.Diagnostic
	if !d.Pos.IsValid() && d.Pos.File == "" {
		return d.Msg
	}
	return d.Pos.String() + ": " + d.Msg
}

// problemOf is the Problem of a failure: what failed, and err as a
// diagnostic (with its line of code when err is a script's error).
func problemOf(what string, err error) *Problem {
	var se *luadm.Error
	if errors.As(err, &se) && se.Error() == err.Error() {
		return &Problem{What: what, Diagnostic: se.Diagnostic()}
	}
	p := &Problem{What: what, Diagnostic: schema.Diagnostic{Msg: err.Error()}}
	if errors.As(err, &se) && se.Code != "" { // wrapped, as an error event's: the text is err's, the code se's
		p.Diagnostic.Detail = schema.Snippet(se.Pos.Line, se.Code, se.Col)
	}
	return p
}

// fail tells the observers of a failure: the log writes it, the recorder
// keeps it, the monitor shows it. The caller asked wants(kError) first.
// An invoked SCXML document's failure names no state: the state would be
// its parent's.
func (m *env) fail(p *Problem) {
	r := Record{Kind: RecError, Peer: m.sessionPeer(), Problem: p}
	if p.Invoked == "" {
		r.State = m.stateName()
	}
	m.observe(r)
}
