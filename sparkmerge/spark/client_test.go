package spark

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// Connect with no remote uses SPARK_REMOTE, as PySpark does.
func TestConnectDefaultsToSparkRemote(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a closed port: the dial fails fast, naming it
	t.Setenv("SPARK_REMOTE", "sc://"+addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = Connect(ctx, "", ConnectOptions{})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Errorf("err = %v, want unreachable at SPARK_REMOTE's %s", err, addr)
	}
	if _, err := Connect(ctx, "", ConnectOptions{SessionID: "not-a-uuid"}); err == nil || !strings.Contains(err.Error(), "not a UUID") {
		t.Errorf("a session id that is not a UUID: err = %v", err)
	}
}
