package sparktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Shared is one Spark server, and the S3 object store it reads, for every
// test binary of a run: a test binary whose environment holds [Shared.Env]
// uses it (see [Main]) instead of starting a container of its own, so a
// run starts Spark once, not once per package. scripts/test.sh starts it
// through scripts/testspark.
type Shared struct {
	srv     *Server
	work    string
	cluster string
	mounts  []string
}

// StartShared starts the object store (when SPARKMERGE_S3A_JARS and
// SPARKMERGE_MOTO_SERVER name its pieces) and Spark, which sees mounts
// at their own paths besides a work root of its own and the cluster
// directory at [ClusterMount]. Stop it with [Shared.Stop].
func StartShared(ctx context.Context, mounts []string) (*Shared, error) {
	for _, m := range mounts {
		if !filepath.IsAbs(m) {
			return nil, fmt.Errorf("mount %q: not an absolute path", m)
		}
	}
	s := &Shared{mounts: mounts}
	var err error
	if s.work, err = os.MkdirTemp("", "sparktest-shared-"); err != nil {
		return nil, err
	}
	if s.cluster, err = os.MkdirTemp("", "sparktest-shared-cluster-"); err != nil {
		os.RemoveAll(s.work)
		return nil, err
	}
	// Spark in a container writes as root; let it write here.
	os.Chmod(s.work, 0o777)
	os.Chmod(s.cluster, 0o777)
	if s.srv, err = start(ctx, append(append([]string(nil), mounts...), s.work), s.cluster); err != nil {
		os.RemoveAll(s.work)
		os.RemoveAll(s.cluster)
		return nil, err
	}
	return s, nil
}

// Env is the environment that hands the server to test binaries, as
// KEY=VALUE.
func (s *Shared) Env() []string {
	env := []string{
		EnvSharedRemote + "=" + s.srv.Remote(),
		EnvSharedWorkRoot + "=" + s.work,
		EnvSharedClusterRoot + "=" + s.cluster,
		EnvSharedMounts + "=" + strings.Join(s.mounts, string(os.PathListSeparator)),
		EnvSharedContainer + "=" + s.srv.Container().GetContainerID(),
	}
	if s.srv.store != nil {
		return append(env, EnvSharedObjectStore+"="+s.srv.store.endpoint)
	}
	return append(env, EnvSharedNoObjectStore+"="+s.srv.noStore)
}

// Exited reports whether Spark's container stopped running before
// [Shared.Stop], and then how it ended: its exit code, whether the kernel
// killed it for memory, and the last lines of its log (Spark exits on an
// OutOfMemoryError, say, and every later test fails as unreachable).
func (s *Shared) Exited(ctx context.Context) (bool, string) {
	state, err := s.srv.Container().State(ctx)
	if err != nil || state.Running {
		return false, ""
	}
	return true, fmt.Sprintf("exit code %d, killed for memory: %v; the last lines of its log:\n%s",
		state.ExitCode, state.OOMKilled, s.srv.LogTail(80))
}

// Stop stops Spark and the object store and removes the work and cluster
// roots. It is safe to call more than once.
func (s *Shared) Stop() {
	s.srv.Stop()
	os.RemoveAll(s.work)
	os.RemoveAll(s.cluster)
}
