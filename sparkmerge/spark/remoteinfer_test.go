package spark

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRemoteFetchesOverlap: the fetches of files only the server sees run
// two at a time, never more, and what they bring is typed as when they run
// one by one (Job.Parallelism 1); a fetch the server cannot answer fails
// the plan, and one that fails otherwise leaves its file to Spark.
func TestRemoteFetchesOverlap(t *testing.T) {
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
		// Each fetch waits for a second one: up to 5 s where two may
		// run, 0.1 s (which they would use) where one must.
		fake.pairWait = 5 * time.Second
		if parallelism == 1 {
			fake.pairWait = 100 * time.Millisecond
		}
		for call, err := range fail {
			fake.fail[call] = err
		}
		planned, err := client.Plan(context.Background(), Job{Sources: sources, Parallelism: parallelism})
		return planned, fake, err
	}

	one, fake, err := plan(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fake.maxFetching != 1 || one.RemoteTyped != 4 {
		t.Fatalf("one by one: at most %d fetches at once and %d files typed remotely, want 1 and 4", fake.maxFetching, one.RemoteTyped)
	}
	together, fake, err := plan(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fake.maxFetching != 2 {
		t.Errorf("at most %d fetches ran at once, want 2", fake.maxFetching)
	}
	if got, want := describeReads(together.Reads, ""), describeReads(one.Reads, ""); !slices.Equal(got, want) {
		t.Errorf("reads fetched together %q\nwant as one by one %q", got, want)
	}
	if together.Plan.Target.String() != one.Plan.Target.String() || together.RemoteTyped != one.RemoteTyped {
		t.Errorf("target %s (%d typed remotely), want %s (%d)", together.Plan.Target, together.RemoteTyped, one.Plan.Target, one.RemoteTyped)
	}
	var fetches []string
	for _, c := range fake.recorded() {
		if strings.HasPrefix(c, "fetchFiles ") {
			fetches = append(fetches, c)
		}
	}
	if len(fetches) != 4 {
		t.Errorf("fetches %q, want one per file", fetches)
	}

	// The server gone in one of the fetches: the plan fails.
	_, _, err = plan(0, map[string]error{"fetchFiles s3a://b/n.csv": ErrUnreachable})
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable", err)
	}
	// A fetch that fails otherwise leaves its file to Spark.
	_, _, err = plan(0, map[string]error{"fetchFiles s3a://b/n.csv": errors.New("binaryFile: permission denied")})
	if err == nil || !strings.Contains(err.Error(), `"readSchema s3a://b/n.csv"`) {
		t.Errorf("err = %v, want Spark asked for s3a://b/n.csv's schema (which the fake does not answer)", err)
	}
}
