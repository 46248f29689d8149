package infer

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// The rules of Spark 4.0 are those of every 4.0 release, and of no other
// version.
func TestRulesFor(t *testing.T) {
	for v, want := range map[string]bool{"4.0.1": true, "4.0.0": true, "4.0": true, "4.1.0": false, "3.5.2": false, "4.00.1": false, "": false} {
		rules, ok := RulesFor(v)
		if ok != want {
			t.Errorf("RulesFor(%q) = %v, want %v", v, ok, want)
		}
		if ok && rules != Spark40 || !ok && rules != (Rules{}) {
			t.Errorf("RulesFor(%q) = %v", v, rules)
		}
	}
	if Spark40.Version() != "4.0" || Spark40.String() != "Spark 4.0" || (Rules{}).Version() != "" || (Rules{}).String() != "no rules" {
		t.Errorf("names: %q %q %q %q", Spark40.Version(), Spark40, (Rules{}).Version(), Rules{})
	}
}

// A file that cannot be read is refused with the error that says why.
func TestUnsupportedUnwraps(t *testing.T) {
	_, err := Spark40.ParquetFile(filepath.Join(t.TempDir(), "missing.parquet"), nil, ParquetConf{})
	var u *Unsupported
	if !errors.As(err, &u) || u.Reason != UnsupportedFile || !errors.Is(err, fs.ErrNotExist) || u.Error() != u.Err.Error() {
		t.Errorf("missing file: %#v", err)
	}
}
