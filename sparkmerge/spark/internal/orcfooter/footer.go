// Package orcfooter reads the schema of an ORC file from its tail: the
// postscript (uncompressed), then the footer it points to, decompressed by
// the file's codec. It reads nothing else of the file, so that the client
// types a local ORC file, or the tail of one only the server sees, without
// a Spark request per file.
//
// The layout is ORC's specification (https://orc.apache.org/specification/
// ORCv1/): the file ends with the footer, the postscript and one byte
// holding the postscript's length; the footer's types list the schema as a
// tree flattened depth-first, root first.
package orcfooter

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"google.golang.org/protobuf/encoding/protowire"
)

// Kind is an ORC type's category (orc_proto.Type.Kind).
type Kind int

// The categories, numbered as in the file.
const (
	Boolean Kind = iota
	Byte
	Short
	Int
	Long
	Float
	Double
	String
	Binary
	Timestamp
	List
	Map
	Struct
	Union
	Decimal
	Date
	Varchar
	Char
	TimestampInstant
)

// Codec is a file's compression (orc_proto.CompressionKind).
type Codec int

// The codecs, numbered as in the file.
const (
	None Codec = iota
	Zlib
	Snappy
	LZO
	LZ4
	Zstd
	Brotli
)

var codecNames = [...]string{"none", "zlib", "snappy", "lzo", "lz4", "zstd", "brotli"}

func (c Codec) String() string {
	if c >= 0 && int(c) < len(codecNames) {
		return codecNames[c]
	}
	return fmt.Sprintf("codec %d", int(c))
}

// Type is one node of a file's schema, as the footer stores it.
type Type struct {
	Kind Kind
	// Children are the node's subtypes (a struct's fields, a list's
	// element, a map's key and value, a union's alternatives).
	Children []*Type
	// FieldNames name a struct's children, in order.
	FieldNames []string
	// MaxLength of a char or varchar; 0 when the file does not say.
	MaxLength int
	// Precision and Scale of a decimal; HasPrecision and HasScale say
	// whether the file gives them (ORC's defaults are 38 and 10).
	Precision, Scale       int
	HasPrecision, HasScale bool
	// Attributes are the type's key-value attributes (ORC 1.6 and
	// later); Spark stores the Catalyst type of a column it could not
	// store as itself under spark.sql.catalyst.type.
	Attributes map[string]string
}

// Tail is what a file's tail says about it.
type Tail struct {
	Codec Codec
	// Schema is the root type: a struct.
	Schema *Type
	// Rows is the file's row count.
	Rows uint64
}

// Limits on what this package reads: a larger postscript or footer (a
// file of very many stripes or columns) is refused.
const (
	maxPostscriptBytes = 255 // its length is one byte
	MaxFooterBytes     = 64 << 20
)

// ReadFile reads the tail of the ORC file at path.
func ReadFile(path string) (*Tail, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	t, err := Read(f, info.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Read reads the tail of the ORC file of the given size that r reads.
func Read(r io.ReaderAt, size int64) (*Tail, error) {
	if size < 4 {
		return nil, fmt.Errorf("%d bytes is too short for an ORC file", size)
	}
	var last [1]byte
	if _, err := r.ReadAt(last[:], size-1); err != nil {
		return nil, err
	}
	psLen := int64(last[0])
	if psLen == 0 || psLen+1 > size {
		return nil, fmt.Errorf("postscript length %d does not fit the file's %d bytes", psLen, size)
	}
	ps := make([]byte, psLen)
	if _, err := r.ReadAt(ps, size-1-psLen); err != nil {
		return nil, err
	}
	post, err := decodePostscript(ps)
	if err != nil {
		return nil, err
	}
	if post.footerLength == 0 || post.footerLength > uint64(size-1-psLen) {
		return nil, fmt.Errorf("footer length %d does not fit the file's %d bytes", post.footerLength, size)
	}
	if post.footerLength > MaxFooterBytes {
		return nil, fmt.Errorf("footer of %d bytes is larger than %d", post.footerLength, MaxFooterBytes)
	}
	raw := make([]byte, post.footerLength)
	if _, err := r.ReadAt(raw, size-1-psLen-int64(post.footerLength)); err != nil {
		return nil, err
	}
	footer, err := decompress(post.codec, post.blockSize, raw)
	if err != nil {
		return nil, fmt.Errorf("decompress the footer (%s): %w", post.codec, err)
	}
	schema, rows, err := decodeFooter(footer)
	if err != nil {
		return nil, err
	}
	return &Tail{Codec: post.codec, Schema: schema, Rows: rows}, nil
}

type postscript struct {
	footerLength uint64
	codec        Codec
	blockSize    uint64
}

// decodePostscript decodes an orc_proto.PostScript, and refuses one
// without the ORC magic (an ORC 0.11 file, or not ORC).
func decodePostscript(b []byte) (postscript, error) {
	p := postscript{blockSize: 256 << 10} // ORC's default
	magic := false
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			p.footerLength = v
		case num == 2 && typ == protowire.VarintType:
			p.codec = Codec(v)
		case num == 3 && typ == protowire.VarintType:
			p.blockSize = v
		case num == 8000 && typ == protowire.BytesType:
			magic = string(b) == "ORC"
		}
		return nil
	})
	if err != nil {
		return p, fmt.Errorf("decode the postscript: %w", err)
	}
	if !magic {
		return p, errors.New("not an ORC file (no ORC magic in the postscript)")
	}
	return p, nil
}

// decompress undoes a codec's chunks: each has a 3-byte little-endian
// header, its length times two, plus one when the chunk was stored as is.
func decompress(codec Codec, blockSize uint64, data []byte) ([]byte, error) {
	if codec == None {
		return data, nil
	}
	var out []byte
	for len(data) > 0 {
		if len(data) < 3 {
			return nil, errors.New("a chunk header is cut short")
		}
		h := int(data[0]) | int(data[1])<<8 | int(data[2])<<16
		n, original := h>>1, h&1 == 1
		data = data[3:]
		if n > len(data) {
			return nil, fmt.Errorf("a chunk of %d bytes overruns the footer's %d", n, len(data))
		}
		chunk := data[:n]
		data = data[n:]
		if original {
			out = append(out, chunk...)
			continue
		}
		plain, err := decompressChunk(codec, blockSize, chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, plain...)
		if len(out) > MaxFooterBytes {
			return nil, fmt.Errorf("footer larger than %d bytes", MaxFooterBytes)
		}
	}
	return out, nil
}

func decompressChunk(codec Codec, blockSize uint64, chunk []byte) ([]byte, error) {
	switch codec {
	case Zlib:
		// ORC's ZLIB is raw deflate, without zlib's header.
		return io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(chunk)), MaxFooterBytes+1))
	case Snappy:
		return snappy.Decode(nil, chunk)
	case LZ4:
		if blockSize > MaxFooterBytes {
			return nil, fmt.Errorf("compression block of %d bytes", blockSize)
		}
		dst := make([]byte, blockSize)
		n, err := lz4.UncompressBlock(chunk, dst)
		if err != nil {
			return nil, err
		}
		return dst[:n], nil
	case Zstd:
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxFooterBytes))
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		return dec.DecodeAll(chunk, nil)
	}
	return nil, fmt.Errorf("%s is not supported", codec)
}

// decodeFooter decodes an orc_proto.Footer's types into the schema tree,
// and its row count.
func decodeFooter(b []byte) (*Type, uint64, error) {
	var types []*Type
	var children [][]uint64
	var rows uint64
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, msg []byte) error {
		switch {
		case num == 4 && typ == protowire.BytesType:
			t, subtypes, err := decodeType(msg)
			if err != nil {
				return err
			}
			types = append(types, t)
			children = append(children, subtypes)
		case num == 6 && typ == protowire.VarintType:
			rows = v
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("decode the footer: %w", err)
	}
	if len(types) == 0 {
		return nil, 0, errors.New("the footer has no types")
	}
	// Every type but the root is the child of exactly one type listed
	// before it (the writer lists the tree depth-first).
	parented := make([]bool, len(types))
	for i, t := range types {
		for _, c := range children[i] {
			if c <= uint64(i) || c >= uint64(len(types)) || parented[c] {
				return nil, 0, fmt.Errorf("type %d has an invalid subtype %d", i, c)
			}
			parented[c] = true
			t.Children = append(t.Children, types[c])
		}
	}
	for i, t := range types {
		if err := t.check(); err != nil {
			return nil, 0, fmt.Errorf("type %d: %w", i, err)
		}
	}
	if types[0].Kind != Struct {
		return nil, 0, fmt.Errorf("the root type is kind %d, not a struct", types[0].Kind)
	}
	return types[0], rows, nil
}

// check refuses a type whose children do not fit its kind.
func (t *Type) check() error {
	want := -1 // any number
	switch t.Kind {
	case List:
		want = 1
	case Map:
		want = 2
	case Struct:
		if len(t.FieldNames) != len(t.Children) {
			return fmt.Errorf("a struct of %d fields names %d", len(t.Children), len(t.FieldNames))
		}
	case Union:
	default:
		want = 0
	}
	if want >= 0 && len(t.Children) != want {
		return fmt.Errorf("kind %d has %d subtypes", t.Kind, len(t.Children))
	}
	return nil
}

// decodeType decodes an orc_proto.Type, with its subtypes' indices.
func decodeType(b []byte) (*Type, []uint64, error) {
	t := &Type{Kind: -1}
	var subtypes []uint64
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, msg []byte) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			t.Kind = Kind(v)
		case num == 2 && typ == protowire.VarintType:
			subtypes = append(subtypes, v)
		case num == 2 && typ == protowire.BytesType: // packed
			var err error
			subtypes, err = appendPacked(subtypes, msg)
			return err
		case num == 3 && typ == protowire.BytesType:
			t.FieldNames = append(t.FieldNames, string(msg))
		case num == 4 && typ == protowire.VarintType:
			t.MaxLength = int(uint32(v))
		case num == 5 && typ == protowire.VarintType:
			t.Precision, t.HasPrecision = int(uint32(v)), true
		case num == 6 && typ == protowire.VarintType:
			t.Scale, t.HasScale = int(uint32(v)), true
		case num == 7 && typ == protowire.BytesType:
			key, value, err := decodeAttribute(msg)
			if err != nil {
				return err
			}
			if t.Attributes == nil {
				t.Attributes = map[string]string{}
			}
			t.Attributes[key] = value
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if t.Kind < Boolean || t.Kind > TimestampInstant {
		return nil, nil, fmt.Errorf("unknown type kind %d", t.Kind)
	}
	return t, subtypes, nil
}

// appendPacked appends the varints of a packed repeated field to to.
func appendPacked(to []uint64, msg []byte) ([]uint64, error) {
	for len(msg) > 0 {
		x, n := protowire.ConsumeVarint(msg)
		if n < 0 {
			return to, protowire.ParseError(n)
		}
		to = append(to, x)
		msg = msg[n:]
	}
	return to, nil
}

// decodeAttribute decodes an orc_proto.StringPair, a type's attribute.
func decodeAttribute(msg []byte) (key, value string, err error) {
	err = fields(msg, func(num protowire.Number, typ protowire.Type, _ uint64, s []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			key = string(s)
		case num == 2 && typ == protowire.BytesType:
			value = string(s)
		}
		return nil
	})
	return key, value, err
}

// fields calls f with each field of a protobuf message: a varint's value
// in v, a length-delimited field's bytes in b. Other wire types are
// skipped.
func fields(msg []byte, f func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		var v uint64
		var b []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(msg)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(msg)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		if err := f(num, typ, v, b); err != nil {
			return err
		}
	}
	return nil
}

// TailLength is how many bytes at the end of an ORC file its schema needs
// (the footer, the postscript and the postscript's length), read from end,
// the file's last bytes. It is false when end does not hold the whole
// postscript, or the postscript is not ORC's.
func TailLength(end []byte) (int64, bool) {
	n := len(end)
	if n < 2 {
		return 0, false
	}
	psLen := int(end[n-1])
	if psLen == 0 || psLen+1 > n {
		return 0, false
	}
	post, err := decodePostscript(end[n-1-psLen : n-1])
	if err != nil || post.footerLength > MaxFooterBytes {
		return 0, false
	}
	return int64(1+psLen) + int64(post.footerLength), true
}
