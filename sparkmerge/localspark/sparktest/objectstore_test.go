package sparktest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeMoto points the harness at a jar directory and at script as moto's
// server.
func fakeMoto(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hadoop-aws-0.jar"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	moto := filepath.Join(dir, "moto_server")
	if err := os.WriteFile(moto, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SPARKMERGE_S3A_JARS", dir)
	t.Setenv("SPARKMERGE_MOTO_SERVER", moto)
}

// A server that dies before answering fails the start with its exit and
// its log, not with the wait running out ("did not answer").
func TestObjectStoreExitsBeforeAnswering(t *testing.T) {
	fakeMoto(t, "echo 'ImportError: no module named werkzeug' >&2\nexit 3\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, _, err := startObjectStore(ctx)
	if err == nil {
		s.stop()
		t.Fatal("started")
	}
	for _, want := range []string{"exited before answering", "exit status 3", "ImportError: no module named werkzeug"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// Without the store's pieces there is no store and a reason, not an error.
func TestObjectStoreNotConfigured(t *testing.T) {
	t.Setenv("SPARKMERGE_S3A_JARS", "")
	t.Setenv("SPARKMERGE_MOTO_SERVER", "")
	s, reason, err := startObjectStore(context.Background())
	if s != nil || err != nil || !strings.Contains(reason, "scripts/fetch-s3.sh") {
		t.Errorf("store %v, reason %q, error %v", s, reason, err)
	}
}
