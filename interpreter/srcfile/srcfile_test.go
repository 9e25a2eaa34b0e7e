package srcfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRead: a file under the directory is read (Japanese names too);
// what leads outside is refused with the same error whether or not the
// file outside exists; what is not a regular file, or too large, is
// refused, a FIFO without blocking.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("台本.lua", "x = 1")
	write("下/データ.json", `{"名前": "花子"}`)
	os.Symlink("台本.lua", filepath.Join(dir, "内への鎖"))
	os.Symlink("/etc/passwd", filepath.Join(dir, "外への鎖"))
	os.Symlink("/no/such/外", filepath.Join(dir, "無への鎖"))
	os.Symlink("../../../../../../etc/passwd", filepath.Join(dir, "上への鎖"))
	if err := syscall.Mkfifo(filepath.Join(dir, "管"), 0o600); err != nil {
		t.Fatal(err)
	}
	big, _ := os.Create(filepath.Join(dir, "大きい"))
	big.Truncate(MaxSize + 1)
	big.Close()
	full, _ := os.Create(filepath.Join(dir, "ちょうど"))
	full.Truncate(MaxSize)
	full.Close()

	for _, tc := range []struct {
		name, want string // want: the text read, or "error: " and the error
	}{
		{"台本.lua", "x = 1"},
		{"下/データ.json", `{"名前": "花子"}`},
		{"下/../台本.lua", "x = 1"},
		{"内への鎖", "x = 1"},
		{"../" + filepath.Base(dir) + "/台本.lua", "error: " + ErrOutside.Error()},
		{"/etc/passwd", "error: " + ErrOutside.Error()},
		{"/no/such/外", "error: " + ErrOutside.Error()},
		{"../../../../../../etc/passwd", "error: " + ErrOutside.Error()},
		{"/dev/zero", "error: " + ErrOutside.Error()},
		{"外への鎖", "error: " + ErrOutside.Error()},
		{"無への鎖", "error: " + ErrOutside.Error()},
		{"上への鎖", "error: " + ErrOutside.Error()},
		{"管", "error: it is not a regular file (a FIFO): seat reads only regular files"},
		{"下", "error: it is not a regular file (a directory): seat reads only regular files"},
		{"大きい", "error: it is larger than 4 MiB, the most seat reads of a file a document names"},
		{"無い", "error: no such file or directory"},
		{"", "error: the path is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var data []byte
			var err error
			go func() {
				defer close(done)
				data, err = Read(dir, tc.name)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				// Let the reader go: a writer opens and closes the FIFO.
				if w, err := os.OpenFile(filepath.Join(dir, "管"), os.O_WRONLY, 0); err == nil {
					w.Close()
				}
				<-done
				t.Fatalf("Read(%q) still blocked after 10 s", tc.name)
			}
			got := string(data)
			if err != nil {
				got = "error: " + err.Error()
			}
			if len(got) > 100 {
				got = got[:100] + "…"
			}
			if got != tc.want {
				t.Errorf("Read(%q) = %q; want %q", tc.name, got, tc.want)
			}
		})
	}
	if data, err := Read(dir, "ちょうど"); err != nil || len(data) != MaxSize {
		t.Errorf("a file of MaxSize bytes: %d bytes, %v", len(data), err)
	}
	if _, err := Read(dir, "無い"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v; want fs.ErrNotExist", err)
	}
	if _, err := Read(dir, "/etc/passwd"); !errors.Is(err, ErrOutside) || strings.Contains(err.Error(), "passwd") {
		t.Errorf("outside: %v; want ErrOutside, without the name", err)
	}
}
