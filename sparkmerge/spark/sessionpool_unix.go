//go:build unix

package spark

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes f's exclusive lock without waiting: false when another
// open file holds it. The system drops the lock when its process dies.
func lockFile(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// unlockFile drops f's lock.
func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
