package connect

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Rows is a collected result: column names in order and one []any per row.
//
// Values are Go values by Spark type: NULL is nil; boolean bool; tinyint
// int8; smallint int16; int int32; bigint int64; float float32; double
// float64; decimal(p,s) a string with exactly s fraction digits ("1.5000");
// string, char, varchar string; binary []byte; date a time.Time at UTC
// midnight; timestamp the instant as a time.Time in UTC; timestamp_ntz the
// wall clock as a time.Time in UTC; interval year to month int32 months;
// interval day to second a time.Duration; array []any; map []MapEntry in
// the server's order; struct map[string]any by field name.
type Rows struct {
	Columns []string
	Values  [][]any
}

// MapEntry is one key/value pair of a collected map.
type MapEntry struct {
	Key   any `json:"key"`
	Value any `json:"value"`
}

// rowsFromTable converts an Arrow table to rows.
func rowsFromTable(tbl arrow.Table) (Rows, error) {
	var rows Rows
	ncol := int(tbl.NumCols())
	for i := 0; i < ncol; i++ {
		rows.Columns = append(rows.Columns, tbl.Schema().Field(i).Name)
	}
	nrow := int(tbl.NumRows())
	rows.Values = make([][]any, nrow)
	for r := range rows.Values {
		rows.Values[r] = make([]any, ncol)
	}
	for c := 0; c < ncol; c++ {
		r := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				v, err := arrowValue(chunk, i)
				if err != nil {
					return Rows{}, fmt.Errorf("column %q: %w", rows.Columns[c], err)
				}
				rows.Values[r][c] = v
				r++
			}
		}
	}
	return rows, nil
}

// plainValues read row i of the arrays whose Go values are the row values as
// they are, by type.
var plainValues = map[arrow.Type]func(a arrow.Array, i int) any{
	arrow.BOOL:         plainValue[*array.Boolean],
	arrow.INT8:         plainValue[*array.Int8],
	arrow.INT16:        plainValue[*array.Int16],
	arrow.INT32:        plainValue[*array.Int32],
	arrow.INT64:        plainValue[*array.Int64],
	arrow.FLOAT32:      plainValue[*array.Float32],
	arrow.FLOAT64:      plainValue[*array.Float64],
	arrow.STRING:       plainValue[*array.String],
	arrow.LARGE_STRING: plainValue[*array.LargeString],
}

// plainValue returns row i of a, an A.
func plainValue[A arrow.TypedArray[T], T arrow.ValueType](a arrow.Array, i int) any {
	return a.(A).Value(i)
}

// arrowValue returns the Go value of row i of a.
func arrowValue(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	if value, ok := plainValues[a.DataType().ID()]; ok {
		return value(a, i), nil
	}
	switch a := a.(type) {
	case *array.Null:
		return nil, nil
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.LargeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale), nil
	case *array.Date32:
		return a.Value(i).ToTime().UTC(), nil
	case *array.Date64:
		return a.Value(i).ToTime().UTC(), nil
	case *array.Timestamp:
		return a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC(), nil
	case *array.Duration:
		unit := a.DataType().(*arrow.DurationType).Unit
		return time.Duration(a.Value(i)) * unit.Multiplier(), nil
	case *array.MonthInterval:
		return int32(a.Value(i)), nil
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		out := make([]MapEntry, 0, end-start)
		for j := int(start); j < int(end); j++ {
			k, err := arrowValue(keys, j)
			if err != nil {
				return nil, err
			}
			v, err := arrowValue(items, j)
			if err != nil {
				return nil, err
			}
			out = append(out, MapEntry{Key: k, Value: v})
		}
		return out, nil
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			v, err := arrowValue(vals, j)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		out := make(map[string]any, st.NumFields())
		for f := 0; f < st.NumFields(); f++ {
			v, err := arrowValue(a.Field(f), i)
			if err != nil {
				return nil, err
			}
			out[st.Field(f).Name] = v
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unsupported arrow type %s", a.DataType())
	}
}
