package seatml

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seatml/seat/hal"
	"github.com/seatml/seat/hal/motion"
	"github.com/seatml/seat/schema"
)

// DefaultScriptsDir is where, in the working directory, motion scripts
// are looked for after scripts/ beside the behavior and ./scripts, when
// neither --scripts nor general@scripts is given (ScriptDirs).
const DefaultScriptsDir = "examples/scripts"

// setupDevices resolves the device tree, the scripts directory and the servo
// mapping of a behavior (docs/devices.md §1, "Device files", and §6, "Where
// scripts are found").
func (c *compiler) setupDevices(g *schema.Node) {
	p := c.prog
	dir := filepath.Dir(c.file)
	switch {
	case c.ld.opts.Tree != nil:
		p.Tree = c.ld.opts.Tree
	case p.Devices != "":
		a, _ := g.Attr("devices")
		path := relativeTo(dir, p.Devices)
		p.DevicesFile = path
		data, err := c.ld.opts.ReadFile(path)
		if err != nil {
			c.errorf(a.ValuePos, "devices %q: %v", p.Devices, schema.FileCause(err))
			break
		}
		tree, diags := hal.LoadTree(path, data)
		c.ld.diags.Add(diags)
		p.Tree = tree
	}
	if p.Tree == nil {
		p.Tree = hal.NAOTree()
	}
	explicit := c.ld.opts.ScriptsDir
	if explicit == "" && p.Scripts != "" {
		explicit = relativeTo(dir, p.Scripts)
	}
	p.ScriptDirs = ScriptDirs(explicit, dir)
	// servos.yaml is read from the first of them that is a directory.
	p.ScriptsDir = p.ScriptDirs[len(p.ScriptDirs)-1]
	for _, d := range p.ScriptDirs {
		if explicit != "" || isDir(d) {
			p.ScriptsDir = d
			break
		}
	}
	p.Servos = motion.DefaultServos()
	servosFile := filepath.Join(p.ScriptsDir, "servos.yaml")
	if data, err := ReadScript(servosFile, c.ld.opts.ReadFile); err == nil {
		m, diags := motion.LoadServos(servosFile, data, p.Tree)
		c.ld.diags.Add(diags)
		if m != nil {
			p.Servos = m
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		c.errorf(g.Pos, "%s: %v", servosFile, err)
	}
	if err := motion.CheckMapping(p.Servos, p.Tree); err != nil {
		c.errorf(g.Pos, "%v", err)
	}
}

// motion compiles a <motion> action: its scripts are found, parsed and
// checked (mapping and joint ranges) now.
func (c *compiler) motion(n *schema.Node) *MotionDecl {
	d := &MotionDecl{Name: n.AttrValue("name"), Multiplier: 0, Timeout: motion.DefaultTimeout}
	ms := func(attr string) time.Duration {
		v, err := strconv.Atoi(strings.TrimSpace(n.AttrValue(attr)))
		if err != nil {
			return 0 // reported by schema.Check
		}
		return time.Duration(v) * time.Millisecond
	}
	d.Priority, _ = strconv.Atoi(strings.TrimSpace(n.AttrValue("priority")))
	d.Duration, d.Start = ms("duration"), ms("start")
	if n.Has("timeout") {
		d.Timeout = ms("timeout")
	}
	if v, ok := schema.ParseNumber(n.AttrValue("multiplier")); ok {
		d.Multiplier = v
	}
	if n.Has("duration") && n.Has("multiplier") {
		a, _ := n.Attr("multiplier")
		c.errorf(a.Pos, "<motion> takes duration or multiplier, not both")
	}
	if a, ok := n.Attr("script"); ok {
		d.Scripts = c.scripts(a)
	}
	if a, ok := n.Attr("stop"); ok {
		d.Stop = c.scripts(a)
	}
	if d.Name == "" {
		names := make([]string, 0, len(d.Scripts))
		for _, s := range d.Scripts {
			names = append(names, s.Name)
		}
		d.Name = strings.Join(names, "-")
	}
	return d
}

// scripts resolves and parses a comma-separated list of script names.
func (c *compiler) scripts(a schema.Attr) []*motion.Script {
	var out []*motion.Script
	for _, name := range strings.Split(a.Value, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			c.errorf(a.ValuePos, "<motion> %s %q names an empty script", a.Name, a.Value)
			continue
		}
		if _, err := motion.Resolve("", name); err != nil { // ".." or an absolute path
			c.errorf(a.ValuePos, "<motion> %s %v", a.Name, err)
			continue
		}
		path, err := FindScript(c.prog.ScriptDirs, name)
		if err != nil {
			c.errorf(a.ValuePos, "<motion> %s: %v", a.Name, err)
			continue
		}
		s, seen := c.ld.scripts[path]
		if !seen {
			s = c.parseScript(a, name, path)
			c.ld.scripts[path] = s
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (c *compiler) parseScript(a schema.Attr, name, path string) *motion.Script {
	data, err := ReadScript(path, c.ld.opts.ReadFile)
	if err != nil {
		c.errorf(a.ValuePos, "<motion> %s %q: %s: %v", a.Name, name, path, schema.FileCause(err))
		return nil
	}
	s, diags := motion.Parse(path, data)
	c.ld.diags.Add(diags)
	if s == nil {
		c.errorf(a.ValuePos, "<motion> %s %q has errors", a.Name, name)
		return nil
	}
	tree := c.prog.Tree
	c.ld.diags.Add(motion.CheckRanges(s, c.prog.Servos, func(j string) (float64, float64, bool) {
		if jt := tree.Joint(j); jt != nil {
			return jt.Position.Min, jt.Position.Max, true
		}
		return 0, 0, false
	}))
	return s
}

// relativeTo resolves a path attribute against the behavior file's
// directory; an absolute path stays as it is.
func relativeTo(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}
