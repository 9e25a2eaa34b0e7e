package manager

import (
	"context"
	"errors"
	"os"
	"time"

	"go.uber.org/zap"
)

// WatchEvery is how often Watch looks at the behaviors' files.
const WatchEvery = 200 * time.Millisecond

// fileStamp is what Watch compares: a file's size and modification time
// (size -1 when it cannot be read).
type fileStamp struct {
	size int64
	mod  time.Time
}

func stampOf(path string) fileStamp {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{size: -1}
	}
	return fileStamp{st.Size(), st.ModTime()}
}

// Watch reloads a behavior when one of its files (the file and its
// includes) is saved, until ctx ends (seat run --watch): once a change
// has settled (the file unchanged for one look), the file is checked; a
// clean file is reloaded, keeping the behavior's state (ReloadWith), and
// one with errors is logged, error by error, and changes nothing. The
// files as they are when it is called are the ones saves are told from;
// it looks every WatchEvery in a goroutine of its own.
func (mg *Manager) Watch(ctx context.Context) {
	stamps := map[string]map[string]fileStamp{} // by behavior, by file
	pending := map[string]bool{}                // behaviors whose files changed at the last look
	mg.look(stamps, pending)
	go func() {
		t := time.NewTicker(WatchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			mg.look(stamps, pending)
		}
	}()
}

// look compares the behaviors' files with the last look's stamps, and
// reloads those whose change has settled.
func (mg *Manager) look(stamps map[string]map[string]fileStamp, pending map[string]bool) {
	for _, b := range mg.watched() {
		old := stamps[b.name]
		now := map[string]fileStamp{}
		changed := false
		for _, f := range b.files {
			now[f] = stampOf(f)
			if o, ok := old[f]; ok && o != now[f] {
				changed = true
			}
		}
		stamps[b.name] = now // a file an edit includes anew counts from here
		switch {
		case changed:
			pending[b.name] = true // wait for the save to settle
		case pending[b.name]:
			delete(pending, b.name)
			mg.reloadSaved(b.name)
		}
	}
}

// watchedBehavior is a loaded behavior's name and files.
type watchedBehavior struct {
	name  string
	files []string
}

func (mg *Manager) watched() []watchedBehavior {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	var out []watchedBehavior
	for _, e := range mg.entries {
		if e.prog == nil {
			continue
		}
		files := e.prog.Sources
		if len(files) == 0 {
			files = []string{e.file}
		}
		out = append(out, watchedBehavior{e.name, files})
	}
	return out
}

// reloadSaved reloads a behavior whose file was saved, and logs how it
// went.
func (mg *Manager) reloadSaved(name string) {
	info, err := mg.Reload(name)
	var le *LoadError
	switch {
	case errors.As(err, &le):
		for _, d := range le.Diagnostics {
			mg.log.Warn("saved file has errors; not reloaded", zap.String("behavior", name), zap.String("error", d.Error()))
		}
	case err != nil:
		mg.log.Error("reload of the saved file failed", zap.String("behavior", name), zap.Error(err))
	default:
		mg.log.Info("saved file reloaded", zap.String("behavior", name), zap.Strings("active", info.Active),
			zap.Bool("kept", info.Kept), zap.Strings("not_kept", info.NotKept))
	}
}
