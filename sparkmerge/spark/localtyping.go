package spark

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// inferLocally infers the schemas of the CSV, JSON, Parquet and ORC reads
// it can on the client, by the inference rules of a server of sparkVersion
// (see localCSVFile, localJSONFile, localParquetFile and localORCFile;
// Parquet and ORC only with the server's settings in footers), and returns them apart from the reads whose
// schema Spark must give: all of them when the client has no rules for
// that version. Local CSV reads carry enforceSchema=false: Spark then
// checks every file's header against the inferred names.
func inferLocally(reads []*Read, sparkVersion string, footers footerConf) (local, remote []*Read) {
	rules, ok := infer.RulesFor(sparkVersion)
	if !ok {
		return nil, reads
	}
	return inferLocallyWithin(reads, rules, footers, maxLocalInferTotal)
}

// maxLocalInferTotal bounds the bytes the client reads to infer schemas:
// past it a cluster's parallel inference may beat one client, whose typing
// speed per core `go test -bench Infer ./sparkmerge/spark/internal/infer`
// measures (docs/benchmarks-history.md).
// Files past the budget, in input order, go to Spark. On one machine the
// client wins well past it: with 256 MiB, the 240 MB of a 496 MB JSON
// corpus that went to Spark took a quarter of the merge.
const maxLocalInferTotal = 1 << 30

// inferLocallyWithin is inferLocally with a budget for the bytes of CSV and
// JSON files read (a Parquet or ORC file costs only its footer).
func inferLocallyWithin(reads []*Read, rules infer.Rules, footers footerConf, budget int64) (local, remote []*Read) {
	return applyTypings(reads, typeLocallyWithin(reads, rules, footers, budget))
}

// localTyping is what the client found typing one read by Spark's rules
// (typeLocally), kept apart from the read until the caller applies it
// (applyTo): a typed file may still be left to Spark (keepUnsplit), which
// is then another value (leftToSpark), not an undo of the read's fields.
type localTyping struct {
	// typed: schema holds, and Spark need not be asked.
	typed  bool
	schema sparkmerge.Schema
	// raw and reprinted are a JSON file's (see Read.raw, Read.reprinted).
	raw       sparkmerge.DataType
	reprinted map[string]bool
	// shortNumbers holds of a file read even when Spark must type it.
	shortNumbers bool
	noRows       bool
	noValues     []string
	nullTyped    []string
	zeroPadded   map[string]string
	rounded      map[string]string
	pastMicros   map[string]string
	nullTokens   map[string]infer.NullTokens
	headerLine   string
	quotedValues bool
	// options are the read's options once typed (a CSV file's with
	// enforceSchema=false); nil leaves them as given.
	options map[string]string
	// splitSensitive is the size of a CSV file whose types hold only if
	// Spark reads it in one partition (infer.CSVFile.SplitSensitive), 0
	// for any other file.
	splitSensitive int64
	stamp          fileStamp
	// wholeUTF8: the client read the whole file and found it UTF-8
	// (Read.validUTF8).
	wholeUTF8 bool
	// encodingProblem and nestingProblem say why the file was refused
	// (see Read.encodingProblem, Read.nestingProblem), or "".
	encodingProblem, nestingProblem string
}

// applyTo writes what t found into r.
func (t *localTyping) applyTo(r *Read) {
	r.shortNumbers, r.reprinted = t.shortNumbers, t.reprinted
	if t.wholeUTF8 {
		r.validUTF8 = true
	}
	if t.encodingProblem != "" {
		r.encodingProblem = t.encodingProblem
	}
	if t.nestingProblem != "" {
		r.nestingProblem = t.nestingProblem
	}
	if !t.typed {
		r.Schema, r.raw, r.headerLine, r.quotedValues, r.noRows, r.noValues, r.zeroPadded, r.nullTokens = sparkmerge.Schema{}, sparkmerge.DataType{}, "", false, false, nil, nil, nil
		r.nullTyped, r.rounded, r.pastMicros = nil, nil, nil
		return
	}
	r.Schema, r.raw, r.headerLine, r.quotedValues, r.noRows, r.stamp = t.schema, t.raw, t.headerLine, t.quotedValues, t.noRows, t.stamp
	r.noValues, r.nullTyped, r.zeroPadded, r.nullTokens = t.noValues, t.nullTyped, t.zeroPadded, t.nullTokens
	r.rounded, r.pastMicros = t.rounded, t.pastMicros
	if t.options != nil {
		r.Options = t.options
	}
	r.InferredLocally = true
}

// leftToSpark is t for a file the client read but leaves to Spark to
// type: only what holds of the file whoever types it.
func (t *localTyping) leftToSpark() *localTyping {
	return &localTyping{shortNumbers: t.shortNumbers, wholeUTF8: t.wholeUTF8}
}

// applyTypings applies each read's typing (nil: the client did not try
// it) and returns the reads apart: those typed on the client, and those
// Spark must type.
func applyTypings(reads []*Read, typings []*localTyping) (local, remote []*Read) {
	for i, r := range reads {
		t := typings[i]
		if t != nil {
			t.applyTo(r)
		}
		if t != nil && t.typed {
			local = append(local, r)
		} else {
			remote = append(remote, r)
		}
	}
	return local, remote
}

// typeLocallyWithin types the reads the client can, on every core, with
// budget bytes of CSV and JSON to read: a typing per read, nil for a read
// it did not try. A copy of a file only the server sees was typed as it
// arrived (fetchRemoteCopies).
func typeLocallyWithin(reads []*Read, rules infer.Rules, footers footerConf, budget int64) []*localTyping {
	typings := make([]*localTyping, len(reads))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				typings[i] = typeLocally(reads[i], rules, footers)
			}
		}()
	}
	var claimed int64
	for i, r := range reads {
		switch {
		case r.copy != nil && r.copy.typed:
			typings[i] = r.copy.typing // as it was fetched
		case len(r.Paths) == 1 && (r.Format == "parquet" && footers.parquet != nil || r.Format == "orc" && footers.orc != nil):
			next <- i
		case len(r.Paths) == 1 && (r.Format == "csv" || r.Format == "json"):
			size, ok := localSize(contentSource(r))
			if !ok || claimed+size > budget {
				continue
			}
			claimed += size
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return typings
}

// contentSource is where the client reads r's file: its path, or the
// temporary copy of a file only the server sees.
func contentSource(r *Read) string {
	if r.copy != nil {
		return r.copy.path
	}
	return r.Paths[0]
}

// typeLocally types r's file on the client by rules if it can, reading r
// only: nil when r is not a single file the client may type.
func typeLocally(r *Read, rules infer.Rules, footers footerConf) *localTyping {
	if r.relational() || r.UserSchema != "" || len(r.Paths) != 1 {
		return nil
	}
	// The file as the client read it: a positional scan (batch.go) checks
	// that the server reads the same.
	src := r.Paths[0]
	var fetched []byte // a remote CSV or JSON file's contents
	if r.copy != nil {
		fetched = r.copy.content
		if fetched == nil {
			src = r.copy.path
		}
	}
	before, stamped := stampOf(src)
	t, err := typeByFormat(r, rules, footers, src, fetched)
	if err != nil {
		return refusedTyping(t, err)
	}
	switch {
	case r.copy != nil:
		if r.copy.settled {
			t.stamp = r.copy.stamp // as Spark reported it
		}
	default:
		if after, _ := stampOf(src); stamped && after == before && settled(src, time.Now()) {
			t.stamp = before
		}
	}
	// Typed, the file was read whole: the rules refuse a file that is
	// not UTF-8 before they type it.
	t.typed, t.wholeUTF8 = true, true
	return t
}

// typeByFormat types the file at src (or its fetched contents) by its
// format's rules; on an error, t holds what holds of the file anyway.
func typeByFormat(r *Read, rules infer.Rules, footers footerConf, src string, fetched []byte) (t *localTyping, err error) {
	t = &localTyping{}
	err = errNotPlainLocal // a format the client does not infer
	switch r.Format {
	case "csv":
		var f infer.CSVFile
		f, err = localCSVFile(rules, src, fetched, r.Options)
		t.shortNumbers = f.ShortNumbers // holds for a file read even when Spark must type it
		if err == nil {
			t.schema, t.headerLine, t.quotedValues, t.noRows = f.Schema, f.Header, f.Quoted, f.NoRows
			for _, j := range f.NoValues {
				t.noValues = append(t.noValues, f.Schema.Fields[j].Name)
			}
			t.zeroPadded, t.nullTokens = byName(f.Schema, f.ZeroPadded), byName(f.Schema, f.NullTokens)
			t.rounded, t.pastMicros = byName(f.Schema, f.Rounded), byName(f.Schema, f.PastMicros)
			t.options = withOption(r.Options, "enforceSchema", "false")
			t.splitSensitive = splitSensitiveSize(f, src, fetched)
		}
	case "json":
		var f infer.JSONFile
		if f, err = localJSONFile(rules, src, fetched, r.Options); err == nil {
			t.raw, t.reprinted, t.shortNumbers = f.Raw, f.Reprinted, f.ShortNumbers
			t.rounded = f.Rounded
			t.schema, err = rules.JSONSchema(t.raw)
		}
	case "parquet":
		if footers.parquet != nil {
			var f infer.ParquetSchema
			f, err = localParquetFile(rules, src, r.Options, *footers.parquet)
			t.schema, t.nullTyped = f.Schema, f.NullTyped
		}
	case "orc":
		if footers.orc != nil {
			t.schema, err = localORCFile(rules, src, r.Options, *footers.orc)
		}
	}
	return t, err
}

// splitSensitiveSize is the size of a CSV file the client typed whose
// types hold only if Spark reads it in one partition, else 0.
func splitSensitiveSize(f infer.CSVFile, src string, fetched []byte) int64 {
	switch {
	case !f.SplitSensitive || kindOf(src, isPlainCSV) == gzipped:
		return 0 // Spark reads a gzip file in one partition
	case fetched != nil:
		return int64(len(fetched))
	}
	size, _ := localSize(src)
	return size
}

// refusedTyping is t for a file the rules refused with err, with the
// reason a user must hear about: a file that is not UTF-8, or nests
// deeper than Spark reads safely.
func refusedTyping(t *localTyping, err error) *localTyping {
	refused := &localTyping{shortNumbers: t.shortNumbers, reprinted: t.reprinted}
	var unsupported *infer.Unsupported
	if errors.As(err, &unsupported) && unsupported.Reason == infer.NotUTF8 {
		refused.encodingProblem = unsupported.Error()
	}
	var tooDeep *infer.TooDeepError
	if errors.As(err, &tooDeep) {
		refused.nestingProblem = tooDeep.Error()
	}
	return refused
}

// byName is m, by index of schema's fields, by their names instead; nil
// for an empty m.
func byName[V any](schema sparkmerge.Schema, m map[int]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]V, len(m))
	for j, v := range m {
		out[schema.Fields[j].Name] = v
	}
	return out
}
