package localspark

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWithDefaults(t *testing.T) {
	got, err := withDefaults(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		Image:            DefaultImage,
		DriverMemory:     DefaultDriverMemory,
		StartupTimeout:   DefaultStartupTimeout,
		Mounts:           []string{},
		IcebergWarehouse: DefaultIcebergWarehouse,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withDefaults(Options{}) (-want +got):\n%s", diff)
	}

	set := Options{
		Image:            "apache/spark:4.0.1",
		Port:             15010,
		Mounts:           []string{"/tmp/a/../b/", "/data"},
		DriverMemory:     "2g",
		StartupTimeout:   time.Minute,
		IcebergWarehouse: "/data/iceberg",
	}
	got, err = withDefaults(set)
	if err != nil {
		t.Fatal(err)
	}
	set.Mounts = []string{"/tmp/b", "/data"}
	if diff := cmp.Diff(set, got); diff != "" {
		t.Errorf("withDefaults kept set fields (-want +got):\n%s", diff)
	}
}

func TestWithDefaultsRejects(t *testing.T) {
	for name, opts := range map[string]Options{
		"relative mount":             {Mounts: []string{"testdata"}},
		"colon in mount":             {Mounts: []string{"/tmp/a:b"}},
		"negative port":              {Port: -1},
		"port too large":             {Port: 70000},
		"relative iceberg warehouse": {IcebergWarehouse: "iceberg"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := withDefaults(opts); err == nil {
				t.Errorf("withDefaults(%+v) = nil error, want one", opts)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	opts, err := withDefaults(Options{Conf: map[string]string{
		"spark.sql.shuffle.partitions":                "2", // overrides the default
		"spark.connect.grpc.marshallerRecursionLimit": "2048",
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/opt/spark/bin/spark-submit",
		"--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
		"--master", "local[2]",
		"--driver-memory", "1g",
		"--conf", "spark.connect.grpc.binding.address=127.0.0.1",
		"--conf", "spark.connect.grpc.binding.port=15010",
		"--conf", "spark.connect.grpc.marshallerRecursionLimit=2048",
		"--conf", "spark.driver.bindAddress=127.0.0.1",
		"--conf", "spark.driver.host=127.0.0.1",
		"--conf", "spark.log.structuredLogging.enabled=false",
		"--conf", "spark.sql.shuffle.partitions=2",
		"--conf", "spark.ui.enabled=false",
		"spark-internal",
	}
	if diff := cmp.Diff(want, command(opts, 15010, nil)); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
}

// An image that carries Delta and Iceberg gets their catalogs and
// extensions, as scripts/start-connect.sh gives them; Conf still wins.
func TestCommandTableFormats(t *testing.T) {
	opts, err := withDefaults(Options{
		IcebergWarehouse: "/sparkmerge-cluster-data/iceberg",
		Conf:             map[string]string{"spark.sql.catalog.iceberg.cache-enabled": "false"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := command(opts, 15010, ParseTableFormats("delta=4.0.1,iceberg=1.10.1"))
	want := []string{
		"--conf", "spark.sql.catalog.iceberg=org.apache.iceberg.spark.SparkCatalog",
		"--conf", "spark.sql.catalog.iceberg.cache-enabled=false",
		"--conf", "spark.sql.catalog.iceberg.type=hadoop",
		"--conf", "spark.sql.catalog.iceberg.warehouse=/sparkmerge-cluster-data/iceberg",
		"--conf", "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
		"--conf", "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension,org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
	}
	var conf []string
	for i, a := range got {
		if a == "--conf" && (strings.HasPrefix(got[i+1], "spark.sql.catalog") || strings.HasPrefix(got[i+1], "spark.sql.extensions")) {
			conf = append(conf, a, got[i+1])
		}
	}
	if diff := cmp.Diff(want, conf); diff != "" {
		t.Errorf("table format settings (-want +got):\n%s", diff)
	}

	// Delta alone: no Iceberg catalog, one extension.
	got = command(opts, 15010, ParseTableFormats("delta=4.0.1"))
	joined := strings.Join(got, " ")
	if strings.Contains(joined, "iceberg.spark") || !strings.Contains(joined, "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension ") {
		t.Errorf("command for Delta alone = %q", joined)
	}
}

func TestParseTableFormats(t *testing.T) {
	for label, want := range map[string]map[string]string{
		"":                           {},
		"delta=4.0.1,iceberg=1.10.1": {"delta": "4.0.1", "iceberg": "1.10.1"},
		" Delta=4.0.1 , , iceberg":   {"delta": "4.0.1", "iceberg": ""},
	} {
		if diff := cmp.Diff(want, ParseTableFormats(label)); diff != "" {
			t.Errorf("ParseTableFormats(%q) (-want +got):\n%s", label, diff)
		}
	}
}

func TestBinds(t *testing.T) {
	got := binds([]string{"/work/data", "/tmp/out"})
	want := []string{"/work/data:/work/data", "/tmp/out:/tmp/out"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("binds (-want +got):\n%s", diff)
	}
}

func TestRemote(t *testing.T) {
	s := &Server{port: 15123}
	if got, want := s.Remote(), "sc://127.0.0.1:15123"; got != want {
		t.Errorf("Remote() = %q, want %q", got, want)
	}
}

func TestFreePort(t *testing.T) {
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if p <= 0 || p > 65535 {
		t.Fatalf("freePort() = %d, want a port number", p)
	}
	if portInUse(p) {
		t.Errorf("portInUse(%d) = true right after freePort released it", p)
	}
}

func TestImageNotFoundErrorSaysWhatToDo(t *testing.T) {
	var err error = &ImageNotFoundError{Image: DefaultImage}
	var nf *ImageNotFoundError
	if !errors.As(err, &nf) || nf.Image != DefaultImage {
		t.Fatalf("errors.As(%v) did not give the image back", err)
	}
	if !strings.Contains(err.Error(), "scripts/build-image.sh") {
		t.Errorf("error %q does not point at scripts/build-image.sh", err)
	}
}

func TestStopNilServer(t *testing.T) {
	var s *Server
	if err := s.Stop(t.Context()); err != nil {
		t.Errorf("Stop on nil server = %v, want nil", err)
	}
}

func TestStartRejectsBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(t.Context(), Options{Port: port})
	if err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("Start on busy port %d: err = %v, want an 'already in use' error", port, err)
	}
}

func TestLocalOnly(t *testing.T) {
	for image, want := range map[string]bool{
		DefaultImage:                   true,
		"sparkmerge/spark-connect:dev": true,
		ImageFor("3.5.7"):              true,
		"apache/spark:4.0.1":           false,
		"docker.io/apache/spark:4.0.1": false,
	} {
		if got := localOnly(image); got != want {
			t.Errorf("localOnly(%q) = %v, want %v", image, got, want)
		}
	}
}

func TestImageFor(t *testing.T) {
	for v, want := range map[string]string{
		"":               DefaultImage,
		MainSparkVersion: DefaultImage,
		"3.5.7":          "sparkmerge/spark-connect:3.5.7",
	} {
		if got := ImageFor(v); got != want {
			t.Errorf("ImageFor(%q) = %q, want %q", v, got, want)
		}
	}
}

// A missing build of another version says how to build that version.
func TestImageNotFoundErrorNamesTheVersion(t *testing.T) {
	for image, want := range map[string]string{
		DefaultImage:      "build it with scripts/build-image.sh (",
		ImageFor("3.5.7"): "build it with SPARK_VERSION=3.5.7 scripts/build-image.sh",
	} {
		if got := (&ImageNotFoundError{Image: image}).Error(); !strings.Contains(got, want) {
			t.Errorf("error for %s = %q, want it to contain %q", image, got, want)
		}
	}
}

func TestDriverJavaOptions(t *testing.T) {
	archive := "/opt/sparkmerge/spark-connect.jsa"
	logs := "-Dlog4j2.configurationFile=" + logConfigPath
	own := map[string]string{"spark.driver.extraJavaOptions": "-XX:+UseSerialGC"}
	got, gotArchive := driverJavaOptions(own, archive)
	want := map[string]string{
		"spark.driver.extraJavaOptions":   "-XX:+UseSerialGC",
		"spark.driver.defaultJavaOptions": logs + " -XX:SharedArchiveFile=" + archive,
	}
	if diff := cmp.Diff(want, got); diff != "" || gotArchive != archive {
		t.Errorf("driverJavaOptions (-want +got):\n%s, archive %q", diff, gotArchive)
	}
	if len(own) != 1 {
		t.Errorf("driverJavaOptions changed the caller's map: %v", own)
	}
	if got, _ := driverJavaOptions(nil, archive); got["spark.driver.defaultJavaOptions"] != want["spark.driver.defaultJavaOptions"] {
		t.Errorf("driverJavaOptions(nil) = %v", got)
	}
	// No archive (an image without the label): the log configuration alone.
	if got, gotArchive := driverJavaOptions(own, ""); got["spark.driver.defaultJavaOptions"] != logs || gotArchive != "" {
		t.Errorf("driverJavaOptions without an archive = %v, %q", got, gotArchive)
	}
	// The caller's own default options: left as they are, no archive.
	set := map[string]string{"spark.driver.defaultJavaOptions": "-Xss4m"}
	if got, gotArchive := driverJavaOptions(set, archive); !cmp.Equal(got, set) || gotArchive != "" {
		t.Errorf("driverJavaOptions over the caller's default options = %v, %q, want %v", got, gotArchive, set)
	}
}

// The server logs warnings and errors, and at INFO the class that logs
// ReadyLogLine, which Start waits for. (TestStartServesSparkConnect
// proves it on a real server.)
func TestLogConfigKeepsTheReadyLine(t *testing.T) {
	props := map[string]string{}
	for _, line := range strings.Split(logConfig, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			props[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	levels := map[string]string{}
	for k, name := range props {
		if id, ok := strings.CutSuffix(strings.TrimPrefix(k, "logger."), ".name"); ok && strings.HasPrefix(k, "logger.") {
			levels[name] = props["logger."+id+".level"]
		}
	}
	if got := props["rootLogger.level"]; got != "warn" {
		t.Errorf("root level = %q, want warn", got)
	}
	if got := levels[serverClass]; got != "info" {
		t.Errorf("level of %s, which logs %q, = %q, want info", serverClass, ReadyLogLine, got)
	}
	if got := props["appender.console.target"]; got != "SYSTEM_ERR" {
		t.Errorf("console target = %q, want SYSTEM_ERR (Spark's own)", got)
	}
}
