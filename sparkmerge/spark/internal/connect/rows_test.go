package connect

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"
)

func TestRowsFromTable(t *testing.T) {
	mem := memory.NewGoAllocator()
	dec := &arrow.Decimal128Type{Precision: 12, Scale: 4}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "l", Type: arrow.PrimitiveTypes.Int64},
		{Name: "d", Type: dec, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "dt", Type: arrow.FixedWidthTypes.Date32},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Etc/UTC"}},
		{Name: "arr", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})},
		{Name: "dur", Type: &arrow.DurationType{Unit: arrow.Microsecond}},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()

	b.Field(0).(*array.Int32Builder).AppendValues([]int32{7, 0}, []bool{true, false})
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{1 << 40, -1}, nil)
	db := b.Field(2).(*array.Decimal128Builder)
	db.Append(decimal128.FromI64(15000)) // 1.5000
	db.AppendNull()
	b.Field(3).(*array.StringBuilder).AppendValues([]string{"x", ""}, []bool{true, false})
	b.Field(4).(*array.Date32Builder).AppendValues([]arrow.Date32{arrow.Date32FromTime(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)), 0}, nil)
	b.Field(5).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{arrow.Timestamp(time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC).UnixMicro()), 0}, nil)
	lb := b.Field(6).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	lb.Append(true) // empty list
	mb := b.Field(7).(*array.MapBuilder)
	mb.Append(true)
	mb.KeyBuilder().(*array.StringBuilder).AppendValues([]string{"z", "a"}, nil)
	mb.ItemBuilder().(*array.Float64Builder).AppendValues([]float64{1.5, 0}, []bool{true, false})
	mb.AppendNull()
	sb := b.Field(8).(*array.StructBuilder)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.BooleanBuilder).Append(true)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.BooleanBuilder).AppendNull()
	b.Field(9).(*array.DurationBuilder).AppendValues([]arrow.Duration{86400_000_000, 1}, nil)

	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec, rec})
	defer tbl.Release()

	got, err := rowsFromTable(tbl)
	if err != nil {
		t.Fatal(err)
	}
	row0 := []any{
		int32(7), int64(1 << 40), "1.5000", "x",
		time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC),
		[]any{int64(1), int64(2)},
		[]MapEntry{{"z", 1.5}, {"a", nil}},
		map[string]any{"a b": true},
		24 * time.Hour,
	}
	row1 := []any{
		nil, int64(-1), nil, nil,
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		[]any{},
		nil,
		map[string]any{"a b": nil},
		time.Microsecond,
	}
	want := Rows{
		Columns: []string{"i", "l", "d", "s", "dt", "ts", "arr", "m", "st", "dur"},
		Values:  [][]any{row0, row1, row0, row1}, // two chunks
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rowsFromTable (-want +got):\n%s", diff)
	}
}
