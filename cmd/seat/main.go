// Command seat checks and runs SEATML behavior files.
//
//	seat check [--allow-shell] FILE...
//	seat run [flags] FILE
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	_ "github.com/seatml/seat/adaptors/socket"
	_ "github.com/seatml/seat/adaptors/stdio"
	_ "github.com/seatml/seat/adaptors/web"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/schema"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitStatus is an error that carries the process exit status; its message,
// if any, has already been printed.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var es exitStatus
	if errors.As(err, &es) {
		return int(es)
	}
	var ee *interpreter.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	fmt.Fprintln(stderr, "seat:", err)
	return 1
}

const usage = `seat checks and runs SEATML behavior files.

Usage:
  seat check [flags] FILE...     validate behavior files; exit 1 on any error
  seat run [flags] FILE          run a behavior on the simulated robot
  seat motion check FILE...      validate motion scripts
  seat motion play FILE          play a motion script, print the trajectory as CSV
  seat version

Run "seat COMMAND -h" for the flags of a command.
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitStatus(2)
	}
	switch args[0] {
	case "check":
		return check(args[1:], stdout, stderr)
	case "run":
		return runBehavior(ctx, args[1:], stdin, stdout, stderr)
	case "motion":
		return motionCmd(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "seat", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "seat: unknown command %q\n\n%s", args[0], usage)
	return exitStatus(2)
}

const version = "0.1.0"

func check(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	allowShell := fs.Bool("allow-shell", false, "accept <shell> actions")
	var dev deviceFlags
	dev.register(fs, false)
	if err := fs.Parse(args); err != nil {
		return exitStatus(2)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "seat check: no files given")
		return exitStatus(2)
	}
	opts, ok := dev.loadOptions(*allowShell, stderr)
	if !ok {
		return exitStatus(1)
	}
	failed := false
	for _, file := range fs.Args() {
		_, diags := interpreter.Load(file, opts)
		printDiags(stderr, diags)
		if diags.HasErrors() {
			failed = true
		}
	}
	if failed {
		return exitStatus(1)
	}
	return nil
}

func printDiags(w io.Writer, diags schema.List) {
	for _, d := range diags {
		fmt.Fprintln(w, d.Error())
	}
}

func runBehavior(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	allowShell := fs.Bool("allow-shell", false, "allow <shell> actions")
	scriptTimeout := fs.Duration("script-timeout", interpreter.DefaultScriptTimeout, "time limit of each script, cond and shell command")
	logFormat := fs.String("log-format", "console", "log format: console or json")
	level := zap.NewAtomicLevelAt(zap.InfoLevel)
	fs.TextVar(&level, "log-level", &level, "log level: debug, info, warn or error")
	var dev deviceFlags
	dev.register(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: seat run [flags] FILE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return exitStatus(2)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitStatus(2)
	}
	log, err := newLogger(*logFormat, level, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()

	file := fs.Arg(0)
	opts, ok := dev.loadOptions(*allowShell, stderr)
	if !ok {
		return exitStatus(1)
	}
	prog, diags := interpreter.Load(file, opts)
	printDiags(stderr, diags)
	if prog == nil {
		return exitStatus(1)
	}
	devices, err := dev.startDevices(prog)
	if err != nil {
		fmt.Fprintln(stderr, "seat run:", err)
		return exitStatus(2)
	}
	engineCtx, stopEngine := context.WithCancel(context.Background())
	engineDone := make(chan error, 1)
	go func() { engineDone <- devices.Engine.Run(engineCtx) }()
	defer func() {
		stopEngine()
		if err := <-engineDone; err != nil {
			log.Error("device layer", zap.Error(err))
		}
		_ = devices.Engine.Close()
	}()
	m, err := interpreter.New(prog, interpreter.Options{
		Log: log, ScriptTimeout: *scriptTimeout, Stdin: stdin, Stdout: stdout, AllowShell: *allowShell,
		Devices: devices,
	})
	if err != nil {
		log.Error("start-up failed", zap.String("error", err.Error()))
		return exitStatus(1)
	}
	log.Info("starting", zap.String("behavior", prog.Name), zap.String("file", file))
	if err := m.Run(ctx); err != nil {
		var ee *interpreter.ExitError
		if errors.As(err, &ee) {
			return err
		}
		log.Error("run failed", zap.String("error", err.Error()))
		return exitStatus(1)
	}
	return nil
}

func newLogger(format string, level zap.AtomicLevel, w io.Writer) (*zap.Logger, error) {
	var enc zapcore.Encoder
	switch strings.ToLower(format) {
	case "json":
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = zapcore.ISO8601TimeEncoder
		enc = zapcore.NewJSONEncoder(cfg)
	case "console", "":
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeTime = zapcore.TimeEncoderOfLayout(time.TimeOnly + ".000")
		cfg.EncodeCaller = nil
		cfg.CallerKey = ""
		enc = zapcore.NewConsoleEncoder(cfg)
	default:
		return nil, fmt.Errorf("--log-format %q: use console or json", format)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), level)), nil
}
