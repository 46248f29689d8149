package spark

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// Spark refuses a multi-path JSON read whose files spell one key in two
// cases (COLUMN_ALREADY_EXISTS), and auto then splits the trial read in
// halves and tries again. When most files spell some key their own way,
// nearly every trial fails and discovery costs several times one read per
// file (226 s against about 65 s for 2,000 such files). For small local
// JSON files the client reads the top-level keys first and only groups
// files that agree on the spelling of every key they share.

// maxCompatGroups bounds the groups a file is tried against (the latest
// ones), so that grouping stays linear when almost no two files agree.
const maxCompatGroups = 16

// jsonCaseGroups assigns the local JSON reads to groups whose files agree
// on every shared key's spelling (first fit). It returns, per inspected
// read, a label to add to its trial key, or "" when the read agrees with no
// other and is read alone. Reads it could not inspect are not in the map.
// Keys are folded whatever sparkmerge's matching: the conflict is Spark's
// (spark.sql.caseSensitive is false by default).
func jsonCaseGroups(reads []*Read, keysOf func(*Read) (map[string]string, bool)) map[*Read]string {
	type group struct {
		spelling map[string]string // folded key -> spelling
		members  []*Read
	}
	var groups []*group
	byBucket := map[string][]*group{} // trial key -> its open groups
	for _, r := range reads {
		if r.Format != "json" || len(r.Paths) != 1 {
			continue
		}
		keys, ok := keysOf(r)
		if !ok {
			continue
		}
		bucket := groupKey(r)
		open := byBucket[bucket]
		var into *group
		for i := max(0, len(open)-maxCompatGroups); i < len(open); i++ {
			if agrees(open[i].spelling, keys) {
				into = open[i]
				break
			}
		}
		if into == nil {
			into = &group{spelling: map[string]string{}}
			groups = append(groups, into)
			byBucket[bucket] = append(open, into)
		}
		for k, v := range keys {
			into.spelling[k] = v
		}
		into.members = append(into.members, r)
	}
	labels := map[*Read]string{}
	for i, g := range groups {
		for _, r := range g.members {
			if len(g.members) < 2 {
				labels[r] = ""
			} else {
				labels[r] = "\x00keys:" + strconv.Itoa(i)
			}
		}
	}
	return labels
}

func agrees(spelling, keys map[string]string) bool {
	for k, v := range keys {
		if s, ok := spelling[k]; ok && s != v {
			return false
		}
	}
	return true
}

// fileJSONKeys are the top-level keys of a read's single local file.
func fileJSONKeys(r *Read) (map[string]string, bool) { return localJSONKeys(r.Paths[0]) }

// inferredJSONKeys are the top-level keys of a locally inferred read.
func inferredJSONKeys(r *Read) (map[string]string, bool) {
	if !r.InferredLocally || r.raw.Kind != sparkmerge.KindStruct {
		return nil, false
	}
	keys := make(map[string]string, len(r.raw.Fields))
	for _, f := range r.raw.Fields {
		keys[strings.ToLower(f.Name)] = f.Name
	}
	return keys, true
}

// localJSONKeys reads the top-level keys of the objects in a small local
// JSON file (JSON lines, or one document), folded to lower case, with their
// spelling. ok is false when the file is not local, too big, not objects,
// or spells one key two ways itself (Spark reports that on its own).
func localJSONKeys(path string) (map[string]string, bool) {
	if !isLocalPath(path) || strings.ContainsAny(path, "*?[{") {
		return nil, false
	}
	f, err := os.Open(localPath(path))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() > maxLocalInferBytes {
		return nil, false
	}
	keys := map[string]string{}
	dec := json.NewDecoder(f)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || tok != json.Delim('{') {
			return nil, false
		}
		for dec.More() {
			tok, err := dec.Token()
			key, isKey := tok.(string)
			if err != nil || !isKey {
				return nil, false
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, false
			}
			folded := strings.ToLower(key)
			if s, ok := keys[folded]; ok && s != key {
				return nil, false
			}
			keys[folded] = key
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
			return nil, false
		}
	}
	return keys, len(keys) > 0
}
