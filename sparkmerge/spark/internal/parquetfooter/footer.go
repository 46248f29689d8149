// Package parquetfooter reads the schema and key-value metadata of a
// Parquet file from its footer, without reading any data page.
//
// A Parquet file ends with its FileMetaData, serialized with Thrift's
// compact protocol, then the metadata's length (4 bytes, little endian) and
// the magic "PAR1". This package decodes only the fields a schema needs
// (the flattened schema and the key-value metadata) and skips the rest,
// row groups and statistics included, without allocating for them. It
// knows the format from parquet.thrift (parquet-format 2.10); encrypted
// footers ("PARE") are refused.
package parquetfooter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Physical types (parquet.thrift Type).
const (
	Boolean           = 0
	Int32             = 1
	Int64             = 2
	Int96             = 3
	Float             = 4
	Double            = 5
	ByteArray         = 6
	FixedLenByteArray = 7
)

// Repetitions (parquet.thrift FieldRepetitionType).
const (
	Required = 0
	Optional = 1
	Repeated = 2
)

// Converted types (parquet.thrift ConvertedType), the annotations older
// writers set instead of a LogicalType.
const (
	ConvertedUTF8            = 0
	ConvertedMap             = 1
	ConvertedMapKeyValue     = 2
	ConvertedList            = 3
	ConvertedEnum            = 4
	ConvertedDecimal         = 5
	ConvertedDate            = 6
	ConvertedTimeMillis      = 7
	ConvertedTimeMicros      = 8
	ConvertedTimestampMillis = 9
	ConvertedTimestampMicros = 10
	ConvertedUint8           = 11
	ConvertedUint16          = 12
	ConvertedUint32          = 13
	ConvertedUint64          = 14
	ConvertedInt8            = 15
	ConvertedInt16           = 16
	ConvertedInt32           = 17
	ConvertedInt64           = 18
	ConvertedJSON            = 19
	ConvertedBSON            = 20
	ConvertedInterval        = 21
)

// Logical type kinds: the field ids of parquet.thrift's LogicalType union.
const (
	LogicalString    = 1
	LogicalMap       = 2
	LogicalList      = 3
	LogicalEnum      = 4
	LogicalDecimal   = 5
	LogicalDate      = 6
	LogicalTime      = 7
	LogicalTimestamp = 8
	LogicalInteger   = 10
	LogicalUnknown   = 11
	LogicalJSON      = 12
	LogicalBSON      = 13
	LogicalUUID      = 14
	LogicalFloat16   = 15
	LogicalVariant   = 16
	LogicalGeometry  = 17
	LogicalGeography = 18
)

// Time units (the field ids of parquet.thrift's TimeUnit union).
const (
	Millis = 1
	Micros = 2
	Nanos  = 3
)

// Element is one node of the flattened schema: the root, a group or a
// primitive column. Optional thrift fields absent from the file are -1
// (numbers) or nil (Logical).
type Element struct {
	Name string
	// Type is the physical type; -1 for a group.
	Type int
	// TypeLength is the byte length of a FIXED_LEN_BYTE_ARRAY.
	TypeLength int
	// Repetition is Required, Optional or Repeated; -1 on the root.
	Repetition int
	// NumChildren is the number of children of a group; -1 on a leaf.
	NumChildren int
	// Converted is the ConvertedType; -1 when absent.
	Converted int
	// Scale and Precision of a DECIMAL converted type.
	Scale, Precision int
	// FieldID is the writer's field id; -1 when absent.
	FieldID int
	// Logical is the LogicalType; nil when absent.
	Logical *Logical
}

// Logical is a LogicalType annotation.
type Logical struct {
	// Kind is one of the Logical* constants (the union's field id).
	Kind int
	// Scale and Precision of a decimal.
	Scale, Precision int
	// AdjustedToUTC and Unit of a time or timestamp.
	AdjustedToUTC bool
	Unit          int
	// BitWidth and Signed of an integer.
	BitWidth int
	Signed   bool
}

// Meta is what a footer says about a file's schema.
type Meta struct {
	// Schema is the flattened schema in depth-first order; Schema[0] is
	// the root (the message).
	Schema []Element
	// KeyValue is the key-value metadata. A key present twice keeps its
	// last value.
	KeyValue map[string]string
	// NumRows is the file's row count.
	NumRows int64
}

// MaxFooterBytes bounds the footer this package reads: a larger one (a
// file of very many row groups or columns) is refused.
const MaxFooterBytes = 64 << 20

// ReadFile reads the footer of the Parquet file at path.
func ReadFile(path string) (*Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	if size < 12 {
		return nil, fmt.Errorf("%s: %d bytes is too short for a Parquet file", path, size)
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return nil, err
	}
	switch string(tail[4:]) {
	case "PAR1":
	case "PARE":
		return nil, fmt.Errorf("%s: the footer is encrypted", path)
	default:
		return nil, fmt.Errorf("%s: not a Parquet file (no PAR1 magic at the end)", path)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n <= 0 || n > size-12 {
		return nil, fmt.Errorf("%s: footer length %d does not fit the file's %d bytes", path, n, size)
	}
	if n > MaxFooterBytes {
		return nil, fmt.Errorf("%s: footer of %d bytes is larger than %d", path, n, MaxFooterBytes)
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-8-n); err != nil {
		return nil, err
	}
	m, err := Decode(buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Decode decodes a serialized FileMetaData.
func Decode(data []byte) (m *Meta, err error) {
	d := &decoder{buf: data}
	defer func() {
		if r := recover(); r != nil {
			de, ok := r.(decodeError)
			if !ok {
				panic(r)
			}
			m, err = nil, de
		}
	}()
	m = &Meta{KeyValue: map[string]string{}}
	d.readStruct(func(id int16, typ byte) {
		switch {
		case id == 2 && typ == typeList:
			n, elem := d.listHeader()
			d.expect(elem, typeStruct)
			m.Schema = make([]Element, 0, n)
			for range n {
				m.Schema = append(m.Schema, d.element())
			}
		case id == 3 && typ == typeI64:
			m.NumRows = d.varint()
		case id == 5 && typ == typeList:
			n, elem := d.listHeader()
			d.expect(elem, typeStruct)
			for range n {
				var k, v string
				d.readStruct(func(id int16, typ byte) {
					switch {
					case id == 1 && typ == typeBinary:
						k = string(d.binary())
					case id == 2 && typ == typeBinary:
						v = string(d.binary())
					default:
						d.skip(typ)
					}
				})
				m.KeyValue[k] = v
			}
		default:
			d.skip(typ)
		}
	})
	if len(m.Schema) == 0 {
		return nil, errors.New("the footer has no schema")
	}
	return m, nil
}

func (d *decoder) element() Element {
	e := Element{Type: -1, Repetition: -1, NumChildren: -1, Converted: -1, FieldID: -1}
	// SchemaElement's i32 fields, by field id.
	i32 := [...]*int{1: &e.Type, 2: &e.TypeLength, 3: &e.Repetition, 5: &e.NumChildren,
		6: &e.Converted, 7: &e.Scale, 8: &e.Precision, 9: &e.FieldID}
	d.readStruct(func(id int16, typ byte) {
		switch {
		case id >= 0 && int(id) < len(i32) && i32[id] != nil && typ == typeI32:
			*i32[id] = int(d.varint())
		case id == 4 && typ == typeBinary:
			e.Name = string(d.binary())
		case id == 10 && typ == typeStruct:
			e.Logical = d.logical()
		default:
			d.skip(typ)
		}
	})
	return e
}

// logical decodes the LogicalType union. A union member this package does
// not know leaves Kind at its field id with no detail, which callers treat
// as unknown.
func (d *decoder) logical() *Logical {
	l := &Logical{}
	d.readStruct(func(id int16, typ byte) {
		if typ != typeStruct {
			d.skip(typ)
			return
		}
		l.Kind = int(id)
		d.readStruct(func(fid int16, ftyp byte) {
			switch {
			case id == LogicalDecimal && fid == 1 && ftyp == typeI32:
				l.Scale = int(d.varint())
			case id == LogicalDecimal && fid == 2 && ftyp == typeI32:
				l.Precision = int(d.varint())
			case (id == LogicalTime || id == LogicalTimestamp) && fid == 1 && isBool(ftyp):
				l.AdjustedToUTC = d.boolField(ftyp)
			case (id == LogicalTime || id == LogicalTimestamp) && fid == 2 && ftyp == typeStruct:
				d.readStruct(func(uid int16, utyp byte) {
					if utyp == typeStruct {
						l.Unit = int(uid)
					}
					d.skip(utyp)
				})
			case id == LogicalInteger && fid == 1 && ftyp == typeByte:
				l.BitWidth = int(int8(d.byte()))
			case id == LogicalInteger && fid == 2 && isBool(ftyp):
				l.Signed = d.boolField(ftyp)
			default:
				d.skip(ftyp)
			}
		})
	})
	return l
}

// Thrift compact protocol type ids.
const (
	typeStop      = 0
	typeTrue      = 1
	typeFalse     = 2
	typeByte      = 3
	typeI16       = 4
	typeI32       = 5
	typeI64       = 6
	typeDouble    = 7
	typeBinary    = 8
	typeList      = 9
	typeSet       = 10
	typeMap       = 11
	typeStruct    = 12
	maxNesting    = 64
	maxCollection = 1 << 28
)

type decodeError string

func (e decodeError) Error() string { return "decode parquet footer: " + string(e) }

// decoder reads Thrift compact protocol. Malformed input panics with a
// decodeError, which Decode recovers.
type decoder struct {
	buf   []byte
	pos   int
	depth int
}

func (d *decoder) fail(format string, args ...any) {
	panic(decodeError(fmt.Sprintf(format, args...) + fmt.Sprintf(" at byte %d", d.pos)))
}

func (d *decoder) byte() byte {
	if d.pos >= len(d.buf) {
		d.fail("%v", io.ErrUnexpectedEOF)
	}
	b := d.buf[d.pos]
	d.pos++
	return b
}

func (d *decoder) uvarint() uint64 {
	var x uint64
	for shift := 0; shift < 64; shift += 7 {
		b := d.byte()
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x
		}
	}
	d.fail("varint too long")
	return 0
}

// varint reads a zigzag-encoded integer (i16, i32 and i64 alike).
func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) binary() []byte {
	n := d.uvarint()
	if n > uint64(len(d.buf)-d.pos) {
		d.fail("binary of %d bytes past the end", n)
	}
	b := d.buf[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b
}

func isBool(typ byte) bool { return typ == typeTrue || typ == typeFalse }

// boolField returns a struct field's boolean, which the compact protocol
// stores in the field header's type.
func (d *decoder) boolField(typ byte) bool { return typ == typeTrue }

func (d *decoder) expect(got, want byte) {
	if got != want {
		d.fail("element type %d where %d was expected", got, want)
	}
}

func (d *decoder) listHeader() (n int, elem byte) {
	h := d.byte()
	size := uint64(h >> 4)
	if size == 15 {
		size = d.uvarint()
	}
	if size > maxCollection || size > uint64(len(d.buf)-d.pos) {
		// Every element takes at least one byte.
		d.fail("list of %d elements past the end", size)
	}
	return int(size), h & 0x0f
}

// readStruct calls field for each field of a struct until its stop byte;
// field must consume the value (or skip it).
func (d *decoder) readStruct(field func(id int16, typ byte)) {
	d.depth++
	if d.depth > maxNesting {
		d.fail("nesting deeper than %d", maxNesting)
	}
	var last int16
	for {
		h := d.byte()
		if h == typeStop {
			break
		}
		typ := h & 0x0f
		id := last + int16(h>>4)
		if h>>4 == 0 {
			id = int16(d.varint())
		}
		last = id
		field(id, typ)
	}
	d.depth--
}

// skip consumes a value of type typ.
func (d *decoder) skip(typ byte) {
	switch typ {
	case typeTrue, typeFalse:
		// The value is in the header (a struct field).
	case typeByte:
		d.byte()
	case typeI16, typeI32, typeI64:
		d.uvarint()
	case typeDouble:
		if len(d.buf)-d.pos < 8 {
			d.fail("%v", io.ErrUnexpectedEOF)
		}
		d.pos += 8
	case typeBinary:
		d.binary()
	case typeList, typeSet:
		n, elem := d.listHeader()
		for range n {
			d.skipElem(elem)
		}
	case typeMap:
		n := d.uvarint()
		if n == 0 {
			return
		}
		if n > maxCollection || n > uint64(len(d.buf)-d.pos) {
			d.fail("map of %d entries past the end", n)
		}
		kv := d.byte()
		for range n {
			d.skipElem(kv >> 4)
			d.skipElem(kv & 0x0f)
		}
	case typeStruct:
		d.readStruct(func(_ int16, typ byte) { d.skip(typ) })
	default:
		d.fail("unknown thrift type %d", typ)
	}
}

// skipElem consumes a collection element: booleans there take a byte.
func (d *decoder) skipElem(typ byte) {
	if isBool(typ) {
		d.byte()
		return
	}
	d.skip(typ)
}
