//go:build integration

package spark

import (
	"context"
	"os"
	"testing"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
)

func TestMain(m *testing.M) { os.Exit(sparktest.Main(m)) }

// Spark turns the file URIs it reports into the files as the user wrote
// them: file: goes, dbfs: goes unless the user wrote it (Databricks
// reports a Unity Catalog volume's /Volumes/... as dbfs:/Volumes/...),
// other schemes stay; percent-escapes are decoded and '+' stays '+'.
func TestLiveRowFileOf(t *testing.T) {
	ctx := context.Background()
	c, err := Connect(ctx, sparktest.Remote(t), ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tests := []struct {
		uri      string
		keepDBFS bool
		want     string
	}{
		{"file:/data/my%20file+1.csv", false, "/data/my file+1.csv"},
		{"file:///data/a.csv", false, "/data/a.csv"},
		{"dbfs:/Volumes/c/s/v/in/a%25b.csv", false, "/Volumes/c/s/v/in/a%b.csv"},
		{"dbfs:/Volumes/c/s/v/in/a.csv", true, "dbfs:/Volumes/c/s/v/in/a.csv"},
		{"file:/data/a.csv", true, "/data/a.csv"},
		{"s3a://bucket/in/a%20b.csv", false, "s3a://bucket/in/a b.csv"},
		{"hdfs://nn:8020/dbfs:/x.csv", false, "hdfs://nn:8020/dbfs:/x.csv"},
	}
	for _, tt := range tests {
		rows, err := c.sess.SQL("SELECT " + rowFileOf("'"+tt.uri+"'", tt.keepDBFS)).Collect(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tt.uri, err)
		}
		if got := rows.Values[0][0]; got != tt.want {
			t.Errorf("rowFileOf(%s, keep dbfs %v) = %v, want %s", tt.uri, tt.keepDBFS, got, tt.want)
		}
	}
}
