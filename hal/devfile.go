package hal

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/seatml/seat/schema"
)

// LoadTree reads a device file (docs/devices.md §1, "Device files") and
// reports every problem at once, positioned.
func LoadTree(file string, data []byte) (*Tree, schema.List) {
	root, diags := schema.ParseXML(file, data)
	if root == nil {
		return nil, diags
	}
	if root.Name != "devices" {
		diags.Errorf(root.Pos, "root element is <%s>; a device file's root must be <devices>", root.Name)
		return nil, diags
	}
	t := &Tree{}
	byName := map[string]*Device{}
	for _, n := range root.Children {
		if n.Name == "device" {
			if d := readDevice(n, &diags); d != nil {
				t.Devices = append(t.Devices, d)
				if _, dup := byName[d.Name]; !dup {
					byName[d.Name] = d
				}
			}
		}
	}
	for _, n := range root.Children {
		switch n.Name {
		case "device":
		case "subdevice":
			if s := readSub(n, byName, &diags); s != nil {
				t.Subs = append(t.Subs, s)
			}
		default:
			diags.Errorf(n.Pos, "unknown element <%s> in <devices>%s", n.Name, schema.DidYouMean(n.Name, []string{"device", "subdevice"}, "<%s>"))
		}
	}
	t.build(&diags)
	diags.Sort()
	if diags.HasErrors() {
		return nil, diags
	}
	return t, diags
}

func require(n *schema.Node, l *schema.List, names ...string) bool {
	ok := true
	for _, name := range names {
		if !n.Has(name) {
			l.Errorf(n.Pos, "<%s> requires attribute %q", n.Name, name)
			ok = false
		}
	}
	return ok
}

func readDevice(n *schema.Node, l *schema.List) *Device {
	known := []string{"name", "type", "bus", "address"}
	for _, a := range n.Attrs {
		if !slices.Contains(known, a.Name) {
			l.Errorf(a.Pos, "unknown attribute %q on <device>%s", a.Name, schema.DidYouMean(a.Name, known, "%q"))
		}
	}
	if !require(n, l, "name", "type", "bus", "address") {
		return nil
	}
	d := &Device{Name: n.AttrValue("name"), Type: n.AttrValue("type"), Bus: n.AttrValue("bus"), Pos: n.Pos}
	a, _ := n.Attr("address")
	addr, err := strconv.Atoi(strings.TrimSpace(a.Value))
	if err != nil || addr < 0 || addr > 255 {
		l.Errorf(a.ValuePos, "device address %q is not a whole number from 0 to 255", a.Value)
	}
	d.Address = addr
	return d
}

func readSub(n *schema.Node, devices map[string]*Device, l *schema.List) *SubDevice {
	if !require(n, l, "name", "type", "device", "number", "min", "max") {
		return nil
	}
	s := &SubDevice{Name: n.AttrValue("name"), Type: n.AttrValue("type"), Gain: 1, Interpolate: true, Pos: n.Pos, Extra: map[string]string{}}
	num := func(a schema.Attr) float64 {
		f, ok := schema.ParseNumber(a.Value)
		if !ok {
			l.Errorf(a.ValuePos, "subdevice %s %q is not a number", a.Name, a.Value)
		}
		return f
	}
	for _, a := range n.Attrs {
		switch a.Name {
		case "name", "type":
		case "device":
			if s.Device = devices[a.Value]; s.Device == nil {
				names := make([]string, 0, len(devices))
				for name := range devices {
					names = append(names, name)
				}
				l.Errorf(a.ValuePos, "subdevice %q: device %q is not declared%s", s.Name, a.Value, schema.DidYouMean(a.Value, names, "%q"))
			}
		case "number":
			i, err := strconv.Atoi(strings.TrimSpace(a.Value))
			if err != nil || i < 1 {
				l.Errorf(a.ValuePos, "subdevice number %q is not a whole number of 1 or more", a.Value)
			}
			s.Number = i
		case "gain":
			g, err := parseGain(a.Value)
			if err != nil || !(g > 0) || math.IsInf(g, 0) {
				l.Errorf(a.ValuePos, "subdevice gain %q is not a number greater than 0 (a decimal or a/b)", a.Value)
				g = 1
			}
			s.Gain = g
		case "offset":
			s.Offset = num(a)
		case "min":
			s.Min = num(a)
		case "max":
			s.Max = num(a)
		case "value":
			s.Initial = num(a)
		case "interpolate":
			b, err := strconv.ParseBool(a.Value)
			if err != nil {
				l.Errorf(a.ValuePos, "subdevice interpolate %q is not true or false", a.Value)
			}
			s.Interpolate = b
		case "maxSpeed":
			if s.MaxSpeed = num(a); s.MaxSpeed < 0 {
				l.Errorf(a.ValuePos, "subdevice maxSpeed %q is negative", a.Value)
			}
		default:
			s.Extra[a.Name] = a.Value
		}
	}
	return s
}

// WriteXML writes t in the device file format; LoadTree reads it back to
// the same tree.
func (t *Tree) WriteXML(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<devices>\n")
	for _, d := range t.Devices {
		fmt.Fprintf(&b, "  <device name=%q type=%q bus=%q address=\"%d\"/>\n", d.Name, d.Type, d.Bus, d.Address)
	}
	for _, s := range t.Subs {
		fmt.Fprintf(&b, "  <subdevice name=%q type=%q device=%q number=\"%d\" gain=%q", s.Name, s.Type, s.Device.Name, s.Number, formatGain(s.Gain))
		if s.Offset != 0 {
			fmt.Fprintf(&b, " offset=%q", ftoa(s.Offset))
		}
		fmt.Fprintf(&b, " min=%q max=%q", ftoa(s.Min), ftoa(s.Max))
		if s.Initial != 0 {
			fmt.Fprintf(&b, " value=%q", ftoa(s.Initial))
		}
		if !s.Interpolate {
			b.WriteString(` interpolate="false"`)
		}
		if s.MaxSpeed != 0 {
			fmt.Fprintf(&b, " maxSpeed=%q", ftoa(s.MaxSpeed))
		}
		keys := make([]string, 0, len(s.Extra))
		for k := range s.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%q", k, s.Extra[k])
		}
		b.WriteString("/>\n")
	}
	b.WriteString("</devices>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// formatGain writes 1/N gains as fractions, others exactly.
func formatGain(g float64) string {
	if n := math.Round(1 / g); n > 1 && 1/n == g {
		return "1/" + strconv.Itoa(int(n))
	}
	return ftoa(g)
}
