package spark

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRemoteFetchesOneAtATime: the fetches of files only the server sees
// run one at a time (two at once held twice the results in the server's
// memory, which a 1 GiB driver did not survive), whatever the parallelism
// of schema requests, and each file is typed from its fetched copy; a
// fetch the server cannot answer fails the plan, and one that fails
// otherwise leaves its file to Spark.
func TestRemoteFetchesOneAtATime(t *testing.T) {
	remote := map[string]string{
		"s3a://b/a.csv": csvA, "s3a://b/b.csv": csvB, "s3a://b/n.csv": csvNote, "s3a://b/c.json": jsonC,
	}
	var sources []SourceSpec
	for _, p := range []string{"s3a://b/a.csv", "s3a://b/b.csv", "s3a://b/n.csv", "s3a://b/c.json"} {
		sources = append(sources, SourceSpec{Paths: []string{p}}) // a listing, and a fetch, each
	}
	plan := func(parallelism int, fail map[string]error) (*Planned, *fakeServer, error) {
		client, fake := newFakeClient()
		for p, content := range remote {
			fake.files[p] = fakeFile{content: content, mtimeMillis: 1000}
		}
		fake.nowMillis = 10_000
		// Each fetch lasts long enough for another to start beside it,
		// if one could.
		fake.fetchDelay = 50 * time.Millisecond
		for call, err := range fail {
			fake.fail[call] = err
		}
		planned, err := client.Plan(context.Background(), Job{Sources: sources, Parallelism: parallelism})
		return planned, fake, err
	}

	for _, parallelism := range []int{0, 1, 8} {
		planned, fake, err := plan(parallelism, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fake.maxFetching != 1 || planned.RemoteTyped != 4 || planned.RemoteFetchJobs != 4 {
			t.Errorf("parallelism %d: at most %d fetches at once, %d files typed remotely in %d fetches; want 1, 4 and 4",
				parallelism, fake.maxFetching, planned.RemoteTyped, planned.RemoteFetchJobs)
		}
		var fetches []string
		for _, c := range fake.recorded() {
			if strings.HasPrefix(c, "fetchFiles ") {
				fetches = append(fetches, c)
			}
		}
		if len(fetches) != 4 {
			t.Errorf("parallelism %d: fetches %q, want one per file", parallelism, fetches)
		}
	}

	// The server gone in one of the fetches: the plan fails.
	_, _, err := plan(0, map[string]error{"fetchFiles s3a://b/n.csv": ErrUnreachable})
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable", err)
	}
	// A fetch that fails otherwise leaves its file to Spark.
	_, _, err = plan(0, map[string]error{"fetchFiles s3a://b/n.csv": errors.New("binaryFile: permission denied")})
	if err == nil || !strings.Contains(err.Error(), `"readSchema s3a://b/n.csv"`) {
		t.Errorf("err = %v, want Spark asked for s3a://b/n.csv's schema (which the fake does not answer)", err)
	}
}
