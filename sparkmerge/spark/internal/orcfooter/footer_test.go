package orcfooter

import (
	"bytes"
	"compress/flate"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"google.golang.org/protobuf/encoding/protowire"
)

// typeSpec is a type of a footer built for a test.
type typeSpec struct {
	kind       Kind
	subtypes   []uint64
	names      []string
	precision  int // written when > 0
	scale      int // written when precision > 0
	attributes [][2]string
}

func encodeType(s typeSpec) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(s.kind))
	if len(s.subtypes) > 0 {
		var packed []byte
		for _, c := range s.subtypes {
			packed = protowire.AppendVarint(packed, c)
		}
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, packed)
	}
	for _, n := range s.names {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, n)
	}
	if s.precision > 0 {
		b = protowire.AppendTag(b, 5, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(s.precision))
		b = protowire.AppendTag(b, 6, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(s.scale))
	}
	for _, kv := range s.attributes {
		var pair []byte
		pair = protowire.AppendTag(pair, 1, protowire.BytesType)
		pair = protowire.AppendString(pair, kv[0])
		pair = protowire.AppendTag(pair, 2, protowire.BytesType)
		pair = protowire.AppendString(pair, kv[1])
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		b = protowire.AppendBytes(b, pair)
	}
	return b
}

// encodeFooter is a Footer with some fields before the types (as writers
// put them) and the row count.
func encodeFooter(types []typeSpec, rows uint64) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType) // headerLength
	b = protowire.AppendVarint(b, 3)
	b = protowire.AppendTag(b, 3, protowire.BytesType) // a stripe
	b = protowire.AppendBytes(b, []byte{0x08, 0x03, 0x10, 0x40})
	for _, t := range types {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, encodeType(t))
	}
	b = protowire.AppendTag(b, 6, protowire.VarintType)
	b = protowire.AppendVarint(b, rows)
	return b
}

// compressChunks compresses data in chunks of at most block bytes, each
// with ORC's 3-byte header; a chunk that does not shrink is stored as is.
func compressChunks(t testing.TB, codec Codec, block int, data []byte) []byte {
	t.Helper()
	if codec == None {
		return data
	}
	var out []byte
	for len(data) > 0 {
		n := min(block, len(data))
		chunk := data[:n]
		data = data[n:]
		var c []byte
		switch codec {
		case Zlib:
			var buf bytes.Buffer
			w, _ := flate.NewWriter(&buf, flate.BestCompression)
			w.Write(chunk)
			w.Close()
			c = buf.Bytes()
		case Snappy:
			c = snappy.Encode(nil, chunk)
		case LZ4:
			dst := make([]byte, lz4.CompressBlockBound(len(chunk)))
			m, err := lz4.CompressBlock(chunk, dst, nil)
			if err != nil {
				t.Fatal(err)
			}
			c = dst[:m]
		case Zstd:
			enc, _ := zstd.NewWriter(nil)
			c = enc.EncodeAll(chunk, nil)
		default:
			t.Fatalf("codec %s", codec)
		}
		original := len(c) == 0 || len(c) >= len(chunk)
		h := len(c) << 1
		if original {
			c, h = chunk, len(chunk)<<1|1
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
		out = append(out, c...)
	}
	return out
}

// orcFile builds a file: a header and some stripe bytes, the footer
// compressed by codec, the postscript and its length.
func orcFile(t testing.TB, codec Codec, block int, footer []byte, magic string) []byte {
	t.Helper()
	compressed := compressChunks(t, codec, block, footer)
	var ps []byte
	ps = protowire.AppendTag(ps, 1, protowire.VarintType)
	ps = protowire.AppendVarint(ps, uint64(len(compressed)))
	ps = protowire.AppendTag(ps, 2, protowire.VarintType)
	ps = protowire.AppendVarint(ps, uint64(codec))
	ps = protowire.AppendTag(ps, 3, protowire.VarintType)
	ps = protowire.AppendVarint(ps, uint64(block))
	ps = protowire.AppendTag(ps, 4, protowire.BytesType)
	ps = protowire.AppendBytes(ps, []byte{0, 12})
	ps = protowire.AppendTag(ps, 8000, protowire.BytesType)
	ps = protowire.AppendString(ps, magic)
	file := append([]byte("ORC"), bytes.Repeat([]byte{0xAB}, 100)...)
	file = append(file, compressed...)
	file = append(file, ps...)
	return append(file, byte(len(ps)))
}

// sample is struct<id:bigint, price:decimal(10,2), tags:array<string>,
// attrs:map<string,int>, ntz:bigint with Spark's attribute>.
var sample = []typeSpec{
	{kind: Struct, subtypes: []uint64{1, 2, 3, 5, 8}, names: []string{"id", "price", "tags", "attrs", "ntz"}},
	{kind: Long},
	{kind: Decimal, precision: 10, scale: 2},
	{kind: List, subtypes: []uint64{4}},
	{kind: String},
	{kind: Map, subtypes: []uint64{6, 7}},
	{kind: Varchar},
	{kind: Int},
	{kind: Long, attributes: [][2]string{{"spark.sql.catalyst.type", "timestamp_ntz"}}},
}

// describe prints a type tree compactly, for comparisons.
func describe(t *Type) string {
	var b strings.Builder
	var walk func(t *Type)
	walk = func(t *Type) {
		switch t.Kind {
		case Struct:
			b.WriteString("struct<")
			for i, c := range t.Children {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(t.FieldNames[i] + ":")
				walk(c)
			}
			b.WriteString(">")
		case List:
			b.WriteString("list<")
			walk(t.Children[0])
			b.WriteString(">")
		case Map:
			b.WriteString("map<")
			walk(t.Children[0])
			b.WriteString(",")
			walk(t.Children[1])
			b.WriteString(">")
		case Decimal:
			b.WriteString("decimal")
			if t.HasPrecision {
				b.WriteString("(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")")
			}
		default:
			b.WriteString("kind" + strconv.Itoa(int(t.Kind)))
		}
		for k, v := range t.Attributes {
			b.WriteString("[" + k + "=" + v + "]")
		}
	}
	walk(t)
	return b.String()
}

func TestReadEveryCodec(t *testing.T) {
	footer := encodeFooter(sample, 12345)
	want := "struct<id:kind4,price:decimal(10,2),tags:list<kind7>,attrs:map<kind16,kind3>,ntz:kind4[spark.sql.catalyst.type=timestamp_ntz]>"
	for _, codec := range []Codec{None, Zlib, Snappy, LZ4, Zstd} {
		// A small block splits the footer into several chunks.
		for _, block := range []int{1 << 18, 16} {
			data := orcFile(t, codec, block, footer, "ORC")
			tail, err := Read(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatalf("%s, block %d: %v", codec, block, err)
			}
			if got := describe(tail.Schema); got != want {
				t.Errorf("%s, block %d:\n got %s\nwant %s", codec, block, got, want)
			}
			if tail.Codec != codec || tail.Rows != 12345 {
				t.Errorf("%s, block %d: codec %s, rows %d", codec, block, tail.Codec, tail.Rows)
			}
		}
	}
}

func TestReadFile(t *testing.T) {
	data := orcFile(t, Zstd, 1<<18, encodeFooter(sample, 7), "ORC")
	path := filepath.Join(t.TempDir(), "x.orc")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tail, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if tail.Rows != 7 || len(tail.Schema.Children) != 5 {
		t.Errorf("rows %d, %d columns", tail.Rows, len(tail.Schema.Children))
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.orc")); err == nil {
		t.Error("a missing file read without error")
	}
}

// Files that are not ORC, or whose tails do not hold together, fail with
// an error that says why, and never panic.
func TestReadRefuses(t *testing.T) {
	good := encodeFooter(sample, 1)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"short", []byte("OR"), "too short"},
		{"no magic", orcFile(t, None, 1<<18, good, "PAR"), "no ORC magic"},
		{"lzo", orcFile(t, None, 1<<18, good, "ORC"), ""}, // replaced below
		{"postscript longer than the file", []byte{0, 0, 0, 200}, "postscript length"},
		{"root not a struct", orcFile(t, None, 1<<18, encodeFooter([]typeSpec{{kind: Int}}, 1), "ORC"), "not a struct"},
		{"subtype out of range", orcFile(t, None, 1<<18, encodeFooter([]typeSpec{{kind: Struct, subtypes: []uint64{5}, names: []string{"a"}}}, 1), "ORC"), "invalid subtype"},
		{"subtype before its parent", orcFile(t, None, 1<<18, encodeFooter([]typeSpec{{kind: Struct, subtypes: []uint64{1}, names: []string{"a"}}, {kind: List, subtypes: []uint64{1}}}, 1), "ORC"), "invalid subtype"},
		{"names fewer than fields", orcFile(t, None, 1<<18, encodeFooter([]typeSpec{{kind: Struct, subtypes: []uint64{1}}, {kind: Int}}, 1), "ORC"), "names 0"},
		{"map of one", orcFile(t, None, 1<<18, encodeFooter([]typeSpec{{kind: Struct, subtypes: []uint64{1}, names: []string{"m"}}, {kind: Map, subtypes: []uint64{2}}, {kind: Int}}, 1), "ORC"), "has 1 subtypes"},
		{"unknown kind", orcFile(t, None, 1<<18, encodeFooter([]typeSpec{{kind: 99}}, 1), "ORC"), "unknown type kind 99"},
		{"no types", orcFile(t, None, 1<<18, encodeFooter(nil, 1), "ORC"), "no types"},
	}
	// LZO: a codec this package does not decompress.
	// (A footer snappy shrinks, so that its chunk is not stored as is.)
	compressible := encodeFooter([]typeSpec{{kind: Struct, subtypes: []uint64{1}, names: []string{strings.Repeat("x", 300)}}, {kind: Int}}, 1)
	lzo := orcFile(t, Snappy, 1<<18, compressible, "ORC")
	cases[2].data, cases[2].want = withCodec(t, lzo, LZO), "lzo is not supported"
	for _, tc := range cases {
		_, err := Read(bytes.NewReader(tc.data), int64(len(tc.data)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	// Every cut of a good file fails or reads, without a panic.
	data := orcFile(t, Zstd, 64, good, "ORC")
	for i := 1; i < len(data); i++ {
		cut := data[i:]
		Read(bytes.NewReader(cut), int64(len(cut)))
		flipped := bytes.Clone(data)
		flipped[i] ^= 0xFF
		Read(bytes.NewReader(flipped), int64(len(flipped)))
	}
}

// withCodec rewrites the codec in a file's postscript (field 2, one byte).
func withCodec(t *testing.T, data []byte, codec Codec) []byte {
	t.Helper()
	data = bytes.Clone(data)
	psLen := int(data[len(data)-1])
	ps := data[len(data)-1-psLen : len(data)-1]
	i := bytes.Index(ps, []byte{0x10, byte(Snappy)})
	if i < 0 {
		t.Fatal("no codec field")
	}
	ps[i+1] = byte(codec)
	return data
}

func FuzzRead(f *testing.F) {
	footer := encodeFooter(sample, 3)
	for _, codec := range []Codec{None, Zlib, Snappy, LZ4, Zstd} {
		f.Add(orcFile(f, codec, 32, footer, "ORC"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tail, err := Read(bytes.NewReader(data), int64(len(data)))
		if err == nil && (tail.Schema == nil || tail.Schema.Kind != Struct) {
			t.Fatalf("read without error but the root is %+v", tail.Schema)
		}
	})
}
