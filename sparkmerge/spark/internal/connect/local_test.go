package connect

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// A local table is one Arrow record that reads back with the columns'
// names, types and values, in order.
func TestArrowIPCRoundTrip(t *testing.T) {
	data, err := arrowIPC([]LocalColumn{
		{Name: "path", Strings: []string{"/d/a.csv", "/d/b é.csv"}},
		{Name: "size", Longs: []int64{10, 1 << 40}},
		{Name: "pos", IntArrays: [][]int32{{1, 2, 3}, {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if got := r.Schema().String(); !strings.Contains(got, "path: type=utf8") || !strings.Contains(got, "size: type=int64") ||
		!strings.Contains(got, "pos: type=list<item: int32") {
		t.Errorf("schema %s", got)
	}
	if !r.Next() {
		t.Fatal("no record")
	}
	rec := r.Record()
	if rec.NumRows() != 2 {
		t.Fatalf("%d rows", rec.NumRows())
	}
	if got := rec.Column(0).(*array.String).Value(1); got != "/d/b é.csv" {
		t.Errorf("path[1] = %q", got)
	}
	if got := rec.Column(1).(*array.Int64).Value(1); got != 1<<40 {
		t.Errorf("size[1] = %d", got)
	}
	lists := rec.Column(2).(*array.List)
	start, end := lists.ValueOffsets(0)
	if end-start != 3 || lists.ListValues().(*array.Int32).Value(int(start)+2) != 3 {
		t.Errorf("pos[0] = offsets %d..%d", start, end)
	}
	if start, end := lists.ValueOffsets(1); end != start {
		t.Errorf("pos[1] has %d values, want none", end-start)
	}
}

func TestArrowIPCRejectsRaggedColumns(t *testing.T) {
	for _, cols := range [][]LocalColumn{
		nil,
		{{Name: "a", Strings: []string{"x"}}, {Name: "b", Longs: []int64{1, 2}}},
		{{Name: "a", Strings: []string{"x"}, Longs: []int64{1}}},
		{{Name: "a"}},
	} {
		if _, err := arrowIPC(cols); err == nil {
			t.Errorf("arrowIPC(%v): no error", cols)
		}
	}
}
