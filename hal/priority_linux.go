package hal

import (
	"fmt"
	"syscall"
	"unsafe"
)

// loopRTPriority is the SCHED_FIFO priority of the control loop's thread:
// above every ordinary thread, below the kernel's own real-time threads.
const loopRTPriority = 10

// loopNice is the nice value tried when the real-time class is refused.
const loopNice = -10

// raisePriority puts the calling thread (locked to its goroutine) in the
// real-time class, SCHED_FIFO, so that it preempts ordinary threads the
// moment its tick is due; failing that (it needs CAP_SYS_NICE), it lowers
// its nice value. It describes the priority obtained and reports whether
// it changed anything.
func raisePriority() (string, bool) {
	param := struct{ priority int32 }{loopRTPriority}
	const schedFIFO = 1
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(syscall.Gettid()), schedFIFO, uintptr(unsafe.Pointer(&param)))
	if errno == 0 {
		return fmt.Sprintf("SCHED_FIFO %d", loopRTPriority), true
	}
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), loopNice); err != nil {
		return fmt.Sprintf("normal (SCHED_FIFO: %v; nice %d: %v)", errno, loopNice, err), false
	}
	return fmt.Sprintf("nice %d", loopNice), true
}
