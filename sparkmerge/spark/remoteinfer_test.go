package spark

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
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
		fake.noListingHeads = true // the files are fetched
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

// rowsOf is header and then n lines of row(i).
func rowsOf(header string, n int, row func(i int) string) string {
	var b strings.Builder
	b.WriteString(header)
	for i := range n {
		b.WriteString(row(i))
	}
	return b.String()
}

// The client refuses a remote file from its head when its rules refuse
// one of the head's whole lines: the whole file holds those lines and the
// rules refuse at the first such line. A head whose only refused value is
// in its last, cut line, or that has no whole line with content, tells
// nothing.
func TestHeadRefused(t *testing.T) {
	rules, _ := infer.RulesFor("4.0.1")
	tests := []struct {
		name, format, head string
		refused            bool
	}{
		{"clean csv", "csv", "id,v\n1,2.5\n2,3", false},
		{"a date on a whole line", "csv", "id,day\n1,2024-1-02\n2,20", true},
		{"a quote on a whole line", "csv", "id,note\n1,\"a, \"\"b\"\"\"\n2,x", true},
		{"a date on the cut line only", "csv", "id,day\n1,5\n2,2024-1-", false},
		{"no whole line", "csv", "id,day,at", false},
		{"blank lines only", "csv", "\n\n  ", false},
		{"a row wider than the header", "csv", "id,v\n1,2,3\n", true},
		{"clean json", "json", "{\"a\":1}\n{\"a\":2.5}\n{\"a\"", false},
		{"NaN on a whole line", "json", "{\"a\":1}\n{\"a\":NaN}\n{\"a\"", true},
		{"NaN on the cut line only", "json", "{\"a\":1}\n{\"a\":Na", false},
		{"not UTF-8 on a whole line", "csv", "id,city\n1,M\xfcnchen\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Read{Format: tt.format, Paths: []string{"s3a://b/f." + tt.format}, Options: map[string]string{"header": "true", "inferSchema": "true"}}
			if tt.format == "json" {
				r.Options = nil
			}
			refused, err := headRefused(r, rules, []byte(tt.head))
			if refused != tt.refused {
				t.Errorf("refused %v (%v), want %v", refused, err, tt.refused)
			}
		})
	}
	// A file whose reader options the rules refuse, or compressed but
	// with gzip, is not fetched at all.
	multiLine := &Read{Format: "csv", Paths: []string{"s3a://b/f.csv"}, Options: map[string]string{"header": "true", "inferSchema": "true", "multiLine": "true"}}
	plain := &Read{Format: "csv", Paths: []string{"s3a://b/f.csv"}, Options: map[string]string{"header": "true", "inferSchema": "true"}}
	gzipped := &Read{Format: "csv", Paths: []string{"s3a://b/f.csv.gz"}, Options: plain.Options}
	bzipped := &Read{Format: "csv", Paths: []string{"s3a://b/f.csv.bz2"}, Options: plain.Options}
	if clientMayType(multiLine, rules) || clientMayType(bzipped, rules) || !clientMayType(gzipped, rules) || !clientMayType(plain, rules) {
		t.Errorf("client may type: multiLine %v, .csv.bz2 %v, .csv.gz %v, plain %v; want false, false, true, true",
			clientMayType(multiLine, rules), clientMayType(bzipped, rules), clientMayType(gzipped, rules), clientMayType(plain, rules))
	}
	// A gzip file's head is its text's: cut anywhere in the compressed
	// bytes, it gives the lines before the cut.
	var rows strings.Builder
	rows.WriteString("id,day\n")
	for i := range 20000 {
		fmt.Fprintf(&rows, "%d,2024-01-%02d\n", i, 1+i%28)
	}
	clean := gzipBytes(rows.String())
	refusedRows := gzipBytes("id,day\n1,2024-1-2\n" + rows.String()[len("id,day\n"):])
	if len(clean) <= 4096 {
		t.Fatalf("the gzip file is %d bytes: too small to cut", len(clean))
	}
	for _, tc := range []struct {
		name    string
		head    []byte
		refused bool
	}{
		{"clean, cut", clean[:4096], false},
		{"a date with a one-digit month, cut", refusedRows[:4096], true},
		{"not gzip", []byte(rows.String()[:4096]), true},
	} {
		if refused, err := headRefused(gzipped, rules, tc.head); refused != tc.refused {
			t.Errorf("%s: refused %v (%v), want %v", tc.name, refused, err, tc.refused)
		}
	}
}

// gzipBytes is text compressed with gzip.
func gzipBytes(text string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(text))
	zw.Close()
	return b.Bytes()
}

// A CSV file only the server sees whose head the client's rules refuse
// (a date with a one-digit month, from its first row) is not fetched whole: the client gets its
// head, and Spark types it; a clean file is fetched whole, its rest in a
// fetch that names it alone, and typed on the client. The heads come
// with the listing, in its job (listingHeads). A refused
// file that is not UTF-8 past its head is refused as when fetched whole,
// on Spark 4 and 3.5 alike: Spark reads it as text where it lives
// (checkUTF8OnServer), and the client fetches no more than its head.
func TestRemoteFilesFetchAHeadFirst(t *testing.T) {
	dated := rowsOf("id,day\n", 20000, func(i int) string { return fmt.Sprintf("%d,2024-1-%02d\n", i, 1+i%28) })
	clean := rowsOf("id,v\n", 20000, func(i int) string { return fmt.Sprintf("%d,%d.5\n", i, i) })
	if len(dated) <= 2*remoteHeadBytes || len(clean) <= 2*remoteHeadBytes {
		t.Fatalf("files of %d and %d bytes: not past the head", len(dated), len(clean))
	}
	// In an object store, and on the server's own disk, which Spark
	// names file:/... where the merge names it /...: the rest is fetched
	// by Spark's name.
	for _, where := range []struct{ given, listedAs string }{
		{"s3a://b/in", "s3a://b/in"},
		{"/sparkmerge-server-only/in", "file:/sparkmerge-server-only/in"},
	} {
		client, fake := newFakeClient()
		fake.files[where.listedAs+"/dated.csv"] = fakeFile{content: dated, mtimeMillis: 1000}
		fake.files[where.listedAs+"/clean.csv"] = fakeFile{content: clean, mtimeMillis: 1000}
		fake.nowMillis = 10_000
		fake.schemas["readSchema "+where.given+"/dated.csv"] = "id int, day timestamp"
		planned, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{where.given}}}, Strategy: StrategyUnion, InferEachFileAlone: true, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(remoteHeadBytes + len(clean)); fake.fetchedBytes != want {
			t.Errorf("%s: fetched %d bytes, want %d: the dated file's head and the clean file whole", where.given, fake.fetchedBytes, want)
		}
		got := map[string]string{}
		for _, r := range planned.Reads {
			got[r.Name] = fmt.Sprintf("%s (client %v)", r.Schema, r.InferredLocally)
		}
		want := map[string]string{where.given + "/dated.csv": "id int, day timestamp (client false)", where.given + "/clean.csv": "id int, v double (client true)"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: schemas (-want +got):\n%s", where.given, diff)
		}
		if planned.RemoteTyped != 1 || planned.RemoteFetchJobs != 1 {
			t.Errorf("%s: %d files typed on the client in %d fetches, want 1 in 1 (the clean file's rest; the heads came with the listing)", where.given, planned.RemoteTyped, planned.RemoteFetchJobs)
		}
		wantCalls := []string{"inputFiles " + where.given, "listFiles " + where.given, "fetchFiles " + where.given + "/clean.csv", "notUTF8Files " + where.given + "/dated.csv", "readSchema " + where.given + "/dated.csv"}
		calls := slices.DeleteFunc(fake.recorded(), func(c string) bool { return strings.HasPrefix(c, "conf ") || strings.HasPrefix(c, "setConf ") })
		if diff := cmp.Diff(wantCalls, calls); diff != "" {
			t.Errorf("%s: calls (-want +got):\n%s", where.given, diff)
		}
	}

	for _, version := range []string{"4.0.1", "3.5.7"} {
		client, fake := newFakeClient()
		fake.version = version
		latin := dated + "99,M\xfcnchen\n"
		fake.files["s3a://b/in/latin.csv"] = fakeFile{content: latin, mtimeMillis: 1000}
		fake.nowMillis = 10_000
		_, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in/latin.csv"}}}, InferEachFileAlone: true, DryRun: true})
		if err == nil || !strings.Contains(err.Error(), "encoding=ISO-8859-1") || !strings.Contains(err.Error(), "latin.csv") {
			t.Errorf("Spark %s: a file not UTF-8 past its head: err = %v, want it refused naming the encoding option", version, err)
		}
		if fake.fetchedBytes != remoteHeadBytes {
			t.Errorf("Spark %s: fetched %d bytes of a %d-byte file, want its head's %d", version, fake.fetchedBytes, len(latin), remoteHeadBytes)
		}
	}
}

// A listing brings the heads of its files only when they are nine tenths
// of it by name and fit: at most remoteFetchChunk a listing (2,048 heads
// of 64 KiB) and maxRemoteInferTotal a plan; the budget is charged for
// every head a listing may bring.
func TestListingHeadsWithinTheirBudget(t *testing.T) {
	names := func(n int, ext string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("s3a://b/in/f%05d%s", i, ext)
		}
		return out
	}
	csv := []string{"csv"}
	b := newHeadBudget("4.0.1")
	for i, tc := range []struct {
		paths   []string
		formats []string
		want    bool
		left    int64
	}{
		{names(10, ".csv"), nil, false, maxRemoteInferTotal},
		{names(10, ".json"), csv, false, maxRemoteInferTotal},
		{append(names(8, ".csv"), names(2, ".txt")...), csv, false, maxRemoteInferTotal},
		{append(names(9, ".CSV"), names(1, ".txt")...), csv, true, maxRemoteInferTotal - 9*remoteHeadBytes},
		{names(2049, ".csv"), csv, false, maxRemoteInferTotal - 9*remoteHeadBytes},
		{names(2048, ".tsv"), csv, true, maxRemoteInferTotal - 2057*remoteHeadBytes},
		{names(2048, ".csv"), csv, true, maxRemoteInferTotal - 4105*remoteHeadBytes},
		{names(2048, ".csv"), csv, true, maxRemoteInferTotal - 6153*remoteHeadBytes},
		{names(2048, ".csv"), csv, false, maxRemoteInferTotal - 6153*remoteHeadBytes},
		{names(2000, ".csv"), csv, true, maxRemoteInferTotal - 8153*remoteHeadBytes},
	} {
		got := b.take(tc.paths, tc.formats)
		if (got.head > 0) != tc.want || b.left != tc.left {
			t.Errorf("listing %d: heads %v, budget left %d; want %v, %d", i, got.head > 0, b.left, tc.want, tc.left)
		}
	}
	if got := (*headBudget)(nil).take(names(1, ".csv"), csv); got.head != 0 {
		t.Errorf("no budget (no client typing): heads %+v, want none", got)
	}
	if got := newHeadBudget("3.5.7").take(names(1, ".csv"), csv); got.head != remoteHeadBytes {
		t.Errorf("Spark 3.5: %+v, want heads", got)
	}
}

// The formats whose files a listing brings the heads of: those the
// client may type from a copy under the source's options.
func TestTypedFromCopies(t *testing.T) {
	rules, _ := infer.RulesFor("4.0.1")
	for _, tc := range []struct {
		spec   SourceSpec
		format string
		want   []string
	}{
		{SourceSpec{Paths: []string{"s3a://b/in"}}, "", []string{"csv", "json", "parquet", "orc"}},
		{SourceSpec{Paths: []string{"s3a://b/in"}}, "csv", []string{"csv"}},
		{SourceSpec{Paths: []string{"s3a://b/in"}, Options: map[string]string{"multiLine": "true"}}, "", []string{"parquet", "orc"}},
		{SourceSpec{Paths: []string{"s3a://b/in"}, Schema: "id int"}, "csv", nil},
		{SourceSpec{Paths: []string{"s3a://b/in"}}, "avro", nil},
		{SourceSpec{Name: "events", Paths: []string{"s3a://b/in"}}, "parquet", nil},
		{SourceSpec{Name: "events", Paths: []string{"s3a://b/in"}}, "csv", []string{"csv"}},
		{SourceSpec{Name: "events", Paths: []string{"s3a://b/in/*.parquet"}}, "parquet", []string{"parquet"}},
	} {
		if got := typedFromCopies(tc.spec, tc.format, nil, rules); !slices.Equal(got, tc.want) {
			t.Errorf("%+v as %q: %v, want %v", tc.spec, tc.format, got, tc.want)
		}
	}
}
