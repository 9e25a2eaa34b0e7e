package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/seatml/seat/interpreter/seatml"
	"github.com/seatml/seat/schema"
)

// command is one of seat's commands, for its usage text and seat help.
type command struct {
	name    string // "run", "motion play"
	args    string // what follows the flags: "FILE..."
	summary string // one sentence
	more    string // optional text after the flags
}

var commands = []command{
	{name: "check", args: "PATH...", summary: "Check behavior files and print every problem as file:line:col: message; exit 1 if any is an error. A directory stands for every " + behaviorExt + " file under it, except in hidden directories and testdata (as seat test finds transcripts); a directory holding none is an error."},
	{name: "run", args: "FILE...", summary: "Run behaviors on the simulated robot (or the device layer's backend) until they end or seat is stopped.",
		more: "Flags may come before or after the files. Several files run as several behaviors in one process."},
	{name: "ctl", args: "COMMAND", summary: "Manage a seat started with --control.", more: ctlCommands + debugCommands},
	{name: "test", args: "[PATH...]", summary: "Run conversation transcripts (.seattest files) against their behaviors on a virtual clock, with in-memory adaptors: the given files, or every transcript under the given directories (default .). Exit status 0 when all pass, 1 when one fails, 2 on bad input.",
		more: testSteps},
	{name: "replay", args: "RECORDING.jsonl [BEHAVIOR]", summary: "Re-run the inputs of a recording (seat run --record) on a virtual clock against the behavior (the recorded file, or BEHAVIOR) and compare the messages it sends with the recorded ones. Exit status 0 when they match, 1 at the first divergence (printed with its time, the recorded and the replayed message and the rules that sent them), 2 on bad input."},
	{name: "graph", args: "FILE", summary: "Print a behavior's state machine: states, transitions labelled with their keys and [cond], timeouts with their delay, push and pop, connection handlers and buttons that move; includes resolved. Exit status 1 if the file has errors.",
		more: "Render it: seat graph FILE | dot -Tsvg > FILE.svg, or paste --format mermaid into a Markdown page."},
	{name: "port", args: "FILE...", summary: "Carry eSEAT behavior files to seat: older spellings become the modern ones and Python script bodies become Lua where the translation is mechanical; what is left for hand work is listed as file:line: reason, and what seat check would refuse in the result is marked there with a comment. Prints the result, or rewrites the files with -w, or prints a diff with -d. Exit status 0 when everything was translated and the result passes seat check, 1 when something needs hand work, 2 on bad input."},
	{name: "motion check", args: "SCRIPT...", summary: "Check motion scripts (NUbots YAML) against the device tree and servo mapping; exit 1 on any error. A directory stands for its .yaml scripts (not servos.yaml). " + scriptArg},
	{name: "motion play", args: "SCRIPT", summary: "Play a motion script on the simulator and print the joint trajectory as CSV. " + scriptArg},
	{name: "version", summary: "Print seat's version (seat --version and seat -v too): the module version, or (devel) and the commit it was built from, then the Go version and the platform."},
	{name: "help", args: "[COMMAND [SUBCOMMAND]]", summary: "Print the usage of seat, or of one command: the same text as seat COMMAND -h, with the command's flags."},
}

// scriptArg says how seat motion finds a SCRIPT (scriptDirs).
const scriptArg = "SCRIPT is a file, or a script's name (Nod), looked for in --scripts DIR when given, else in ./scripts, then ./examples/scripts, then seat's built-in copy of examples/scripts; a name found nowhere is an error listing the paths tried."

func findCommand(name string) (command, bool) {
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return commands[i], true
}

// errHelp is returned when -h or --help was asked for: the usage went to
// standard output and the exit status is 0.
var errHelp = errors.New("help")

// newFlags returns the flag set of a command; its errors go to stderr.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // parseFlags prints the usage itself
	return fs
}

// printUsage writes a command's usage: the line, its sentence, and a
// sentence per flag.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	c, _ := findCommand(fs.Name())
	line := "seat " + c.name
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		line += " [flags]"
	}
	if c.args != "" {
		line += " " + c.args
	}
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", line, c.summary)
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
	if c.more != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.more, "\n"))
	}
}

// parseFlags parses flags anywhere among args, as Go's tools accept them
// (seat run greeter.seatml --log-level=debug); "--" ends the flags. It
// returns the other arguments in order. -h, -help and --help print the
// usage to stdout and return errHelp; a bad flag prints the error and a
// pointer to seat help on stderr.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	if f := flagsDefined.Load(); f != nil {
		(*f)(fs)
	}
	var rest, tail []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, tail = args[:i], args[i+1:]
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(stdout, fs)
				return nil, errHelp
			}
			if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
				var names []string
				fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
				if s := schema.Suggest(strings.TrimLeft(name, "-"), names); s != "" {
					fmt.Fprintf(fs.Output(), "Did you mean --%s?\n", s)
				}
			}
			fmt.Fprintf(fs.Output(), "Run \"seat help %s\" for usage.\n", fs.Name())
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		rest, args = append(rest, args[0]), args[1:]
	}
	return append(rest, tail...), nil
}

// flagsDefined, when set, is called by parseFlags with each command's flag
// set, every flag defined, before parsing. Tests read a command's real
// flags through it, to hold its help text to them.
var flagsDefined atomic.Pointer[func(*flag.FlagSet)]

// parseFiles is parseFlags for a command that needs at least one file
// argument. It returns nil files when the command should end, with the
// result to return (nil after -h).
func parseFiles(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, error) {
	files, err := parseFlags(fs, args, stdout)
	if err != nil {
		return nil, flagExit(err)
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "seat %s: no files given; run \"seat help %s\" for usage\n", fs.Name(), fs.Name())
		return nil, exitStatus(2)
	}
	return files, nil
}

// flagExit turns parseFlags' error into the command's result: nil for
// help, exit status 2 for a bad flag.
func flagExit(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return exitStatus(2)
}

// helpCmd is seat help [COMMAND [SUBCOMMAND]]. It runs seat COMMAND
// [SUBCOMMAND] -h, so that both print the same text: the command's usage,
// with the flags it really defines.
func helpCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("help", stderr)
	names, err := parseFlags(fs, args, stdout)
	if err != nil {
		return flagExit(err)
	}
	if len(names) == 0 {
		fmt.Fprint(stdout, usage)
		return nil
	}
	name := strings.Join(names, " ")
	if topics := helpTopics(); !slices.Contains(topics, name) {
		fmt.Fprintf(stderr, "seat help: unknown command %q%s\n\n%s", name, schema.DidYouMean(name, topics, "%q"), usage)
		return exitStatus(2)
	}
	return run(context.Background(), append(names, "-h"), nil, stdout, stderr)
}

// helpTopics lists what seat help accepts: every command ("motion play")
// and every group of commands ("motion").
func helpTopics() []string {
	var topics []string
	for _, c := range commands {
		if group, _, ok := strings.Cut(c.name, " "); ok && !slices.Contains(topics, group) {
			topics = append(topics, group)
		}
		topics = append(topics, c.name)
	}
	return topics
}

// versionCmd is seat version, also run as seat --version and seat -v.
func versionCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return flagExit(err)
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "seat version: takes no arguments, not %q; run \"seat help version\" for usage\n", rest[0])
		return exitStatus(2)
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionLine(bi))
	return nil
}

// versionLine is what seat version prints, from the build information of
// the binary: "seat version v0.2.0 (go1.26.8 linux/amd64)" for a module
// version (go install ...@v0.2.0, or a pseudo-version such as
// v0.0.0-20260102150405-0123456789ab+dirty for go build in a checkout),
// "seat version (devel) 0123456789ab+modified (...)" when the build has no
// module version but knows its commit, and "seat version (devel) (...)"
// when it knows neither (go run, a test binary).
func versionLine(bi *debug.BuildInfo) string {
	v := "(devel)"
	goVersion, goos, goarch := runtime.Version(), runtime.GOOS, runtime.GOARCH
	if bi != nil {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		var rev string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "GOOS":
				goos = s.Value
			case "GOARCH":
				goarch = s.Value
			}
		}
		if v == "(devel)" && rev != "" {
			v += " " + rev[:min(len(rev), 12)]
			if modified {
				v += "+modified"
			}
		}
	}
	return fmt.Sprintf("seat version %s (%s %s/%s)", v, goVersion, goos, goarch)
}

// setFlags collects --set ADAPTOR.ATTR=VALUE, repeatable.
type setFlags []seatml.Override

func (s *setFlags) String() string {
	parts := make([]string, len(*s))
	for i, o := range *s {
		parts[i] = o.String()
	}
	return strings.Join(parts, ",")
}

func (s *setFlags) Set(v string) error {
	o, err := seatml.ParseOverride(v)
	if err != nil {
		return err
	}
	*s = append(*s, o)
	return nil
}

// register adds --set to fs.
func (s *setFlags) register(fs *flag.FlagSet) {
	fs.Var(s, "set", "Override an adaptor attribute of the files without editing them, as ADAPTOR.ATTRIBUTE=VALUE (--set chat.port=5100); repeatable.")
}

// unused reports the overrides that name no adaptor of any program.
func (s setFlags) unused(progs []*seatml.Program, stderr io.Writer) bool {
	var names []string
	for _, p := range progs {
		for _, a := range p.Adaptors {
			names = append(names, a.Name)
		}
	}
	bad := false
	for _, o := range s {
		if !slices.Contains(names, o.Adaptor) {
			fmt.Fprintf(stderr, "--set %s: no behavior has an adaptor %q%s\n", o, o.Adaptor, schema.DidYouMean(o.Adaptor, names, "%q"))
			bad = true
		}
	}
	return bad
}
