package spark

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
)

// batchPlan infers the given CSV files locally, one read each, and plans
// them.
func batchPlan(t *testing.T, files map[string]string, names ...string) *Planned {
	t.Helper()
	dir := t.TempDir()
	var reads []*Read
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		sources, err := resolveSources([]SourceSpec{{Paths: []string{p}}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, newRead(sources[0]))
	}
	local, remote := inferLocally(reads, nil)
	reads = append(local, remote...)
	plan, err := sparkmerge.NewPlan(planSources(reads), sparkmerge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Planned{Reads: reads, Plan: plan}
}

func TestScanBatches(t *testing.T) {
	files := map[string]string{
		"a.csv":      "x,y\n1,2\n",
		"b.csv":      "y,x\n3,4\n",
		"c.csv":      "x,y,z\n1,2,3\n",
		"d.csv":      "z,x,y\n1,2,3\n",
		"e.csv":      "x,y\n\"q\",2\n", // quoted: Spark infers it, it reads alone
		"f.csv":      "x\n1\n",         // the only one of its width
		"g.semi.csv": "x;y\n1;2\n",
	}
	p := batchPlan(t, files, "a.csv", "b.csv", "c.csv", "d.csv", "e.csv", "f.csv")
	batches, rest := p.scanBatches()
	var got []string
	for _, b := range batches {
		var names []string
		for _, i := range b.reads {
			names = append(names, filepath.Base(p.Reads[i].Paths[0]))
		}
		got = append(got, strings.Join(names, "+"))
	}
	var alone []string
	for _, i := range rest {
		alone = append(alone, filepath.Base(p.Reads[i].Paths[0]))
	}
	if strings.Join(got, " ") != "a.csv+b.csv c.csv+d.csv" || strings.Join(alone, " ") != "f.csv e.csv" {
		t.Errorf("batches %v, alone %v", got, alone)
	}

	// Other reader options never share a scan.
	dir := t.TempDir()
	var reads []*Read
	for i, opts := range []map[string]string{nil, {"sep": ";"}} {
		name := []string{"a.csv", "g.semi.csv"}[i]
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		sources, err := resolveSources([]SourceSpec{{Paths: []string{path}, Options: opts}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, newRead(sources[0]))
	}
	local, _ := inferLocally(reads, nil)
	plan, err := sparkmerge.NewPlan(planSources(local), sparkmerge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if batches, _ := (&Planned{Reads: local, Plan: plan}).scanBatches(); len(local) != 2 || len(batches) != 0 {
		t.Errorf("%d local reads, batches %v: want two reads, no batch", len(local), batches)
	}
}

// A relative path cannot be matched against the server's file name, a file
// with no stamp cannot be checked, and a big file is faster alone.
func TestCSVBatchNeedsAbsolutePathAndStamp(t *testing.T) {
	p := batchPlan(t, map[string]string{"a.csv": "x\n1\n", "b.csv": "x\n2\n"}, "a.csv", "b.csv")
	if batches, _ := p.scanBatches(); len(batches) != 1 {
		t.Fatalf("batches %v, want one", batches)
	}
	p.Reads[0].stamp = fileStamp{}
	if batches, _ := p.scanBatches(); len(batches) != 0 {
		t.Errorf("a read without stamp batched: %v", batches)
	}
	// A big file reads faster on its own (see maxBatchFileBytes).
	p = batchPlan(t, map[string]string{"a.csv": "x\n1\n", "b.csv": "x\n2\n"}, "a.csv", "b.csv")
	p.Reads[0].stamp.size = maxBatchFileBytes + 1
	if batches, _ := p.scanBatches(); len(batches) != 0 {
		t.Errorf("a file over %d bytes batched: %v", maxBatchFileBytes, batches)
	}
	p = batchPlan(t, map[string]string{"a.csv": "x\n1\n", "b.csv": "x\n2\n"}, "a.csv", "b.csv")
	p.Reads[1].Paths = []string{"rel/b.csv"}
	if batches, _ := p.scanBatches(); len(batches) != 0 {
		t.Errorf("a relative path batched: %v", batches)
	}
}

func TestCastTemplate(t *testing.T) {
	s := sparkmerge.Simple
	cases := []struct {
		from, to sparkmerge.DataType
		want     string
	}{
		{s(sparkmerge.KindString), s(sparkmerge.KindString), "x"},
		{s(sparkmerge.KindInt), s(sparkmerge.KindInt), "CAST(x AS int)"},
		{s(sparkmerge.KindString), s(sparkmerge.KindLong), "CAST(x AS bigint)"},
		{s(sparkmerge.KindInt), s(sparkmerge.KindLong), "CAST(x AS bigint)"},
		{s(sparkmerge.KindInt), s(sparkmerge.KindDouble), "CAST(x AS double)"},
		{sparkmerge.NewDecimal(20, 0), s(sparkmerge.KindDouble), "CAST(x AS double)"},
		{s(sparkmerge.KindLong), sparkmerge.NewDecimal(22, 2), "CAST(x AS decimal(22,2))"},
		// Parsed, then printed: "007" is "7", "1.50" is "1.5".
		{s(sparkmerge.KindInt), s(sparkmerge.KindString), "CAST(CAST(x AS int) AS string)"},
		{s(sparkmerge.KindDouble), s(sparkmerge.KindString), "CAST(CAST(x AS double) AS string)"},
		{s(sparkmerge.KindBoolean), s(sparkmerge.KindString), "CAST(CAST(x AS boolean) AS string)"},
		// A fraction into a decimal is rounded twice through a double.
		{s(sparkmerge.KindDouble), sparkmerge.NewDecimal(30, 20), "CAST(CAST(x AS double) AS decimal(30,20))"},
		{s(sparkmerge.KindLong), s(sparkmerge.KindInt), "CAST(CAST(x AS bigint) AS int)"},
	}
	for _, tc := range cases {
		if got := strings.ReplaceAll(castTemplate(tc.from, tc.to), "\x00", "x"); got != tc.want {
			t.Errorf("%s -> %s: %s, want %s", tc.from, tc.to, got, tc.want)
		}
	}
}

// The batch's expressions do not grow with its files: positions and
// templates are literal tables, and a column has one template per way its
// files type it.
func TestCSVBatchLayout(t *testing.T) {
	files := map[string]string{}
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("f%03d.csv", i)
		names = append(names, name)
		if i%2 == 0 {
			files[name] = "id,qty,note\n1,2,z\n"
		} else {
			files[name] = "note,id,qty\nz,1,x\n"
		}
	}
	p := batchPlan(t, files, names...)
	batches, rest := p.scanBatches()
	if len(batches) != 1 || len(rest) != 0 || len(batches[0].reads) != 100 {
		t.Fatalf("batches %v, rest %v", batches, rest)
	}
	l := batches[0].layout(p)
	if got := p.Plan.Target.Names(); strings.Join(got, ",") != "id,qty,note" {
		t.Fatalf("target %v", got)
	}
	// qty is an int in half the files and text in the others.
	var tmpls []string
	for _, tmpl := range l.templates[1] {
		tmpls = append(tmpls, strings.ReplaceAll(tmpl, "\x00", "x"))
	}
	if strings.Join(tmpls, " | ") != "CAST(CAST(x AS int) AS string) | x" {
		t.Errorf("qty templates %v", tmpls)
	}
	// File 0 has qty second (position 2, template 1), file 1 third
	// (position 3, template 2).
	if l.positions[0][1] != "2" || l.codes[0][1] != "1" || l.positions[1][1] != "3" || l.codes[1][1] != "2" {
		t.Errorf("qty: file 0 at %s/%s, file 1 at %s/%s", l.positions[0][1], l.codes[0][1], l.positions[1][1], l.codes[1][1])
	}
}
