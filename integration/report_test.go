//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chromium is Debian's headless Chromium (scripts/test.sh installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := osexec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (scripts/test.sh installs Debian's chromium)")
	}
	t.Skip("chromium is not installed: apt-get install chromium")
	return ""
}

// runChromium runs headless Chromium on url with a fresh profile and no
// network of its own, plus args (--dump-dom, --screenshot=...), and
// returns its stdout.
func runChromium(t *testing.T, url string, args ...string) string {
	t.Helper()
	bin := chromium(t)
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=10000"}, args...)
	cmd := osexec.CommandContext(testContext(t), bin, append(all, url)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// reportTable is the DOM up to the page's scripts, whose text holds the
// markup the script writes.
func reportTable(dom string) string {
	if i := strings.Index(dom, "<script"); i >= 0 {
		return dom[:i]
	}
	return dom
}

var (
	reportCell  = regexp.MustCompile(`<td class="c (\w+)"`)
	reportShown = regexp.MustCompile(`<body data-shown="(\d+)"`)
	reportRow   = regexp.MustCompile(`<tr data-source="([^"]*)">`)
)

// TestDriftReportInChromium writes `plan --report` for drifting files
// (columns added, widened, renamed by case and by --rename, a type
// conflict) and renders the page in headless Chromium: the cells it
// shows, coloured by state, are the plan's (as -o json gives it), per
// source; filtering and sorting act on what is shown; a screenshot is
// taken. It loads nothing from the network: the page is one file.
func TestDriftReportInChromium(t *testing.T) {
	t.Parallel()
	chromium(t)
	files := map[string][]byte{}
	for i := range 12 {
		header := "id,station,reading"
		row := func(r int) string { return fmt.Sprintf("%d,s%d,%d", i*100+r, r, r) }
		switch i % 4 {
		case 1: // widened: reading double; an added column
			header = "id,station,reading,unit"
			row = func(r int) string { return fmt.Sprintf("%d,s%d,%d.5,m", i*100+r, r, r) }
		case 2: // renamed by case, and by --rename
			header = "id,Station,reading,hight"
			row = func(r int) string { return fmt.Sprintf("%d,s%d,%d,%d.25", i*100+r, r, r, r) }
		case 3: // a conflict: id as text
			header = "id,station,reading"
			row = func(r int) string { return fmt.Sprintf("x%d,s%d,%d", r, r, r) }
		}
		if i == 4 { // readings written with leading zeros: a warning
			row = func(r int) string { return fmt.Sprintf("%d,s%d,%03d", i*100+r, r, r) }
		}
		var b strings.Builder
		b.WriteString(header + "\n")
		for r := range 3 {
			b.WriteString(row(r) + "\n")
		}
		files[fmt.Sprintf("readings-%02d.csv", i)] = []byte(b.String())
	}
	dir := localFiles(t, files)
	report := filepath.Join(workDir(t), "drift.html")
	args := []string{"plan", dir, "--rename", "hight=height", "--strategy", "union"}
	code, stdout, stderr := cliRun(t, append(args, "--report", report, "-o", "json")...)
	if code != 0 {
		t.Fatalf("plan --report: exit %d:\n%s", code, stderr)
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, remote := range []string{"http://", "https://", "//cdn", "<link", "src="} {
		if strings.Contains(string(page), remote) {
			t.Errorf("the report refers to something outside the page (%q)", remote)
		}
	}

	// What the plan says, per source: the state of each column.
	var plan struct {
		Plan struct {
			Target  []struct{ Name string } `json:"target"`
			Sources []struct {
				Name        string `json:"name"`
				Projections []struct {
					Column, Op string
				} `json:"projections"`
				Widened   []struct{ Column string }   `json:"widened"`
				Conflicts []struct{ Column string }   `json:"conflicts"`
				Renamed   []struct{ From, To string } `json:"renamed"`
			} `json:"sources"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, s := range plan.Plan.Sources {
		state := map[string]string{}
		for _, r := range s.Renamed {
			state[r.To] = "renamed"
		}
		for _, w := range s.Widened {
			state[w.Column] = "widened"
		}
		for _, c := range s.Conflicts {
			state[c.Column] = "conflict"
		}
		for _, p := range s.Projections {
			switch {
			case p.Op == "null":
				want["added"]++
			case state[p.Column] != "":
				want[state[p.Column]]++
			case p.Op == "cast":
				want["widened"]++
			default:
				want["present"]++
			}
		}
	}
	for _, st := range []string{"added", "widened", "renamed", "conflict", "present"} {
		if want[st] == 0 {
			t.Fatalf("the corpus has no %s cell: the test would prove nothing (%v)", st, want)
		}
	}

	url := "file://" + report
	dom := reportTable(runChromium(t, url, "--dump-dom"))
	got := map[string]int{}
	for _, m := range reportCell.FindAllStringSubmatch(dom, -1) {
		got[m[1]]++
	}
	for st, n := range want {
		if got[st] != n {
			t.Errorf("Chromium shows %d %s cells, the plan has %d", got[st], st, n)
		}
	}
	// The plan's warning, above the matrix.
	if !strings.Contains(dom, `<ul class="warnings" id="warnings"><li>warning: column reading is merged as double, and source `) ||
		!strings.Contains(dom, `readings-04.csv" holds integers written with leading zeros ("000", merged as 0)`) {
		t.Errorf("Chromium shows no warning of readings-04.csv's zeros:\n%s", dom[:min(len(dom), 4000)])
	}
	if rows := reportRow.FindAllStringSubmatch(dom, -1); len(rows) != 12 {
		t.Errorf("Chromium shows %d source rows, want 12", len(rows))
	}

	// Filtered and sorted (the page reads #filter, #only, #sort).
	shown := func(dom string) int {
		m := reportShown.FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("the page did not run its script:\n%.2000s", dom)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if n := shown(runChromium(t, url+"#filter=readings-0", "--dump-dom")); n != 10 {
		t.Errorf("filter readings-0: %d sources shown, want 10", n)
	}
	conflicts := reportTable(runChromium(t, url+"#only=conflict", "--dump-dom"))
	// id is text in every fourth file: the others' ids are cast to string.
	if n := shown(conflicts); n != 9 {
		t.Errorf("only conflicts: %d sources shown, want 9", n)
	}
	for _, m := range reportRow.FindAllStringSubmatch(conflicts, -1) {
		if n, _ := strconv.Atoi(strings.TrimSuffix(m[1][len(m[1])-6:], ".csv")); n%4 == 3 {
			t.Errorf("only conflicts shows %s, whose id is text already", m[1])
		}
	}
	sorted := reportRow.FindAllStringSubmatch(reportTable(runChromium(t, url+"#sort=name&asc=false", "--dump-dom")), -1)
	if len(sorted) != 12 || !strings.HasSuffix(sorted[0][1], "readings-11.csv") || !strings.HasSuffix(sorted[11][1], "readings-00.csv") {
		t.Errorf("sorted by name, descending: first %v, last %v", sorted[0], sorted[len(sorted)-1])
	}

	png := filepath.Join(t.TempDir(), "drift.png")
	runChromium(t, url, "--hide-scrollbars", "--window-size=1100,700", "--screenshot="+png)
	if b, err := os.ReadFile(png); err != nil || len(b) < 10000 || string(b[1:4]) != "PNG" {
		t.Errorf("screenshot: %d bytes, %v", len(b), err)
	}
}

// TestDriftReport2000Sources: the report of 2,000 files renders every
// source in Chromium, and filters them.
func TestDriftReport2000Sources(t *testing.T) {
	t.Parallel()
	chromium(t)
	files := map[string][]byte{}
	for i := range 2000 {
		content := "id,name\n1,a\n"
		if i%10 == 0 {
			content = "id,name,extra\n1,a,x\n"
		}
		files[fmt.Sprintf("f%04d.csv", i)] = []byte(content)
	}
	dir := localFiles(t, files)
	report := filepath.Join(workDir(t), "drift.html")
	code, _, stderr := cliRun(t, "plan", dir, "--report", report)
	if code != 0 {
		t.Fatalf("plan --report: exit %d:\n%s", code, stderr)
	}
	dom := reportTable(runChromium(t, "file://"+report, "--dump-dom"))
	if rows := reportRow.FindAllStringSubmatch(dom, -1); len(rows) != 2000 {
		t.Errorf("Chromium shows %d source rows, want 2000", len(rows))
	}
	cells := map[string]int{}
	for _, m := range reportCell.FindAllStringSubmatch(dom, -1) {
		cells[m[1]]++
	}
	if cells["added"] != 1800 || cells["present"] != 4200 {
		t.Errorf("cells %v, want 1800 added (extra in 9 of 10 files) and 4200 present", cells)
	}
	dom = reportTable(runChromium(t, "file://"+report+"#only=added", "--dump-dom"))
	if rows := reportRow.FindAllStringSubmatch(dom, -1); len(rows) != 1800 {
		t.Errorf("only added: %d rows, want 1800", len(rows))
	}
}
