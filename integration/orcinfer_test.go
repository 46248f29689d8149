//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// orcFile has Spark write the rows of query as one ORC file compressed by
// codec and returns its bytes.
func orcFile(t *testing.T, codec, query string) []byte {
	t.Helper()
	return sparkWrittenFile(t, "orc", fmt.Sprintf("OPTIONS (compression '%s')", codec), query)
}

// orcEveryType is a row of every type Spark writes to ORC: those ORC has,
// and those Spark stores under its spark.sql.catalyst.type attribute
// (timestamp_ntz, intervals).
const orcEveryType = `SELECT true AS b, CAST(1 AS TINYINT) AS i8, CAST(2 AS SMALLINT) AS i16, 3 AS i32, 4L AS i64,
	CAST(1.5 AS FLOAT) AS f, 2.5D AS d, CAST(12.345 AS DECIMAL(12,3)) AS dec, CAST(1 AS DECIMAL(38,0)) AS dec_wide,
	'text' AS s, X'CAFE' AS bin, DATE'2024-01-02' AS day, TIMESTAMP'2024-01-02 03:04:05.123456' AS ts,
	TIMESTAMP_NTZ'2024-01-02 03:04:05' AS ntz, INTERVAL '1-2' YEAR TO MONTH AS ym, INTERVAL '3 04:05:06' DAY TO SECOND AS dt_iv,
	INTERVAL '5' HOUR AS hours, array(1, 2) AS ints, map('k', 1.5D) AS m, named_struct('x', 1, 'Y', array(named_struct('z', 'w'))) AS nested,
	CAST(NULL AS STRING) AS nothing, 1 AS ` + "`odd name, with: punctuation`"

// TestLocalORCInferenceMatchesSpark plans ORC files with schemas read from
// their footers on the client and with Spark's, on the real server, for
// every codec Spark writes: every read's schema must be the same, and the
// client must have typed every file.
func TestLocalORCInferenceMatchesSpark(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	var paths []string
	for _, codec := range []string{"none", "snappy", "zlib", "lz4", "zstd", "lzo"} {
		p := filepath.Join(dir, codec+".orc")
		if err := os.WriteFile(p, orcFile(t, codec, orcEveryType), 0o666); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	local, remote := planBothWays(t, c, spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion})
	for i, p := range paths {
		l, r := local.Reads[i], remote.Reads[i]
		// LZO: Spark writes it, the client does not decompress it.
		if want := !strings.HasPrefix(filepath.Base(p), "lzo"); l.InferredLocally != want {
			t.Errorf("%s: inferred locally = %v, want %v", filepath.Base(p), l.InferredLocally, want)
		}
		if r.InferredLocally {
			t.Errorf("%s: inferred locally under SparkInference", filepath.Base(p))
		}
		if !l.Schema.Equal(r.Schema) {
			t.Errorf("%s:\nclient %s\nSpark  %s", filepath.Base(p), l.Schema, r.Schema)
		}
	}
	if got := local.Reads[0].Schema.String(); !strings.Contains(got, "ntz timestamp_ntz, ym interval year to month") {
		t.Errorf("schema %s: want Spark's stored types", got)
	}
}

// Under spark.sql.timestampType=TIMESTAMP_NTZ, an ORC timestamp parsed by
// Spark's type parser would be a timestamp_ntz, yet Spark 4.0.1 gives
// timestamp: the client reads the setting and leaves such a file to
// Spark, and types the others as under the default.
func TestLocalORCInferenceFollowsSessionSettings(t *testing.T) {
	t.Parallel()
	c, err := spark.Connect(context.Background(), requireSpark(t), spark.ConnectOptions{
		UserAgent: "sparkmerge-integration",
		Conf:      map[string]string{"spark.sql.timestampType": "TIMESTAMP_NTZ"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := filepath.Join(workDir(t), "ts.orc")
	if err := os.WriteFile(p, orcFile(t, "zstd", "SELECT 1 AS id, TIMESTAMP_LTZ'2024-01-02 03:04:05' AS ts"), 0o666); err != nil {
		t.Fatal(err)
	}
	plan := func() (local, remote *spark.Read) {
		t.Helper()
		l, r := planBothWays(t, c, spark.Job{Sources: pathSources(p)})
		return l.Reads[0], r.Reads[0]
	}
	local, remote := plan()
	if local.InferredLocally || !remote.Schema.Equal(local.Schema) {
		t.Errorf("inferred locally %v, want false:\nclient %s\nSpark  %s", local.InferredLocally, local.Schema, remote.Schema)
	}
	if got := remote.Schema.String(); got != "id int, ts timestamp" {
		t.Errorf("Spark: %s, want ts as timestamp", got)
	}
	// A file without a timestamp is typed by the client as before.
	if err := os.WriteFile(p, orcFile(t, "zstd", "SELECT 1 AS id, TIMESTAMP_NTZ'2024-01-02 03:04:05' AS ntz"), 0o666); err != nil {
		t.Fatal(err)
	}
	local, remote = plan()
	if !local.InferredLocally || !remote.Schema.Equal(local.Schema) {
		t.Errorf("without a timestamp: inferred locally %v, want true:\nclient %s\nSpark  %s", local.InferredLocally, local.Schema, remote.Schema)
	}
}
