//go:build !unix

package spark

import (
	"errors"
	"os"
)

// errPoolUnsupported: sessions are not pooled on this system.
var errPoolUnsupported = errors.New("session pool: no file locks on this system")

// lockFile: no pool without file locks.
func lockFile(*os.File) (bool, error) { return false, errPoolUnsupported }

// unlockFile: no pool without file locks.
func unlockFile(*os.File) error { return errPoolUnsupported }
