//go:build integration

package integration

import (
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// Settings given to a client of a shared session (ConnectOptions.Conf)
// are set all or nothing. Spark sets a Config call's pairs in order and
// stops at the first it refuses (here the static
// spark.sql.warehouse.dir), keeping those before it: the session must
// come out as it went in, a setting it had at its earlier value and one
// it had not unset again.
func TestRefusedSettingsChangeNothing(t *testing.T) {
	t.Parallel()
	s := upstreamSession(t)
	exec(t, "SET spark.sql.shuffle.partitions=13")
	before := queryRows(t, "SET")
	_, err := connectPatiently(t, testContext(t), requireSpark(t), spark.ConnectOptions{Session: s, Conf: map[string]string{
		"spark.sql.ansi.enabled":       "false", // Spark's default (true) until now
		"spark.sql.shuffle.partitions": "7",     // 13 in the session
		"spark.sql.warehouse.dir":      "/elsewhere",
	}})
	if etClass(err) != "CANNOT_MODIFY_CONFIG" {
		t.Fatalf("connect with a static setting: %v, want CANNOT_MODIFY_CONFIG", err)
	}
	rows := queryRows(t, "SET spark.sql.shuffle.partitions")
	diff(t, "spark.sql.shuffle.partitions", [][]any{{"spark.sql.shuffle.partitions", "13"}}, rows)
	rows = queryRows(t, "SET spark.sql.ansi.enabled")
	diff(t, "spark.sql.ansi.enabled", [][]any{{"spark.sql.ansi.enabled", "true"}}, rows)
	after := queryRows(t, "SET")
	diff(t, "the session's settings (SET)", before, after)
}
