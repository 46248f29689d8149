package infer

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// Each line's rules are those of every release of that line, and of no
// other version: 4.4 and versions before 3.5 are in no version matrix.
func TestRulesFor(t *testing.T) {
	for v, want := range map[string]Rules{
		"4.0.1": Spark40, "4.0.0": Spark40, "4.0": Spark40,
		"4.1.4": Spark41, "4.2.1": Spark42, "4.2.0": Spark42, "4.3.0": Spark43,
		"3.5.7": Spark35, "3.5.2": Spark35,
		"4.4.0": {}, "3.4.1": {}, "4.00.1": {}, "4.10.0": {}, "": {},
	} {
		rules, ok := RulesFor(v)
		if ok != (want != Rules{}) || rules != want {
			t.Errorf("RulesFor(%q) = %v, %v; want %v", v, rules, ok, want)
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
