// Command rssmap tells where a running Go program's resident memory is:
// its anonymous memory, and the pages of its own binary that are mapped,
// by ELF section and, in .text, by Go package. Linux only (it reads
// /proc/PID/maps, smaps_rollup and pagemap; root, or the process's owner
// with CAP_SYS_ADMIN, sees which pages are present).
//
//	go run ./bench/cmd/rssmap PID            # the binary is /proc/PID/exe
//	go run ./bench/cmd/rssmap -top 30 PID
package main

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

var top = flag.Int("top", 20, "packages of .text to list")

func main() {
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: rssmap [-top N] PID")
		os.Exit(2)
	}
	if err := run(flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "rssmap:", err)
		os.Exit(1)
	}
}

func run(pid string) error {
	proc := filepath.Join("/proc", pid)
	bin, err := os.Readlink(filepath.Join(proc, "exe"))
	if err != nil {
		return err
	}
	f, err := elf.Open(filepath.Join(proc, "exe"))
	if err != nil {
		return err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("%s: %w (built with -ldflags=-s?)", bin, err)
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].Value < syms[j].Value })
	pm, err := os.Open(filepath.Join(proc, "pagemap"))
	if err != nil {
		return err
	}
	defer pm.Close()
	maps, err := os.ReadFile(filepath.Join(proc, "maps"))
	if err != nil {
		return err
	}
	bySection, byPackage := map[string]int{}, map[string]int{}
	pages := 0
	for _, line := range strings.Split(string(maps), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 6 || fields[5] != bin {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		for a := start; a < end; a += 4096 {
			var e [8]byte
			if _, err := pm.ReadAt(e[:], int64(a/4096*8)); err != nil {
				return err
			}
			v := binary.LittleEndian.Uint64(e[:])
			if v>>63 == 0 {
				continue
			}
			pages++
			sec := section(f, a)
			bySection[sec]++
			if sec == ".text" {
				byPackage[pkg(symbolAt(syms, a))]++
			}
		}
	}
	if pages == 0 {
		return errors.New("no page of the binary is present: is pagemap readable (run as root)?")
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	if roll, err := os.ReadFile(filepath.Join(proc, "smaps_rollup")); err == nil {
		for _, l := range strings.Split(string(roll), "\n") {
			if strings.HasPrefix(l, "Rss:") || strings.HasPrefix(l, "Anonymous:") {
				fmt.Fprintln(w, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	fmt.Fprintf(w, "pages of %s: %d kB\n", bin, pages*4)
	for _, kv := range sorted(bySection) {
		fmt.Fprintf(w, "  %8d kB  %s\n", kv.n*4, kv.k)
	}
	fmt.Fprintf(w, ".text by package (top %d):\n", *top)
	for i, kv := range sorted(byPackage) {
		if i == *top {
			break
		}
		fmt.Fprintf(w, "  %8d kB  %s\n", kv.n*4, kv.k)
	}
	return nil
}

func section(f *elf.File, a uint64) string {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && a >= s.Addr&^4095 && a < s.Addr+s.Size {
			return s.Name
		}
	}
	return "(between sections)"
}

func symbolAt(syms []elf.Symbol, a uint64) string {
	i := sort.Search(len(syms), func(i int) bool { return syms[i].Value > a }) - 1
	if i < 0 {
		return "?"
	}
	return syms[i].Name
}

// pkg is a Go symbol's package: "net/http.(*conn).serve" is net/http.
func pkg(sym string) string {
	slash := strings.LastIndex(sym, "/")
	if d := strings.Index(sym[slash+1:], "."); d >= 0 {
		return sym[:slash+1+d]
	}
	return sym
}

type count struct {
	k string
	n int
}

func sorted(m map[string]int) []count {
	var out []count
	for k, n := range m {
		out = append(out, count{k, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n > out[j].n || out[i].n == out[j].n && out[i].k < out[j].k })
	return out
}
