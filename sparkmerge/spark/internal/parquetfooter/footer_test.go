package parquetfooter

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// enc writes Thrift compact protocol, for building footers in tests.
type enc struct {
	b    []byte
	last []int16
}

func (e *enc) uvarint(x uint64) { e.b = binary.AppendUvarint(e.b, x) }
func (e *enc) zigzag(x int64)   { e.uvarint(uint64(x<<1) ^ uint64(x>>63)) }

func (e *enc) field(id int16, typ byte) {
	last := &e.last[len(e.last)-1]
	if d := id - *last; d > 0 && d <= 15 {
		e.b = append(e.b, byte(d)<<4|typ)
	} else {
		e.b = append(e.b, typ)
		e.zigzag(int64(id))
	}
	*last = id
}

func (e *enc) begin()                { e.last = append(e.last, 0) }
func (e *enc) end()                  { e.b = append(e.b, 0); e.last = e.last[:len(e.last)-1] }
func (e *enc) i32(id int16, v int64) { e.field(id, typeI32); e.zigzag(v) }
func (e *enc) i64(id int16, v int64) { e.field(id, typeI64); e.zigzag(v) }
func (e *enc) str(id int16, s string) {
	e.field(id, typeBinary)
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *enc) boolean(id int16, v bool) {
	if v {
		e.field(id, typeTrue)
	} else {
		e.field(id, typeFalse)
	}
}

func (e *enc) list(id int16, elem byte, n int) {
	e.field(id, typeList)
	if n < 15 {
		e.b = append(e.b, byte(n)<<4|elem)
	} else {
		e.b = append(e.b, 0xf0|elem)
		e.uvarint(uint64(n))
	}
}

// unit writes an empty-struct union member (a LogicalType without detail,
// or a TimeUnit).
func (e *enc) unit(id int16) { e.field(id, typeStruct); e.begin(); e.end() }

// footer builds a FileMetaData with a schema of id (required int64), name
// (optional UTF8 converted type only), amount (decimal(9,2) logical), at
// (timestamp micros, not UTC) and tiny (INT(8, signed)), one row group full
// of fields to skip, and two key-value pairs.
func footer() []byte {
	e := &enc{}
	e.begin()
	e.i32(1, 2) // version
	e.list(2, typeStruct, 6)
	// root
	e.begin()
	e.str(4, "schema")
	e.i32(5, 5)
	e.end()
	// id
	e.begin()
	e.i32(1, Int64)
	e.i32(3, Required)
	e.str(4, "id")
	e.i32(9, 7) // field id
	e.end()
	// name: converted type only, as older writers wrote it
	e.begin()
	e.i32(1, ByteArray)
	e.i32(3, Optional)
	e.str(4, "name")
	e.i32(6, ConvertedUTF8)
	e.end()
	// amount: decimal(9,2) both ways
	e.begin()
	e.i32(1, Int32)
	e.i32(3, Optional)
	e.str(4, "amount")
	e.i32(6, ConvertedDecimal)
	e.i32(7, 2)
	e.i32(8, 9)
	e.field(10, typeStruct)
	e.begin()
	e.field(LogicalDecimal, typeStruct)
	e.begin()
	e.i32(1, 2)
	e.i32(2, 9)
	e.end()
	e.end()
	e.end()
	// at: timestamp(isAdjustedToUTC=false, MICROS)
	e.begin()
	e.i32(1, Int64)
	e.i32(3, Optional)
	e.str(4, "at")
	e.field(10, typeStruct)
	e.begin()
	e.field(LogicalTimestamp, typeStruct)
	e.begin()
	e.boolean(1, false)
	e.field(2, typeStruct)
	e.begin()
	e.unit(Micros)
	e.end()
	e.end()
	e.end()
	e.end()
	// tiny: INT(8, signed)
	e.begin()
	e.i32(1, Int32)
	e.i32(3, Optional)
	e.str(4, "tiny")
	e.field(10, typeStruct)
	e.begin()
	e.field(LogicalInteger, typeStruct)
	e.begin()
	e.field(1, typeByte)
	e.b = append(e.b, 8)
	e.boolean(2, true)
	e.end()
	e.end()
	e.end()

	e.i64(3, 42) // num_rows
	// row_groups: one, with every kind of value the decoder must skip.
	e.list(4, typeStruct, 1)
	e.begin()
	e.list(1, typeStruct, 16) // 16 column chunks: a long list header
	for range 16 {
		e.begin()
		e.i64(2, 1<<40)
		e.field(3, typeDouble)
		e.b = append(e.b, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f)
		e.list(4, typeTrue, 3) // booleans in a list take a byte each
		e.b = append(e.b, 1, 2, 1)
		e.field(5, typeMap)
		e.uvarint(2)
		e.b = append(e.b, typeBinary<<4|typeI32)
		for _, k := range []string{"k1", "k2"} {
			e.uvarint(uint64(len(k)))
			e.b = append(e.b, k...)
			e.zigzag(-5)
		}
		e.field(6, typeMap) // empty map: no type byte
		e.uvarint(0)
		e.field(300, typeI16) // a long field id delta
		e.zigzag(-1)
		e.end()
	}
	e.i64(2, 123)
	e.end()
	e.list(5, typeStruct, 2)
	for _, kv := range [][2]string{{"writer", "test"}, {"org.apache.spark.sql.parquet.row.metadata", `{"type":"struct","fields":[]}`}} {
		e.begin()
		e.str(1, kv[0])
		e.str(2, kv[1])
		e.end()
	}
	e.str(6, "parquet-test")
	e.end()
	return e.b
}

func TestDecode(t *testing.T) {
	m, err := Decode(footer())
	if err != nil {
		t.Fatal(err)
	}
	want := []Element{
		{Name: "schema", Type: -1, Repetition: -1, NumChildren: 5, Converted: -1, FieldID: -1},
		{Name: "id", Type: Int64, Repetition: Required, NumChildren: -1, Converted: -1, FieldID: 7},
		{Name: "name", Type: ByteArray, Repetition: Optional, NumChildren: -1, Converted: ConvertedUTF8, FieldID: -1},
		{Name: "amount", Type: Int32, Repetition: Optional, NumChildren: -1, Converted: ConvertedDecimal, Scale: 2, Precision: 9, FieldID: -1,
			Logical: &Logical{Kind: LogicalDecimal, Scale: 2, Precision: 9}},
		{Name: "at", Type: Int64, Repetition: Optional, NumChildren: -1, Converted: -1, FieldID: -1,
			Logical: &Logical{Kind: LogicalTimestamp, Unit: Micros}},
		{Name: "tiny", Type: Int32, Repetition: Optional, NumChildren: -1, Converted: -1, FieldID: -1,
			Logical: &Logical{Kind: LogicalInteger, BitWidth: 8, Signed: true}},
	}
	if !reflect.DeepEqual(m.Schema, want) {
		t.Errorf("schema:\n got %+v\nwant %+v", m.Schema, want)
	}
	if m.NumRows != 42 {
		t.Errorf("num rows %d, want 42", m.NumRows)
	}
	if len(m.KeyValue) != 2 || m.KeyValue["writer"] != "test" || !strings.HasPrefix(m.KeyValue["org.apache.spark.sql.parquet.row.metadata"], "{") {
		t.Errorf("key-value metadata %v", m.KeyValue)
	}
}

// Every truncation of a valid footer is an error, never a panic or a
// silently shorter schema.
func TestDecodeTruncated(t *testing.T) {
	data := footer()
	for n := range len(data) {
		if _, err := Decode(data[:n]); err == nil {
			t.Fatalf("decode of the first %d of %d bytes: no error", n, len(data))
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	data := footer()
	file := append([]byte("PAR1 pages "), data...)
	file = binary.LittleEndian.AppendUint32(file, uint32(len(data)))
	file = append(file, "PAR1"...)
	good := filepath.Join(dir, "good.parquet")
	if err := os.WriteFile(good, file, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(good)
	if err != nil || len(m.Schema) != 6 {
		t.Fatalf("ReadFile: %v, %v", m, err)
	}

	bad := map[string][]byte{
		"short":     []byte("PAR1PAR1"),
		"csv":       []byte("a,b\n1,2\n3,4\n5,6\n"),
		"encrypted": append(append([]byte("PAR1xxxxxxxxxxxx"), 4, 0, 0, 0), "PARE"...),
		"too long":  append(append([]byte("PAR1xxxx"), 0xff, 0, 0, 0), "PAR1"...),
	}
	for name, content := range bad {
		p := filepath.Join(dir, name+".parquet")
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.parquet")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Files written by pyarrow (testdata/parquet/gen.py).
func TestReadPyarrowFiles(t *testing.T) {
	m, err := ReadFile("../../testdata/parquet/decimals-as-integers.parquet")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range m.Schema[1:] {
		got = append(got, e.Name)
		if e.Logical == nil || e.Logical.Kind != LogicalDecimal || e.Converted != ConvertedDecimal {
			t.Errorf("%s: %+v, want a decimal annotated both ways", e.Name, e)
		}
	}
	if strings.Join(got, ",") != "dec4,dec9,dec18,dec30" || m.Schema[1].Type != Int32 || m.Schema[3].Type != Int64 || m.Schema[4].Type != FixedLenByteArray {
		t.Errorf("schema %+v", m.Schema)
	}
	if m.NumRows != 2 {
		t.Errorf("num rows %d, want 2", m.NumRows)
	}
	if _, ok := m.KeyValue["ARROW:schema"]; !ok {
		t.Errorf("key-value metadata %v lacks pyarrow's ARROW:schema", m.KeyValue)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(footer())
	f.Add([]byte{0x19, 0x1c, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err == nil && len(m.Schema) == 0 {
			t.Fatal("no error and no schema")
		}
	})
}
