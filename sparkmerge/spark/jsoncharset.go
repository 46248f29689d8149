package spark

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonCharset is how the nesting measure (jsonNesting) reads the text of
// a JSON read of a charset (its encoding or charset option), so that it
// counts brackets and quotes as Spark's reader decodes them. The text
// read hands each record's bytes as they are (Spark's text source never
// decodes); the measure then reads them:
//
//   - as UTF-8 (decode "", bound false), exact for UTF-8 and for the
//     charsets whose bytes 0x00-0x7F are always the ASCII character they
//     spell, never part of a character of more bytes: US-ASCII, the
//     ISO-8859 parts, windows-125x, KOI8 (one byte a character), EUC-JP,
//     EUC-KR and EUC-CN/GB2312 (every byte of a wider character is
//     0x8E or over). Of the five characters the measure looks at (" ' \
//     { [, and } ]), each is its own byte and no such byte is anything
//     else, so the counts are the decoded text's; other bytes, read as
//     UTF-8 or not, are neither.
//   - decoded by Spark's decode (decode names the charset, prefix the
//     hex of a byte order mark put first): UTF-16 and UTF-32, of either
//     byte order, whose units hold such bytes in other characters (丢 is
//     22 4E in UTF-16LE). Spark 4 decodes only US-ASCII, ISO-8859-1,
//     UTF-8, UTF-16, UTF-16BE, UTF-16LE and UTF-32 (unless
//     spark.sql.legacy.javaCharsets): UTF-32 of one byte order is
//     UTF-32 after that order's mark.
//   - bound: the multi-byte charsets that keep ASCII's bytes for ASCII
//     but whose second bytes may be 0x5C, 0x5B or 0x7B (Shift_JIS,
//     GBK, GB18030, Big5, UHC), which Spark 4's SQL does not decode:
//     every { and [ is its byte, so the bytes 0x7B and 0x5B of a record
//     bound how deep it nests from above, and only a record past the
//     bound by that count is refused (strings are not told apart: a
//     record holding many such bytes in strings is refused too).
//
// A charset none of these is refused before Spark is asked (known false).
//
// The records stay those of the text read, not binaryFile's whole files
// (2 GB at most a file): line by line the text read splits at lineSep's
// bytes in the charset, as Spark's reader does; with multiLine it reads
// the file whole, as before. Bytes that are not of the charset: Spark
// 3.5's decode reads them as U+FFFD, as the JSON reader does; Spark 4's
// fails (MALFORMED_CHARACTER_CODING, unless
// spark.sql.legacy.codingErrorAction), and the plan is refused saying so.
//
// Line by line, Spark's reader takes a charset other than UTF-8 only
// with lineSep, and never UTF-16 or UTF-32 of no byte order
// (JSONOptionsInRead.checkedEncoding): it refuses such a read before it
// reads a record (sparkRefuses), which the measure then leaves alone.
type jsonCharset struct {
	name   string // as the read gives it; "" for none (UTF-8)
	isUTF8 bool   // UTF-8 itself
	decode string // decode's charset; "" to read the bytes as UTF-8
	prefix string // hex of the bytes put before the record's, for decode
	detect bool   // no charset, multiLine: as Jackson detects it (detectedValue)
	bound  bool   // count bytes of { and [ only
	known  bool
	// encodeLineSep is the bytes of a line separator in the charset, as
	// Spark's JSON reader splits lines at (lineSep.getBytes(encoding)).
	encodeLineSep func(string) []byte
}

// jsonCharsetOf is the charset of a JSON read with options, by the
// names Java gives its charsets and their aliases (case-insensitive,
// as Charset.forName takes them); encoding wins over charset, as in
// Spark's JSONOptions.
func jsonCharsetOf(options map[string]string) jsonCharset {
	name := optionValue(options, "encoding")
	if name == "" {
		name = optionValue(options, "charset")
	}
	cs := jsonCharset{name: name, known: true, encodeLineSep: func(s string) []byte { return []byte(s) }}
	n := strings.ToLower(strings.TrimSpace(name))
	utf16Of := func(big bool) func(string) []byte {
		return func(s string) []byte {
			var b []byte
			for _, u := range utf16.Encode([]rune(s)) {
				if big {
					b = append(b, byte(u>>8), byte(u))
				} else {
					b = append(b, byte(u), byte(u>>8))
				}
			}
			return b
		}
	}
	utf32Of := func(big bool) func(string) []byte {
		return func(s string) []byte {
			var b []byte
			for _, r := range s {
				if big {
					b = append(b, byte(r>>24), byte(r>>16), byte(r>>8), byte(r))
				} else {
					b = append(b, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
				}
			}
			return b
		}
	}
	switch n {
	case "":
		cs.isUTF8 = true
		cs.detect = strings.EqualFold(optionValue(options, "multiLine"), "true")
	case "utf-8", "utf8", "unicode-1-1-utf-8":
		cs.isUTF8 = true
	case "us-ascii", "ascii", "iso646-us", "ascii7", "646", "cp367", "ibm367", "csascii", "default",
		"latin1", "latin2", "latin4", "latin5", "latin9", "l1", "l2", "l4", "l5", "l9",
		"koi8-r", "koi8_r", "koi8", "cskoi8r", "koi8-u", "koi8_u",
		"euc-jp", "euc_jp", "eucjp", "x-euc-jp", "euc-kr", "euc_kr", "euckr", "ksc5601", "ks_c_5601-1987",
		"gb2312", "euc-cn", "euc_cn", "euccn", "x-euc-cn":
	case "utf-16le", "utf_16le", "x-utf-16le", "unicodelittleunmarked":
		cs.decode, cs.encodeLineSep = "UTF-16LE", utf16Of(false)
	case "utf-16be", "utf_16be", "x-utf-16be", "iso-10646-ucs-2", "unicodebigunmarked":
		cs.decode, cs.encodeLineSep = "UTF-16BE", utf16Of(true)
	case "utf-16", "utf_16", "utf16", "unicode", "unicodebig":
		// With a mark of either order, or big-endian (Java's UTF-16).
		cs.decode, cs.encodeLineSep = "UTF-16", utf16Of(true)
	case "x-utf-16le-bom", "unicodelittle":
		cs.decode, cs.prefix, cs.encodeLineSep = "UTF-16", "FFFE", utf16Of(false)
	case "utf-32", "utf_32", "utf32":
		cs.decode, cs.encodeLineSep = "UTF-32", utf32Of(true)
	case "utf-32be", "utf_32be", "x-utf-32be", "x-utf-32be-bom", "utf_32be_bom":
		cs.decode, cs.prefix, cs.encodeLineSep = "UTF-32", "0000FEFF", utf32Of(true)
	case "utf-32le", "utf_32le", "x-utf-32le", "x-utf-32le-bom", "utf_32le_bom":
		cs.decode, cs.prefix, cs.encodeLineSep = "UTF-32", "FFFE0000", utf32Of(false)
	case "shift_jis", "shift-jis", "sjis", "ms_kanji", "x-sjis", "csshiftjis", "windows-31j", "ms932", "cp932", "cswindows31j",
		"gbk", "cp936", "ms936", "windows-936", "x-mswin-936", "gb18030", "gb18030-2022",
		"big5", "csbig5", "big5-hkscs", "big5hk", "big5_hkscs", "ms950", "cp950", "x-windows-950",
		"ms949", "cp949", "x-windows-949", "windows-949":
		cs.bound = true
	default:
		cs.known = singleByteASCII(n)
	}
	return cs
}

// singleByteASCII says whether a charset's name (lower case) is an
// ISO-8859 part or a windows-125x code page: one byte a character, ASCII
// in 0x00-0x7F.
func singleByteASCII(n string) bool {
	for _, prefix := range []string{"iso-8859-", "iso8859-", "iso8859_", "iso_8859-", "iso_8859_", "windows-125", "cp125", "x-cp125"} {
		if rest, ok := strings.CutPrefix(n, prefix); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// sparkRefuses says whether Spark's reader refuses a JSON read of this
// charset with options before it reads a record: line by line (no
// multiLine), UTF-16 or UTF-32 of no byte order, or a charset other
// than UTF-8 without lineSep.
func (cs jsonCharset) sparkRefuses(options map[string]string) bool {
	if strings.EqualFold(optionValue(options, "multiLine"), "true") {
		return false
	}
	denied := (cs.decode == "UTF-16" || cs.decode == "UTF-32") && cs.prefix == ""
	return denied || !cs.isUTF8 && optionValue(options, "lineSep") == ""
}

// value is the SQL of the text the measure reads of a record, the text
// read's value: its bytes decoded (jsonCharset).
func (cs jsonCharset) value() string {
	switch {
	case cs.detect:
		return detectedValue
	case cs.decode != "" && cs.prefix != "":
		return fmt.Sprintf("decode(concat(X'%s', CAST(value AS BINARY)), '%s')", cs.prefix, cs.decode)
	case cs.decode != "":
		return fmt.Sprintf("decode(CAST(value AS BINARY), '%s')", cs.decode)
	case cs.bound:
		// A character a byte: every 0x7B and 0x5B a { and a [.
		return "decode(CAST(value AS BINARY), 'ISO-8859-1')"
	}
	return "value"
}

// textLineSep is the text read's lineSep that splits a file's bytes
// where Spark's JSON reader of this charset splits them at lineSep: the
// separator's bytes in the charset, as the text source's lineSep (which
// it takes in UTF-8). An error where those bytes are not UTF-8 (no
// lineSep of the text read splits there).
func (cs jsonCharset) textLineSep(lineSep string) (string, error) {
	b := cs.encodeLineSep(lineSep)
	if cs.decode != "" && !utf8.Valid(b) || cs.decode == "" && !cs.isUTF8 && !isASCII(lineSep) {
		return "", fmt.Errorf("the lineSep %q in the encoding %s is bytes (% X) that Spark's text reader, which splits the lines the nesting measure reads, cannot split at", lineSep, cs.name, b)
	}
	return string(b), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// measurable is why the nesting of a JSON read of this charset with
// options cannot be measured before Spark infers it, or nil: a charset
// the measure does not know how to read, or a line separator the text
// read cannot split at as Spark's JSON reader does.
func (cs jsonCharset) measurable(options map[string]string) error {
	if !cs.known {
		return fmt.Errorf("its encoding %s is none whose JSON text Spark can measure the nesting of before it infers the file (a record nested too deep ends the server): re-encode the file as UTF-8 (or UTF-16, UTF-32), or give its schema, which Spark does not infer", cs.name)
	}
	if lineSep := optionValue(options, "lineSep"); lineSep != "" && !strings.EqualFold(optionValue(options, "multiLine"), "true") {
		if _, err := cs.textLineSep(lineSep); err != nil {
			return fmt.Errorf("%w, to measure how deep its records nest before Spark infers the file: re-encode it as UTF-8, or give its schema, which Spark does not infer", err)
		}
	}
	return nil
}

// detectedValue is the SQL of a whole file's text (multiLine) read with
// no charset, decoded as Spark's reader then decodes it: Jackson detects
// the charset from the first four bytes (ByteSourceJsonBootstrapper: a
// byte order mark, else zero bytes: 00 00 00 xx UTF-32BE, xx 00 00 00
// UTF-32LE, 00 xx UTF-16BE, xx 00 UTF-16LE, else UTF-8), so a UTF-16 file
// with multiLine reads right without an encoding. Only a length of
// whole units is decoded (else the bytes as UTF-8, as before), and only
// the chosen branch copies the file's bytes.
const detectedValue = `CASE WHEN octet_length(value) % 4 = 0 AND (hex(CAST(substr(value, 1, 4) AS BINARY)) LIKE '0000FEFF%' OR hex(CAST(substr(value, 1, 4) AS BINARY)) LIKE '000000%') THEN decode(CAST(value AS BINARY), 'UTF-32')` +
	` WHEN octet_length(value) % 4 = 0 AND (hex(CAST(substr(value, 1, 4) AS BINARY)) LIKE 'FFFE0000%' OR hex(CAST(substr(value, 1, 4) AS BINARY)) LIKE '__000000%') THEN decode(concat(X'FFFE0000', CAST(value AS BINARY)), 'UTF-32')` +
	` WHEN octet_length(value) % 2 = 0 AND (hex(CAST(substr(value, 1, 4) AS BINARY)) LIKE 'FEFF%' OR hex(CAST(substr(value, 1, 4) AS BINARY)) LIKE '00%') THEN decode(CAST(value AS BINARY), 'UTF-16')` +
	` WHEN octet_length(value) % 2 = 0 AND (hex(CAST(substr(value, 1, 4) AS BINARY)) LIKE 'FFFE%' OR hex(CAST(substr(value, 1, 4) AS BINARY)) LIKE '__00%') THEN decode(CAST(value AS BINARY), 'UTF-16LE')` +
	` ELSE value END`
