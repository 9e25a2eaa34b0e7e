package idl

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// FuzzParse parses arbitrary IDL: it must never panic nor hang, and the
// TypeCodes it makes must be writable or refused with an error.
// Seeds: OpenRTM's IDL (when found) and testdata.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(rtmDir(), "*.idl"))
	user, _ := filepath.Glob("testdata/user/*.idl")
	for _, s := range append(seeds, user...) {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"struct S; typedef sequence<S> SS; struct S { SS next; long x; };",
		"#define X long\n#define Y X X\ntypedef Y T;",
		"const long N = (1 << 3) % 5 * ~2 | 7; typedef long A[N + 10];",
		"module A { module B { enum E { P, Q }; const E e = Q; }; }; typedef A::B::E F;",
		"#if defined(X)\nx\n#elif 1\nmodule M {};\n#else\ny\n#endif\n",
		"#define X \\\ra\n#pragma x // \\\rb\n",
		"struct T0 { long x; }; struct T1 { T0 a; T0 b; }; struct T2 { T1 a; T1 b; }; typedef T2 T3[1000][1000];",
		"union U switch (long) { case 1: long a; default: string b; }; struct T { U u; };",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src []byte) {
		start := time.Now()
		// A hang crashes the worker, with every stack, so that the
		// fuzzer keeps the input.
		watchdog := time.AfterFunc(10*time.Second, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("FuzzParse: %d bytes still parsing after 10s\n%s", len(src), buf[:runtime.Stack(buf, true)]))
		})
		defer watchdog.Stop()
		l := NewLoader(nil)
		_ = l.Parse(filepath.Join(dir, "fuzz.idl"), src)
		for _, n := range l.Types() {
			tc, err := l.Lookup(n)
			if err != nil {
				continue
			}
			_ = corba.NewEncoder(corba.LittleEndian).WriteTypeCode(tc)
			_ = tc.String()
		}
		if d := time.Since(start); d > time.Second && len(src) < 1<<16 {
			t.Errorf("%d bytes took %v", len(src), d)
		}
	})
}
