// Command seat checks and runs SEATML behavior files.
//
//	seat check [--allow-shell] FILE...
//	seat run [flags] FILE
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/seatml/seat/adaptors"
	_ "github.com/seatml/seat/adaptors/all" // every adaptor kind (the compiler imports it too)
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/manager"
	"github.com/seatml/seat/interpreter/monitor"
	"github.com/seatml/seat/interpreter/record"
	"github.com/seatml/seat/interpreter/seatml"
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
  seat check [flags] PATH...     validate behavior files (a directory: all under it); exit 1 on any error
  seat run [flags] FILE...       run behaviors on the simulated robot
  seat ctl COMMAND ...           manage a running seat (started with --control)
  seat test [flags] [PATH...]    run conversation transcripts (.seattest) against their behaviors
  seat replay REC.jsonl [FILE]   re-run a recording (seat run --record) and compare what is sent
  seat graph [--format F] FILE   print the state machine as Graphviz DOT or Mermaid
  seat port [-w|-d] FILE...      carry eSEAT files to seat: modern spellings, Python bodies to Lua
  seat motion check SCRIPT...    validate motion scripts
  seat motion play SCRIPT        play a motion script, print the trajectory as CSV
  seat version                   print seat's version (also seat --version, seat -v)
  seat help [COMMAND]            print this, or a command's usage and flags

Run "seat help COMMAND" (or "seat COMMAND -h") for the flags of a command.
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
	case "ctl":
		return ctlCmd(args[1:], stdout, stderr)
	case "test":
		return testCmd(args[1:], stdout, stderr)
	case "replay":
		return replayCmd(args[1:], stdout, stderr)
	case "graph":
		return graphCmd(args[1:], stdout, stderr)
	case "port":
		return portCmd(args[1:], stdout, stderr)
	case "version", "-v", "-version", "--version":
		return versionCmd(args[1:], stdout, stderr)
	case "help":
		return helpCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	names := []string{"version", "help"}
	for _, c := range commands {
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "seat: unknown command %q%s\n\n%s", args[0], schema.DidYouMean(args[0], names, "%q"), usage)
	return exitStatus(2)
}

// seatVersion is the version seat version prints, for recordings.
func seatVersion() string {
	bi, _ := debug.ReadBuildInfo()
	v, _, _ := strings.Cut(strings.TrimPrefix(versionLine(bi), "seat version "), " (go")
	return v
}

func check(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	allowShell := fs.Bool("allow-shell", false, "Accept <shell> actions, as seat run --allow-shell does.")
	var dev deviceFlags
	dev.register(fs, false)
	var set setFlags
	set.register(fs)
	files, err := parseFiles(fs, args, stdout, stderr)
	if files == nil {
		return err
	}
	opts, ok := dev.loadOptions(*allowShell, stderr)
	if !ok {
		return exitStatus(1)
	}
	opts.Set = set
	files, found := behaviorFiles(files, stderr) // directories: the files under them
	failed := !found
	var progs []*seatml.Program
	for _, file := range files {
		prog, diags := seatml.Load(file, opts)
		printDiags(stderr, diags)
		if diags.HasErrors() {
			failed = true
		}
		if prog != nil {
			progs = append(progs, prog)
		}
	}
	if !failed && set.unused(progs, stderr) {
		failed = true
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

// RampDown is how long hardness takes to fall to 0 when seat stops.
const rampDown = time.Second

func runBehavior(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	allowShell := fs.Bool("allow-shell", false, "Allow <shell> actions; without it a file with <shell> does not load.")
	scriptTimeout := fs.Duration("script-timeout", interpreter.DefaultScriptTimeout, "Time limit of each script, cond and shell command; a script over it is stopped.")
	scriptMemory := fs.Uint64("script-memory", interpreter.DefaultScriptMemory>>20, "How many MiB one script call may grow the heap by before it is stopped.")
	logFormat := fs.String("log-format", "console", "Log format: console (for people) or json (for machines).")
	control := fs.String("control", "", "Serve the control API on this address (a port alone listens on 127.0.0.1) and keep running for seat ctl; off by default.")
	cpuprofile := fs.String("cpuprofile", "", "Write a CPU profile to this file (for benchmarks).")
	watch := fs.Bool("watch", false, "Reload a behavior when its file is saved: checked first (a file with errors changes nothing, and its errors are logged), then reloaded where it was, as seat ctl reload does.")
	recordFile := fs.String("record", "", "Record every event, message, rule fired, state entered and timer to this file (JSON Lines), for seat replay and seat test --from.")
	level := zap.NewAtomicLevelAt(zap.InfoLevel)
	fs.TextVar(&level, "log-level", &level, "Log level: debug (every rule fired), info, warn or error.")
	var dev deviceFlags
	dev.register(fs, true)
	var set setFlags
	set.register(fs)
	files, err := parseFiles(fs, args, stdout, stderr)
	if files == nil {
		return err
	}
	log, err := newLogger(*logFormat, level, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}

	loadOpts, ok := dev.loadOptions(*allowShell, stderr)
	if !ok {
		return exitStatus(1)
	}
	loadOpts.Set = set
	progs, ok := checkAll(files, loadOpts, stderr)
	if ok && set.unused(progs, stderr) {
		ok = false
	}
	if !ok {
		return exitStatus(1) // a file with errors never starts
	}
	devices, err := dev.startDevices(progs[0])
	if err != nil {
		fmt.Fprintln(stderr, "seat run:", err)
		return exitStatus(2)
	}
	// The control loop starts with the first behavior that uses devices
	// (or at once with --devices): an idle behavior without them costs
	// no 100 Hz loop.
	engineCtx, stopEngine := context.WithCancel(context.Background())
	engineDone := make(chan error, 1)
	var engineOnce sync.Once
	engineStarted := false
	devices.Start = func() {
		engineOnce.Do(func() {
			engineStarted = true
			log.Info("device loop started", zap.Duration("period", devices.Engine.Period()))
			go func() { engineDone <- devices.Engine.Run(engineCtx) }()
		})
	}
	if dev.loop == "on" || dev.devices != "" {
		devices.Start()
	}
	defer func() {
		stopEngine()
		engineOnce.Do(func() {}) // no start after this point
		if engineStarted {
			if err := <-engineDone; err != nil {
				log.Error("device layer", zap.Error(err))
			}
		}
		_ = devices.Engine.Close()
	}()

	loadOpts.Tree = devices.Engine.Tree()
	mgOpts := manager.Options{Log: log, Load: loadOpts, Debug: *control != "", Machine: interpreter.Options{
		Log: log, ScriptTimeout: *scriptTimeout, ScriptMemory: max(*scriptMemory, 1) << 20, Stdin: stdin, Stdout: stdout, AllowShell: *allowShell, Devices: devices,
		Stopping: ctx,
	}}
	var observers []func(*seatml.Program) interpreter.Observer
	var mon *monitor.Monitor
	if *control != "" { // the monitor is served beside the control API
		mon = monitor.New(log)
		observers = append(observers, mon.Observe)
	}
	if *recordFile != "" {
		rec, err := record.Create(*recordFile, seatVersion())
		if err != nil {
			fmt.Fprintln(stderr, "seat run: --record:", err)
			return exitStatus(2)
		}
		defer func() {
			if err := rec.Close(); err != nil {
				log.Error("recording", zap.String("file", *recordFile), zap.Error(err))
			}
		}()
		observers = append(observers, func(p *seatml.Program) interpreter.Observer { return rec.Behavior(p.Name, p.File) })
		log.Info("recording", zap.String("file", *recordFile))
	}
	if len(observers) > 0 {
		mgOpts.Observe = func(p *seatml.Program) interpreter.Observer {
			var list []interpreter.Observer
			for _, f := range observers {
				list = append(list, f(p))
			}
			return interpreter.Observers(list...)
		}
	}
	mg := manager.New(mgOpts)
	// Every exit path stops the behaviors in reverse, then lets the joints go.
	defer func() {
		if ctx.Err() != nil {
			log.Info("stopping", zap.String("cause", context.Cause(ctx).Error()))
		}
		mg.StopAll()
		if !devices.Engine.Stiff() {
			return
		}
		log.Info("relaxing the joints", zap.Duration("over", rampDown))
		end := devices.Engine.RampDown(rampDown)
		deadline := time.Now().Add(rampDown + time.Second)
		for devices.Engine.Now() < end+devices.Engine.Period() && time.Now().Before(deadline) {
			time.Sleep(devices.Engine.Period())
		}
	}()
	for _, prog := range progs {
		log.Info("starting", zap.String("behavior", prog.Name), zap.String("file", prog.File))
		if _, err := mg.StartProgram(prog); err != nil {
			if *control == "" {
				fmt.Fprintln(stderr, "seat run:", err) // once, plain, without the log's quoting
				return exitStatus(1)
			}
			log.Error("start-up failed", zap.String("behavior", prog.Name), zap.String("error", err.Error()))
			// Under --control the others keep running; this one is listed
			// as unloaded with its reason, to be fixed and started again.
		}
	}
	if *watch {
		wctx, stopWatching := context.WithCancel(ctx)
		defer stopWatching()
		mg.Watch(wctx)
		log.Info("watching the behaviors' files; a save reloads them")
	}
	if *control != "" {
		stop, err := serveControl(*control, mg, mon, log)
		if err != nil {
			log.Error("control API", zap.Error(err))
			return exitStatus(1)
		}
		defer stop()
		<-ctx.Done() // a managed process runs until it is told to stop
		return nil
	}
	if code := mg.Wait(ctx); code != 0 {
		return exitStatus(code)
	}
	return nil
}

// checkAll loads and checks every file, printing all diagnostics, and
// enforces what several behaviors in one process must agree on.
func checkAll(files []string, opts seatml.LoadOptions, stderr io.Writer) ([]*seatml.Program, bool) {
	var progs []*seatml.Program
	ok := true
	for _, file := range files {
		prog, diags := seatml.Load(file, opts)
		printDiags(stderr, diags)
		if prog == nil {
			ok = false
			continue
		}
		progs = append(progs, prog)
	}
	if !ok {
		return nil, false
	}
	names, stdio := map[string]string{}, ""
	for _, p := range progs {
		if prev, dup := names[p.Name]; dup {
			fmt.Fprintf(stderr, "%s: behavior name %q is already used by %s\n", p.File, p.Name, prev)
			ok = false
		}
		names[p.Name] = p.File
		if p.DevicesFile != progs[0].DevicesFile && opts.Tree == nil {
			fmt.Fprintf(stderr, "%s: devices %q differs from the tree of %s; one process has one device tree (use --devices)\n", p.File, p.Devices, progs[0].File)
			ok = false
		}
		for _, a := range p.Adaptors {
			if k, _ := adaptors.LookupKind(a.Type); k.Has(adaptors.Stdin) {
				if stdio != "" {
					fmt.Fprintf(stderr, "%s: only one behavior may read standard input (%s does)\n", p.File, stdio)
					ok = false
				}
				stdio = p.File
			}
		}
	}
	return progs, ok
}

// serveControl starts the control API; the returned function stops it.
// serveControl serves the control API and, under /monitor/, the live
// monitor.
func serveControl(addr string, mg *manager.Manager, mon *monitor.Monitor, log *zap.Logger) (func(), error) {
	ln, err := net.Listen("tcp", manager.ControlAddr(addr))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", manager.Handler(mg))
	mux.Handle("/monitor/", mon.Handler(mg))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("control API", zap.String("url", "http://"+ln.Addr().String()+"/behaviors"))
	log.Info("monitor", zap.String("url", "http://"+ln.Addr().String()+"/monitor/"))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
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
