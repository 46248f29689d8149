package spark

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// The client refuses a JSON file it reads whose record nests deeper than
// infer.MaxJSONDepth (checkNesting): Spark's inference recurses once per
// level and a record 400 levels deep ends a Spark 4.0.1 server. Every
// JSON file left to Spark is one the client did not read whole (a file
// it read whole it typed, or refused): past its size limits, of reader
// options or contents its rules leave to Spark, only on the server and
// not fetched, or under Spark's inference (Job.SparkInference,
// multipath, Client.Schemas). Spark measures those files first, reading
// them as text with string functions that recurse nowhere, in one
// request for all of them: the single files of like options in one text
// read each (nestingMeasures), so the cost follows the option groups,
// not the files, and no file's contents reach the client. The text read
// hands each record's bytes undecoded; a file of an encoding whose
// bytes of quotes, backslashes and brackets are not those characters
// alone (UTF-16, UTF-32, Shift_JIS...) is decoded as Spark's reader
// decodes it, or bounded, or refused (jsonCharset).

// checkNestingOnServer measures how deep the records of the JSON files
// among reads nest, as Spark reads them as text, and refuses a file past
// infer.MaxJSONDepth as checkNesting refuses one the client read, before
// Spark infers it. A read with the user's schema is not inferred, and
// Spark's parse follows that schema: it is not measured. One Spark
// request, when there is such a file.
func (c *Client) checkNestingOnServer(ctx context.Context, reads []*Read) error {
	var measured []*Read
	for _, r := range reads {
		if r.Format == "json" && !r.relational() && r.UserSchema == "" && r.nestingProblem == "" {
			cs := jsonCharsetOf(r.Options)
			if cs.sparkRefuses(r.Options) {
				continue
			}
			if err := cs.measurable(r.Options); err != nil {
				return fmt.Errorf("source %q: %w; Spark was not asked to infer or read the file", r.Name, err)
			}
			measured = append(measured, r)
		}
	}
	if len(measured) == 0 {
		return nil
	}
	deep, err := c.server.jsonNesting(ctx, nestingMeasures(measured), infer.MaxJSONDepth)
	if err != nil {
		if strings.Contains(err.Error(), "MALFORMED_CHARACTER_CODING") {
			// The failed task's class is wrapped in the job's error:
			// matched in its text.
			var decoded []string
			for _, r := range measured {
				if cs := jsonCharsetOf(r.Options); cs.decode != "" || cs.detect {
					decoded = append(decoded, fmt.Sprintf("%q", r.Name))
				}
			}
			return fmt.Errorf("measure how deep the JSON files Spark is to type nest: a file of %s, read with an encoding, holds bytes that are not of that encoding (Spark would read them as U+FFFD), so its nesting cannot be measured before Spark infers it: check the encoding option, or re-encode the file as UTF-8: %w", strings.Join(decoded, ", "), err)
		}
		return measuresError(measured, "measure how deep the JSON files Spark is to type nest", err)
	}
	for i, d := range deep {
		measured[i].nestingProblem = d.problem(measured[i])
	}
	return checkNesting(measured)
}

// measuresError is the error of a request of text reads of reads' files
// (the nesting measure, the UTF-8 check) that failed: a file the client
// lists that the server does not see named, with where Spark looks for
// it, as its source's; any other said as what the request was for.
func measuresError(reads []*Read, what string, err error) error {
	if r := readOfPathIn(reads, err.Error()); r != nil && errorClass(err) == "PATH_NOT_FOUND" {
		return sourceError(r, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// readOfPathIn is the read among reads one of whose paths msg names
// (Spark's message of a path it does not find), or nil.
func readOfPathIn(reads []*Read, msg string) *Read {
	for _, r := range reads {
		for _, p := range r.Paths {
			if strings.Contains(msg, p) {
				return r
			}
		}
	}
	return nil
}

// nestingMeasure is one text read of JSON files whose nesting Spark
// measures: the single files of one set of options together (byKey says
// which read each file is, by its sparkPathKey), or one other read (a
// group of files, a pattern: read).
type nestingMeasure struct {
	paths   []string          // as the text read takes them
	options map[string]string // the text read's (jsonTextOptions)
	byKey   map[string]int    // a file's read, by sparkPathKey; nil for one read
	read    int               // the read, when byKey is nil
	value   string            // the SQL of a record's text, of the read's value (jsonCharset.value)
	bound   bool              // brackets counted, not nesting (jsonCharset.bound)
}

// valueSQL is the SQL of a record's text, of the text read's value.
func (m nestingMeasure) valueSQL() string {
	if m.value == "" {
		return "value"
	}
	return m.value
}

// nestingMeasures are the text reads that measure reads: one per set of
// text options and charset's reading (jsonCharset.value) for the single
// files, in the order of their first read, and one for each other read.
// The reads' charsets are measurable (jsonCharset.measurable).
func nestingMeasures(reads []*Read) []nestingMeasure {
	var out []nestingMeasure
	alike := map[string]int{}
	for i, r := range reads {
		cs := jsonCharsetOf(r.Options)
		options := jsonTextOptions(r.Options, cs)
		value := cs.value()
		if len(r.Paths) != 1 || r.patterns || IsGlob(r.Paths[0]) {
			out = append(out, nestingMeasure{paths: r.readPaths(), options: options, read: i, value: value, bound: cs.bound})
			continue
		}
		key := sqlMap(options) + value
		j, ok := alike[key]
		if !ok {
			j = len(out)
			alike[key] = j
			out = append(out, nestingMeasure{options: options, byKey: map[string]int{}, value: value, bound: cs.bound})
		}
		out[j].paths = append(out[j].paths, literalPath(r.Paths[0]))
		out[j].byKey[sparkPathKey(r.Paths[0])] = i
	}
	return out
}

// jsonTextOptions are the options of a text read of the files a JSON
// read with options of the charset cs reads: those that choose the files
// and split the lines (lineSep as its bytes in cs: jsonCharset.textLineSep),
// and a multi-line file read whole (one record, or an array of them, may
// span its lines).
func jsonTextOptions(options map[string]string, cs jsonCharset) map[string]string {
	out := map[string]string{}
	for k, v := range options {
		switch strings.ToLower(k) {
		case "pathglobfilter", "recursivefilelookup", "modifiedbefore", "modifiedafter", "ignoremissingfiles", "ignorecorruptfiles":
			out[k] = v
		case "linesep":
			if !strings.EqualFold(optionValue(options, "multiLine"), "true") {
				out[k], _ = cs.textLineSep(v)
			}
		case "multiline":
			if strings.EqualFold(v, "true") {
				out["wholetext"] = "true"
			}
		}
	}
	return out
}

// measuredDepth is a file Spark measured past the bound: its measure
// (an index of the measures), its path as Spark names it (sparkPathKey)
// and its deepest record's depth.
type measuredDepth struct {
	measure int
	path    string
	depth   int
}

// deepJSONFile is a read's deepest file past the bound.
type deepJSONFile struct {
	path  string
	depth int
}

// problem is the read's nestingProblem for its deep file.
func (d deepJSONFile) problem(r *Read) string {
	what := "a record"
	if len(r.Paths) != 1 || r.patterns || sparkPathKey(r.Paths[0]) != d.path {
		what = fmt.Sprintf("a record of its file %q", d.path)
	}
	if cs := jsonCharsetOf(r.Options); cs.bound {
		return fmt.Sprintf("%s may nest objects and arrays up to %d levels deep, past the %d that Spark reads safely: Spark's SQL does not decode its encoding %s, so the file's nesting was bounded by its bytes of { and [ (%d in one record, strings included), not measured; re-encode the file as UTF-8 to have it measured", what, d.depth, infer.MaxJSONDepth, cs.name, d.depth)
	}
	return fmt.Sprintf("%s nests objects and arrays %d levels deep (as Spark measured the file's text), past the %d that Spark reads safely", what, d.depth, infer.MaxJSONDepth)
}

// deepestByRead is each read's deepest file among found, by the read's
// index (of the reads the measures were made of).
func deepestByRead(measures []nestingMeasure, found []measuredDepth) (map[int]deepJSONFile, error) {
	sort.Slice(found, func(i, j int) bool { return found[i].path < found[j].path })
	deep := map[int]deepJSONFile{}
	for _, f := range found {
		if f.measure < 0 || f.measure >= len(measures) {
			return nil, fmt.Errorf("nesting of JSON files: a measure %d of %d", f.measure, len(measures))
		}
		read, ok := measuredRead(measures, f.measure, f.path)
		if !ok {
			return nil, fmt.Errorf("the JSON file %s nests objects and arrays %d levels deep, past the %d that Spark reads safely, and is none of the sources as Spark names it", f.path, f.depth, infer.MaxJSONDepth)
		}
		if f.depth > deep[read].depth {
			deep[read] = deepJSONFile{path: f.path, depth: f.depth}
		}
	}
	return deep, nil
}

// measuredRead is the read (an index of the reads the measures were
// made of) of the file at path (as sparkPathKey names it) that the
// measure at index g read.
func measuredRead(measures []nestingMeasure, g int, path string) (int, bool) {
	if g < 0 || g >= len(measures) {
		return 0, false
	}
	m := measures[g]
	if m.byKey == nil {
		return m.read, true
	}
	read, ok := m.byKey[path]
	return read, ok
}

// jsonBracketsExpr is the SQL of how many brackets ({ and [) a line of
// JSON text has: an upper bound of how deep it nests, cheap to compute
// (bytes replaced, where translate makes a string of each character),
// so that jsonNestingExpr runs only on the few lines it may not clear.
const jsonBracketsExpr = "(octet_length(value) - octet_length(replace(replace(value, '{', ''), '[', '')))"

// jsonDeeperFilter is the SQL condition of the lines of JSON text that
// may nest deeper than maxDepth: longer than maxDepth bytes (a record
// needs a byte a level), then with more brackets.
func jsonDeeperFilter(maxDepth int) string {
	return fmt.Sprintf("octet_length(value) > %d AND %s > %d", maxDepth, jsonBracketsExpr, maxDepth)
}

// jsonStringsRegex matches a JSON string, in double quotes or (as
// Spark's reader allows by default) single ones, a backslash escaping
// the next character, to the end if it is not closed. Possessive loops
// only: a backtracking loop over a group recurses once per repetition in
// Java, and a long string would overflow the task's stack.
const jsonStringsRegex = `(?s)"[^"\\]*+(?:\\.[^"\\]*+)*+"?|'[^'\\]*+(?:\\.[^'\\]*+)*+'?`

// sqlText is s as a SQL string expression whose value is s under any
// spark.sql.parser.escapedStringLiterals: backslashes and single quotes
// spelled chr(92) and chr(39).
func sqlText(s string) string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' && s[i] != '\'' {
			continue
		}
		if start < i {
			parts = append(parts, "'"+s[start:i]+"'")
		}
		parts = append(parts, fmt.Sprintf("chr(%d)", s[i]))
		start = i + 1
	}
	if start < len(s) {
		parts = append(parts, "'"+s[start:]+"'")
	}
	return "concat(" + strings.Join(parts, ", ") + ")"
}

// jsonNestingRounds is how many times jsonNestingExpr cuts the
// innermost pairs of brackets out of a line before it bounds its depth.
const jsonNestingRounds = 8

// jsonNestingExpr is the SQL of how deep a line of JSON text nests objects
// and arrays, as infer's nestingDepth counts it (brackets outside
// strings; here strings in single quotes too, which Spark's reader
// allows), where it is past maxDepth; 0 where it is not. The strings
// are cut out (jsonStringsRegex), then every character but a bracket, each [
// and ] spelled { and }: the line's brackets b. b nests at most the
// rounds plus the { left in b after cutting every {} out of it, the
// rounds times (a round makes the deepest bracket at most one level
// shallower, and an unpaired one stays): where that bound clears
// maxDepth, as it does on a line of many shallow values, the line is
// measured no further. Otherwise a fold over b's characters (aggregate:
// nothing recurses per level) counts the depth. The outer aggregate over
// a one-element array only names b, computed once.
func jsonNestingExpr(maxDepth int) string {
	brackets := `regexp_replace(replace(replace(regexp_replace(value, ` + sqlText(jsonStringsRegex) + `, ''), '[', '{'), ']', '}'), '[^{}]+', '')`
	paired := "b"
	for range jsonNestingRounds {
		paired = "replace(" + paired + ", '{}', '')"
	}
	fold := `aggregate(split(b, ''), named_struct('d', 0, 'm', 0), (a, c) -> IF(c = '{', named_struct('d', a.d + 1, 'm', greatest(a.m, a.d + 1)), named_struct('d', a.d - 1, 'm', a.m)), a -> a.m)`
	return fmt.Sprintf("aggregate(array(%s), 0, (z, b) -> IF(%d + octet_length(%s) - octet_length(replace(%s, '{', '')) <= %d, 0, %s))",
		brackets, jsonNestingRounds, paired, paired, maxDepth, fold)
}
