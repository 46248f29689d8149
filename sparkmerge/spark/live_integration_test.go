//go:build integration

package spark

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
	"github.com/sparkmerge/sparkmerge/spark/internal/orcfooter"

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

// Of a Parquet or ORC file over footerTailBytes, Spark returns exactly
// its footer (a Parquet footer with its length and magic; an ORC footer
// with the postscript and its length), which the client then types it
// from: not the whole tail.
func TestLiveFetchedContentIsTheFooter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := liveClient(t)
	for _, format := range []string{"parquet", "orc"} {
		dir := filepath.Join(sparktest.WorkDir(t), "big-"+format)
		err := c.sess.SQL("SELECT id, sha2(CAST(id AS STRING), 512) AS h FROM range(0, 3000)").Coalesce(1).
			Write(ctx, connect.WriteSpec{Format: format, Mode: "overwrite", Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		files, err := filepath.Glob(filepath.Join(dir, "*."+format))
		if err != nil || len(files) != 1 {
			t.Fatalf("%v, %v: want one %s file", files, err, format)
		}
		whole, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(whole) <= footerTailBytes {
			t.Fatalf("a file of %d bytes, want over %d", len(whole), footerTailBytes)
		}
		var footer int
		if format == "parquet" {
			footer = int(binary.LittleEndian.Uint32(whole[len(whole)-8:])) + 8
		} else {
			end, ok := orcfooter.TailLength(whole)
			if !ok {
				t.Fatalf("%s: not an ORC tail", files[0])
			}
			footer = int(end)
		}
		fetched, err := sessionServer{c.sess}.fetchFiles(ctx, fileFetch{paths: []string{literalPath(files[0])}})
		if err != nil {
			t.Fatal(err)
		}
		if len(fetched) != 1 || string(fetched[0].content) != string(whole[len(whole)-footer:]) {
			n := 0
			if len(fetched) == 1 {
				n = len(fetched[0].content)
			}
			t.Fatalf("%s: fetched %d files, the first %d bytes; want the file's last %d bytes (its footer)", format, len(fetched), n, footer)
		}
		if !footerFetched(&Read{Format: format}, fetched[0]) {
			t.Errorf("%s: the fetched footer does not type the file", format)
		}
		// One byte less is not enough.
		cut := fetched[0]
		cut.content = cut.content[1:]
		if footerFetched(&Read{Format: format}, cut) {
			t.Errorf("%s: a footer cut by a byte types the file", format)
		}
	}
}

// Spark turns the file URIs it reports into the files as the user wrote
// them: file: goes, dbfs: goes unless the user wrote it (Databricks
// reports a Unity Catalog volume's /Volumes/... as dbfs:/Volumes/...),
// other schemes stay; percent-escapes are decoded and '+' stays '+'.
func TestLiveRowFileOf(t *testing.T) {
	t.Parallel()
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
