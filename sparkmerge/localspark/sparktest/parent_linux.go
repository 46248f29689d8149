package sparktest

import (
	"os/exec"
	"syscall"
)

// stopWithParent makes cmd, a child process of the harness (the object
// store), end when this process does, however it ends (see reapWhenGone).
func stopWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
