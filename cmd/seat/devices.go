package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/interpreter"
	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/interpreter/srcfile"
	"github.com/seatml/seat/schema"
)

// deviceFlags are the device-layer flags of run and check.
type deviceFlags struct {
	devices  string
	scripts  string
	period   time.Duration
	simSpeed string
	hardness float64
	loop     string // --device-loop: auto or on
}

func (d *deviceFlags) register(fs *flag.FlagSet, running bool) {
	d.registerDevices(fs)
	fs.StringVar(&d.scripts, "scripts", "", "Directory to look for motion scripts in, alone (default: general@scripts, else scripts/ beside the behavior, ./scripts, ./"+seatml.DefaultScriptsDir+", then seat's built-in copy of examples/scripts).")
	if running {
		fs.DurationVar(&d.period, "period", hal.DefaultPeriod, "Control period of the device layer.")
		fs.StringVar(&d.simSpeed, "sim-speed", strconv.FormatFloat(hal.DefaultSimSpeed, 'g', -1, 64), "Simulated joint speed in rad/s, or inf.")
		fs.Float64Var(&d.hardness, "motion-hardness", 1, "Hardness of a motion target with torque 100.")
		fs.StringVar(&d.loop, "device-loop", "auto", "auto: the device loop starts once a behavior uses devices, and slows to 20 Hz while nothing moves and no joint is stiff; on: it runs at the period from the start.")
	}
}

// registerDevices adds --devices.
func (d *deviceFlags) registerDevices(fs *flag.FlagSet) {
	fs.StringVar(&d.devices, "devices", "", "Device file describing the robot (default: general@devices, else the built-in NAO tree).")
}

// registerMotion adds the device flags of seat motion check and play,
// where no behavior file names a scripts directory.
func (d *deviceFlags) registerMotion(fs *flag.FlagSet) {
	d.registerDevices(fs)
	fs.StringVar(&d.scripts, "scripts", "", "Directory to look for a SCRIPT given by name in, and to read servos.yaml from (default: a name is looked for in ./scripts, then ./examples/scripts, then seat's built-in copy of examples/scripts, and servos.yaml is read beside the script).")
}

// loadOptions turns the flags into load options, reading --devices.
func (d *deviceFlags) loadOptions(allowShell bool, stderr io.Writer) (seatml.LoadOptions, bool) {
	// seat check, seat run and seat motion load a behavior to run here.
	opts := seatml.LoadOptions{AllowShell: allowShell, ScriptsDir: d.scripts, HereAndNow: true}
	if d.devices == "" {
		return opts, true
	}
	data, err := srcfile.ReadRegular(d.devices)
	if err != nil {
		fmt.Fprintf(stderr, "%s: cannot read device file: %v\n", d.devices, schema.FileCause(err))
		return opts, false
	}
	tree, diags := hal.LoadTree(d.devices, data)
	printDiags(stderr, diags)
	opts.Tree = tree
	return opts, tree != nil
}

func (d *deviceFlags) speed() (float64, error) {
	if strings.EqualFold(d.simSpeed, "inf") {
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(d.simSpeed, 64)
	if err != nil || !(v > 0) {
		return 0, fmt.Errorf("--sim-speed %q: want a number of rad/s greater than 0, or inf", d.simSpeed)
	}
	return v, nil
}

// startDevices builds the simulated device layer for a program.
func (d *deviceFlags) startDevices(prog *seatml.Program) (*interpreter.Devices, error) {
	speed, err := d.speed()
	if err != nil {
		return nil, err
	}
	sim := hal.NewSim()
	sim.Speed = speed
	opts := hal.Options{Period: d.period}
	switch d.loop {
	case "on":
		opts.QuietPeriod = -1
	case "auto", "":
	default:
		return nil, fmt.Errorf("--device-loop %q: want auto or on", d.loop)
	}
	e, err := hal.NewEngine(prog.Tree, sim, opts)
	if err != nil {
		return nil, err
	}
	p, err := motion.NewPlayer(e, prog.Servos, d.hardness)
	if err != nil {
		return nil, err
	}
	return &interpreter.Devices{Engine: e, Player: p}, nil
}

const motionUsage = `Usage:
  seat motion check [flags] SCRIPT...
      check motion scripts; exit 1 on any error
  seat motion play [flags] SCRIPT
      play a script on the simulator and print the joint trajectory as CSV

SCRIPT is a file, or a script's name (Nod), looked for in --scripts DIR when
given, else in ./scripts, then ./examples/scripts, then seat's built-in copy
of examples/scripts; a name found nowhere is an error listing the paths tried.
Run "seat help motion check" or "seat help motion play" for their flags.
`

func motionCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, motionUsage)
		return exitStatus(2)
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, motionUsage)
		return nil
	case "check":
		return motionCheck(args[1:], stdout, stderr)
	case "play":
		return motionPlay(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "seat motion: unknown command %q%s\n\n%s", args[0], schema.DidYouMean(args[0], []string{"check", "play"}, "%q"), motionUsage)
	return exitStatus(2)
}

// motionSetup parses the flags and reads --devices; it returns the
// arguments, or the command's result when it should end (help, a bad flag,
// an unreadable device file).
func motionSetup(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (*hal.Tree, *deviceFlags, []string, error) {
	var d deviceFlags
	d.registerMotion(fs)
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return nil, nil, nil, flagExit(err)
	}
	opts, ok := d.loadOptions(false, stderr)
	if !ok {
		return nil, nil, nil, exitStatus(1)
	}
	tree := opts.Tree
	if tree == nil {
		tree = hal.NAOTree()
	}
	return tree, &d, rest, nil
}

// servosFor reads servos.yaml in dir, a directory or the built-in
// scripts; without one, the default mapping applies.
func servosFor(dir string, tree *hal.Tree, stderr io.Writer) (map[int]motion.Mapping, bool) {
	path := filepath.Join(dir, "servos.yaml")
	data, err := readScript(path)
	if err != nil {
		return motion.DefaultServos(), true
	}
	m, diags := motion.LoadServos(path, data, tree)
	printDiags(stderr, diags)
	return m, m != nil
}

// readScript reads a motion script or servos.yaml: a file, or one of the
// built-in scripts.
func readScript(path string) ([]byte, error) {
	return seatml.ReadScript(path, srcfile.ReadRegular)
}

// scriptFile finds a motion script given on the command line. A path (an
// existing file, or an argument with a slash or an extension) is taken as
// it is; a name (Nod) is looked for where <motion script="Nod"> looks for
// it (seatml.ScriptDirs, without a behavior): --scripts alone when given,
// else ./scripts, ./examples/scripts, then the built-in copy. The error for
// a name found nowhere lists every path tried.
func scriptFile(arg, scriptsDir string) (string, error) {
	if _, err := os.Stat(arg); err == nil || strings.ContainsAny(arg, `/\`) || filepath.Ext(arg) != "" {
		return arg, nil
	}
	return seatml.FindScript(seatml.ScriptDirs(scriptsDir, ""), arg)
}

// servosDir is the directory whose servos.yaml maps a script's servos:
// --scripts when given, else the script's own.
func servosDir(file, scriptsDir string) string {
	if scriptsDir != "" {
		return scriptsDir
	}
	return filepath.Dir(file)
}

func motionCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("motion check", stderr)
	tree, d, files, err := motionSetup(fs, args, stdout, stderr)
	if err != nil || tree == nil {
		return err
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "seat motion check: no scripts given; run \"seat help motion check\" for usage")
		return exitStatus(2)
	}
	failed := false
	files, failed = scriptsIn(files, stderr)
	for _, arg := range files {
		file, err := scriptFile(arg, d.scripts)
		if err != nil {
			fmt.Fprintln(stderr, "seat motion check:", err)
			failed = true
			continue
		}
		servos, ok := servosFor(servosDir(file, d.scripts), tree, stderr)
		if !ok {
			failed = true
			continue
		}
		data, err := readScript(file)
		if err != nil {
			fmt.Fprintf(stderr, "%s: cannot read motion script: %v\n", file, schema.FileCause(err))
			failed = true
			continue
		}
		s, diags := motion.Parse(file, data)
		if s != nil {
			diags.Add(motion.CheckRanges(s, servos, limitsOf(tree)))
			diags.Sort()
		}
		printDiags(stderr, diags)
		failed = failed || s == nil
	}
	if failed {
		return exitStatus(1)
	}
	return nil
}

// scriptsIn replaces each directory among args by the motion scripts in
// it (its .yaml files but servos.yaml, the servo mapping), in order; a
// directory without any is an error (failed).
func scriptsIn(args []string, stderr io.Writer) (files []string, failed bool) {
	for _, arg := range args {
		if st, err := os.Stat(arg); err != nil || !st.IsDir() {
			files = append(files, arg) // a file or a name: as before
			continue
		}
		found, _ := filepath.Glob(filepath.Join(arg, "*.yaml"))
		found = slices.DeleteFunc(found, func(f string) bool { return filepath.Base(f) == "servos.yaml" })
		if len(found) == 0 {
			fmt.Fprintf(stderr, "%s: no motion scripts (.yaml files) in it\n", arg)
			failed = true
		}
		files = append(files, found...)
	}
	return files, failed
}

func limitsOf(tree *hal.Tree) func(string) (float64, float64, bool) {
	return func(j string) (float64, float64, bool) {
		if jt := tree.Joint(j); jt != nil {
			return jt.Position.Min, jt.Position.Max, true
		}
		return 0, 0, false
	}
}

func motionPlay(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("motion play", stderr)
	period := fs.Duration("period", hal.DefaultPeriod, "Control period, and the time between rows.")
	speed := fs.String("sim-speed", strconv.FormatFloat(hal.DefaultSimSpeed, 'g', -1, 64), "Simulated joint speed in rad/s, or inf.")
	duration := fs.Duration("duration", 0, "Scale the script to this total duration.")
	multiplier := fs.Float64("multiplier", 0, "Scale the script by this factor (not with --duration).")
	hardness := fs.Float64("motion-hardness", 1, "Hardness of a target with torque 100.")
	tree, d, rest, err := motionSetup(fs, args, stdout, stderr)
	if err != nil || tree == nil {
		return err
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "seat motion play: give one script (a file, or a name such as Nod); run \"seat help motion play\" for usage")
		return exitStatus(2)
	}
	file, err := scriptFile(rest[0], d.scripts)
	if err != nil {
		fmt.Fprintln(stderr, "seat motion play:", err)
		return exitStatus(1)
	}
	servos, ok := servosFor(servosDir(file, d.scripts), tree, stderr)
	if !ok {
		return exitStatus(1)
	}
	data, err := readScript(file)
	if err != nil {
		fmt.Fprintf(stderr, "%s: cannot read motion script: %v\n", file, schema.FileCause(err))
		return exitStatus(1)
	}
	s, diags := motion.Parse(file, data)
	printDiags(stderr, diags)
	if s == nil {
		return exitStatus(1)
	}
	df := deviceFlags{simSpeed: *speed}
	v, err := df.speed()
	if err != nil {
		return err
	}
	sim := hal.NewSim()
	sim.Speed = v
	e, err := hal.NewEngine(tree, sim, hal.Options{Period: *period})
	if err != nil {
		return err
	}
	p, err := motion.NewPlayer(e, servos, *hardness)
	if err != nil {
		return err
	}
	done := false
	if err := e.Step(0); err != nil {
		return err
	}
	m, err := p.Play(motion.Request{Owner: "seat motion play", Scripts: []*motion.Script{s}, Duration: *duration,
		Multiplier: *multiplier, Notify: func(ev motion.Event) { done = done || ev.Kind == "done" }})
	if err != nil {
		return err
	}
	var joints []*hal.Joint
	seen := map[string]bool{}
	for _, c := range m.Commands() {
		if !seen[c.Joint] {
			seen[c.Joint] = true
			joints = append(joints, tree.Joint(c.Joint))
		}
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	w.WriteString("time_ms")
	for _, j := range joints {
		fmt.Fprintf(w, ",%s,%s_sensor", j.Name, j.Name)
	}
	w.WriteString("\n")
	start := m.Timing().Start // rows are timed from the motion's start
	row := func(now time.Duration) {
		fmt.Fprintf(w, "%g", float64(now-start)/float64(time.Millisecond))
		for _, j := range joints {
			fmt.Fprintf(w, ",%.6f,%.6f", e.Value(j.Position), e.Value(j.Sensor))
		}
		w.WriteString("\n")
	}
	// Play to the end, then one more period for the sensors to settle.
	end := m.Timing().End() + *period
	for now := start; now <= end || !done; now += *period {
		if err := e.Step(now); err != nil {
			return err
		}
		row(now)
	}
	return nil
}
