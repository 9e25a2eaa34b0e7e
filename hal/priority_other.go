//go:build !linux

package hal

func raisePriority() (string, bool) { return "normal (thread priorities not supported here)", false }
