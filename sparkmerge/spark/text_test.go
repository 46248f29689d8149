package spark

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

func TestRowsString(t *testing.T) {
	tests := []struct {
		name string
		rows Rows
		want string
	}{
		{
			name: "right-aligned like show(), NULL for nil, dates",
			rows: Rows{
				Columns: []string{"id", "name", "d"},
				Values: [][]any{
					{int64(1), "alice", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},
					{int64(12345), nil, nil},
				},
			},
			want: "" +
				"+-------+-------+------------+\n" +
				"|    id |  name |          d |\n" +
				"+-------+-------+------------+\n" +
				"|     1 | alice | 2024-03-01 |\n" +
				"| 12345 |  NULL |       NULL |\n" +
				"+-------+-------+------------+\n" +
				"(2 rows)\n",
		},
		{
			name: "unicode width by runes",
			rows: Rows{
				Columns: []string{"id", "név"},
				Values:  [][]any{{int32(7), "Ádám"}, {nil, "x"}},
			},
			want: "" +
				"+------+------+\n" +
				"|   id |  név |\n" +
				"+------+------+\n" +
				"|    7 | Ádám |\n" +
				"| NULL |    x |\n" +
				"+------+------+\n" +
				"(2 rows)\n",
		},
		{
			name: "no rows",
			rows: Rows{Columns: []string{"a", "bb"}},
			want: "" +
				"+---+----+\n" +
				"| a | bb |\n" +
				"+---+----+\n" +
				"+---+----+\n" +
				"(0 rows)\n",
		},
		{
			name: "one row, a short row padded with blanks",
			rows: Rows{Columns: []string{"a", "b"}, Values: [][]any{{true}}},
			want: "" +
				"+------+---+\n" +
				"|    a | b |\n" +
				"+------+---+\n" +
				"| true |   |\n" +
				"+------+---+\n" +
				"(1 row)\n",
		},
		{
			name: "timestamps and empty strings",
			rows: Rows{Columns: []string{"ts", "s"}, Values: [][]any{{time.Date(2024, 1, 2, 3, 4, 5, 600000000, time.UTC), ""}}},
			want: "" +
				"+-----------------------+---+\n" +
				"|                    ts | s |\n" +
				"+-----------------------+---+\n" +
				"| 2024-01-02 03:04:05.6 |   |\n" +
				"+-----------------------+---+\n" +
				"(1 row)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.rows.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"nil", nil, "NULL"},
		{"string", "héllo", "héllo"},
		{"empty string", "", ""},
		{"int32", int32(-5), "-5"},
		{"int64", int64(9007199254740993), "9007199254740993"},
		{"float64", 1.5, "1.5"},
		{"bool", false, "false"},
		{"decimal as string", "12.3400", "12.3400"},
		{"big int", new(big.Int).Lsh(big.NewInt(1), 70), "1180591620717411303424"},
		{"date", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), "2024-02-29"},
		{"timestamp", time.Date(2024, 2, 29, 13, 4, 5, 0, time.UTC), "2024-02-29 13:04:05"},
		{"timestamp micros", time.Date(2024, 2, 29, 13, 4, 5, 123456000, time.UTC), "2024-02-29 13:04:05.123456"},
		{"timestamp millis", time.Date(2024, 2, 29, 13, 4, 5, 120000000, time.UTC), "2024-02-29 13:04:05.12"},
		{"timestamp in its zone", time.Date(2024, 2, 29, 23, 30, 0, 0, cet), "2024-02-29 23:30:00"},
		{"bytes as hex", []byte{0x00, 0xab, 0xff}, "00abff"},
		{"array", []any{int64(1), nil, "x"}, "[1 <nil> x]"},
		{"struct", map[string]any{"b": int64(2), "a": "x"}, "map[a:x b:2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatValue(tt.v); got != tt.want {
				t.Errorf("formatValue(%#v) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}

func TestCountsFromRows(t *testing.T) {
	got, err := countsFromRows(connect.Rows{
		Columns: []string{"src", "n"},
		Values: [][]any{
			{"/d/a.csv", int64(3)},
			{"db.t", int64(0)},
			{nil, int64(2)},
			{"/d/a.csv", int64(4)}, // the same key twice is summed
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"/d/a.csv": 7, "db.t": 0, "": 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("countsFromRows (-want +got):\n%s", diff)
	}

	empty, err := countsFromRows(connect.Rows{Columns: []string{"src", "n"}})
	if err != nil || len(empty) != 0 {
		t.Errorf("countsFromRows(no rows) = %v, %v", empty, err)
	}

	_, err = countsFromRows(connect.Rows{Values: [][]any{{"a", int32(3)}}})
	if err == nil || err.Error() != "unexpected count value int32" {
		t.Errorf("countsFromRows(int32 count) error = %v, want \"unexpected count value int32\"", err)
	}
}

func TestVerifyError(t *testing.T) {
	err := &VerifyError{
		Read:       10,
		Written:    8,
		Mismatches: []string{"/d/a.csv: read 5, written 3", "/d/b.csv: read 5, written 5"},
	}
	want := "verify: 10 rows read but 8 written:\n  /d/a.csv: read 5, written 3\n  /d/b.csv: read 5, written 5"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("VerifyError.Error() (-want +got):\n%s", diff)
	}
}

func TestSortedCountKeysAndMergeKeys(t *testing.T) {
	a := map[string]int64{"b": 1, "a": 2}
	b := map[string]int64{"c": 3, "a": 9}
	if diff := cmp.Diff([]string{"a", "b", "c"}, sortedKeys(mergeKeys(a, b))); diff != "" {
		t.Errorf("sortedKeys(mergeKeys) (-want +got):\n%s", diff)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "rows", 1: "row", 2: "rows"} {
		if got := plural(n, "row", "rows"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// The plan's discovery lines count one file as one: "1 files typed by
// Spark together" was printed for a drop of one dated CSV file beside
// files the client typed.
func TestDiscoveryLinesCountOneFile(t *testing.T) {
	for _, tc := range []struct {
		planned Planned
		want    string
	}{
		{Planned{TypedTogether: 1, TogetherRequests: 2}, "  1 file typed by Spark together, each as alone, in 2 requests\n"},
		{Planned{TypedTogether: 3, TogetherRequests: 1}, "  3 files typed by Spark together, each as alone, in 1 request\n"},
		{Planned{RemoteTyped: 1, RemoteFetchJobs: 1}, "  1 file only the server sees typed by the client, from their contents fetched with their listing and in 1 more Spark job\n"},
		{Planned{RemoteTyped: 2, RemoteFetchJobs: 0}, "  2 files only the server sees typed by the client, from their contents fetched with their listing and in 0 more Spark jobs\n"},
		{Planned{PastFetchLimit: 1}, "  1 file only the server sees not fetched, past the plan's limit of files fetched whole (Job.FetchLimit): typed by Spark where it lives\n"},
		{Planned{PastFetchLimit: 179}, "  179 files only the server sees not fetched, past the plan's limit of files fetched whole (Job.FetchLimit): typed by Spark where they live\n"},
	} {
		var b strings.Builder
		tc.planned.writeDiscovery(&b)
		if got := b.String(); got != tc.want {
			t.Errorf("writeDiscovery = %q, want %q", got, tc.want)
		}
	}
}
