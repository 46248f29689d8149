//go:build integration

package spark

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
)

func TestMain(m *testing.M) { os.Exit(sparktest.Main(m)) }

// liveClient is a client of the test's Spark, closed when the test ends.
func liveClient(t *testing.T) *Client {
	t.Helper()
	c, err := Connect(context.Background(), sparktest.Remote(t), ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Of a Parquet file over parquetTailBytes, Spark returns exactly its
// footer (with its length and magic), which the client then types it
// from: not the whole tail.
func TestLiveFetchedContentIsTheFooter(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t)
	dir := filepath.Join(sparktest.WorkDir(t), "big")
	err := c.sess.SQL("SELECT id, sha2(CAST(id AS STRING), 512) AS h FROM range(0, 3000)").Coalesce(1).
		Write(ctx, connect.WriteSpec{Format: "parquet", Mode: "overwrite", Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(files) != 1 {
		t.Fatalf("%v, %v: want one Parquet file", files, err)
	}
	whole, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) <= parquetTailBytes {
		t.Fatalf("a file of %d bytes, want over %d", len(whole), parquetTailBytes)
	}
	footer := int(binary.LittleEndian.Uint32(whole[len(whole)-8:])) + 8
	fetched, err := sessionServer{c.sess}.fetchFiles(ctx, fileFetch{paths: []string{literalPath(files[0])}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fetched) != 1 || string(fetched[0].content) != string(whole[len(whole)-footer:]) {
		n := 0
		if len(fetched) == 1 {
			n = len(fetched[0].content)
		}
		t.Fatalf("fetched %d files, the first %d bytes; want the file's last %d bytes (its footer)", len(fetched), n, footer)
	}
	if !footerFetched(&Read{Format: "parquet"}, fetched[0]) {
		t.Error("the fetched footer does not type the file")
	}
}

// Spark turns the file URIs it reports into the files as the user wrote
// them: file: goes, dbfs: goes unless the user wrote it (Databricks
// reports a Unity Catalog volume's /Volumes/... as dbfs:/Volumes/...),
// other schemes stay; percent-escapes are decoded and '+' stays '+'.
func TestLiveRowFileOf(t *testing.T) {
	ctx := context.Background()
	c := liveClient(t)
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
