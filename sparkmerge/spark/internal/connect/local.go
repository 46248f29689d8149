package connect

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// LocalColumn is one column of a [Session.LocalTable]: its name and
// exactly one of its value slices, all columns of one length.
type LocalColumn struct {
	Name      string
	Strings   []string  // STRING
	Longs     []int64   // BIGINT
	IntArrays [][]int32 // ARRAY<INT>
}

func (c LocalColumn) len() (n int, set int) {
	for _, l := range []int{len(c.Strings), len(c.Longs), len(c.IntArrays)} {
		if l > 0 {
			n, set = l, set+1
		}
	}
	return n, set
}

// LocalTable returns a frame over rows the client sends with the plan
// (LocalRelation, as Arrow IPC): a small lookup table, which Spark keeps on
// the driver and can broadcast to a join.
func (s *Session) LocalTable(cols ...LocalColumn) Frame {
	return s.build("local table", func() protoreflect.Message {
		data, err := arrowIPC(cols)
		if err != nil {
			panic(buildError{err.Error()})
		}
		rel, local := relation("local_relation")
		local.Set(fd(local, "data"), protoreflect.ValueOfBytes(data))
		return rel
	})
}

// arrowIPC encodes cols as one Arrow record in the IPC streaming format.
func arrowIPC(cols []LocalColumn) ([]byte, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("local table: no columns")
	}
	rows := -1
	fields := make([]arrow.Field, len(cols))
	arrays := make([]arrow.Array, len(cols))
	mem := memory.NewGoAllocator()
	defer func() {
		for _, a := range arrays {
			if a != nil {
				a.Release()
			}
		}
	}()
	for j, c := range cols {
		n, set := c.len()
		if set > 1 {
			return nil, fmt.Errorf("local table: column %q has values of two types", c.Name)
		}
		if rows >= 0 && n != rows {
			return nil, fmt.Errorf("local table: column %q has %d values, the first column %d", c.Name, n, rows)
		}
		rows = n
		switch {
		case c.Strings != nil:
			b := array.NewStringBuilder(mem)
			b.AppendValues(c.Strings, nil)
			fields[j], arrays[j] = arrow.Field{Name: c.Name, Type: arrow.BinaryTypes.String}, b.NewArray()
			b.Release()
		case c.Longs != nil:
			b := array.NewInt64Builder(mem)
			b.AppendValues(c.Longs, nil)
			fields[j], arrays[j] = arrow.Field{Name: c.Name, Type: arrow.PrimitiveTypes.Int64}, b.NewArray()
			b.Release()
		case c.IntArrays != nil:
			b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
			values := b.ValueBuilder().(*array.Int32Builder)
			for _, row := range c.IntArrays {
				b.Append(true)
				values.AppendValues(row, nil)
			}
			fields[j], arrays[j] = arrow.Field{Name: c.Name, Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}, b.NewArray()
			b.Release()
		default:
			return nil, fmt.Errorf("local table: column %q has no values (an empty table needs a schema)", c.Name)
		}
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, arrays, int64(rows))
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := w.Write(rec); err != nil {
		return nil, fmt.Errorf("local table: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("local table: %w", err)
	}
	return buf.Bytes(), nil
}

// BroadcastLeftJoin returns the left outer join of f with small on
// condition (a SQL expression over both sides' columns, which should have
// distinct names), with small broadcast: each of f's rows finds its match
// by a hash lookup, at a cost that does not grow with small's rows. A row
// without a match gets NULL in small's columns.
func (f Frame) BroadcastLeftJoin(small Frame, condition string) Frame {
	if small.err != nil {
		return small
	}
	return f.derive("join", func() protoreflect.Message {
		if small.s != f.s {
			panic(buildError{"join: the frames belong to two sessions"})
		}
		hinted, hint := relation("hint")
		setMsg(hint, "input", small.rel)
		setString(hint, "name", "broadcast")
		rel, join := relation("join")
		setMsg(join, "left", f.rel)
		setMsg(join, "right", hinted)
		setMsg(join, "join_condition", exprString(condition))
		setEnum(join, "join_type", "JOIN_TYPE_LEFT_OUTER")
		return rel
	})
}
