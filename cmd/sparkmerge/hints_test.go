package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every hint the library writes in its own terms has the CLI's rewrite.
func TestFlagHintsCoverTheLibrary(t *testing.T) {
	phrase := regexp.MustCompile(`\((?:Options|Job|SourceSpec|Target|Incremental)\.[^)]*\)`)
	var files []string
	for _, dir := range []string{"../../sparkmerge", "../../sparkmerge/spark", "../../sparkmerge/spark/internal/connect"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue // doc comments name fields freely
			}
			for _, p := range phrase.FindAllString(strings.ReplaceAll(line, `\"`, `"`), -1) {
				found++
				if got := withFlagHints(p); got == p {
					t.Errorf("%s: the hint %s has no CLI rewrite in flagHints", filepath.Base(f), p)
				}
			}
		}
	}
	if found < 10 {
		t.Errorf("found %d hints in the library; the scan is broken", found)
	}
	if got := withFlagHints("use (Options.Types = TypesString) here"); got != "use (--types string) here" {
		t.Errorf("rewrite = %q", got)
	}
}
