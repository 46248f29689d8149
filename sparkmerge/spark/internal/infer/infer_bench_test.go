package infer

import (
	"fmt"
	"strings"
	"testing"
)

// wideRows is a file of n rows over 50 columns of ints, doubles, text and
// booleans, like the benchmark's wide-drift corpus.
func wideRows(n int, csv bool) []byte {
	var b strings.Builder
	if csv {
		for c := 0; c < 50; c++ {
			if c > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "col_%02d", c)
		}
		b.WriteByte('\n')
	}
	for r := 0; r < n; r++ {
		if !csv {
			b.WriteByte('{')
		}
		for c := 0; c < 50; c++ {
			if c > 0 {
				b.WriteByte(',')
			}
			if !csv {
				fmt.Fprintf(&b, `"col_%02d":`, c)
			}
			switch c % 4 {
			case 0:
				fmt.Fprintf(&b, "%d", r*7919+c)
			case 1:
				fmt.Fprintf(&b, "%d.%02d", r, c)
			case 2:
				if csv {
					fmt.Fprintf(&b, "s%x", r*c)
				} else {
					fmt.Fprintf(&b, `"s%x"`, r*c)
				}
			default:
				b.WriteString("true")
			}
		}
		if !csv {
			b.WriteByte('}')
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func BenchmarkInferCSV(b *testing.B) {
	data := wideRows(2000, true)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := inferCSV(data, ','); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInferJSONLines(b *testing.B) {
	data := wideRows(2000, false)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := inferJSONLines(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkShortNumbers(b *testing.B) {
	data := wideRows(2000, false)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if !shortNumbers(data) {
			b.Fatal("long numbers")
		}
	}
}
