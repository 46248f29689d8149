package sparktest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExtraConf(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		bad  bool
	}{
		{"", map[string]string{}, false},
		{"spark.eventLog.enabled=true  spark.eventLog.dir=file:/tmp/a=b\n", map[string]string{"spark.eventLog.enabled": "true", "spark.eventLog.dir": "file:/tmp/a=b"}, false},
		{"spark.x=", map[string]string{"spark.x": ""}, false},
		{"spark.eventLog.enabled", nil, true},
		{"=true", nil, true},
	} {
		got, err := extraConf(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("extraConf(%q): err = %v, want an error: %v", tc.in, err, tc.bad)
			continue
		}
		if d := cmp.Diff(tc.want, got); !tc.bad && d != "" {
			t.Errorf("extraConf(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

// A test's own server gets the harness's interpreted settings and the
// JVM options for a short life, under the caller's settings, which win.
func TestOwnServerConf(t *testing.T) {
	got := OwnServerConf(map[string]string{"spark.connect.authenticate.token": "s", "spark.sql.codegen.wholeStage": "true"})
	want := map[string]string{
		"spark.connect.authenticate.token": "s",
		"spark.sql.codegen.wholeStage":     "true",
		"spark.sql.codegen.factoryMode":    "NO_CODEGEN",
		"spark.driver.extraJavaOptions":    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djdk.lang.Process.launchMechanism=VFORK",
		"spark.executor.extraJavaOptions":  "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djdk.lang.Process.launchMechanism=VFORK",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("OwnServerConf (-want +got):\n%s", d)
	}
}
