//go:build unix

package sparktest

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// reapWhenGone removes the container id once this process has ended,
// however it ends. A test binary that reaches go test's -timeout panics
// past every deferred Stop, and without the reaper container (Ryuk, which
// needs a registry) its Spark would run on, holding its heap, until
// someone removed it by hand: a watcher in a session of its own (a
// Ctrl-C to the run's process group does not reach it) outlives this
// process and removes the container then. A container already removed
// costs nothing.
func reapWhenGone(id string) {
	if id == "" {
		return
	}
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 2; done; docker rm -f %s >/dev/null 2>&1", os.Getpid(), id)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "sparktest: no watcher for container %s (remove it by hand if this run is killed): %v\n", id, err)
		return
	}
	cmd.Process.Release()
}
