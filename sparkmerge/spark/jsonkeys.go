package spark

import (
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

// fileJSONKeys are the top-level keys of a read's single local JSON-lines
// file, read with the same scanner as local inference (whatever the reader
// options, which do not change the keys). ok is false when the file is not
// local, too big, not records Spark's default reader takes line by line, or
// spells one key two ways itself (Spark reports that on its own).
func fileJSONKeys(r *Read) (map[string]string, bool) {
	path := r.Paths[0]
	if !isLocalPath(path) || strings.ContainsAny(path, "*?[{") {
		return nil, false
	}
	data, _, ok := readSmallLocal(path)
	if !ok {
		return nil, false
	}
	raw, _, ok := inferJSONLines(data)
	if !ok {
		return nil, false
	}
	return topLevelKeys(raw), true
}

// inferredJSONKeys are the top-level keys of a locally inferred read.
func inferredJSONKeys(r *Read) (map[string]string, bool) {
	if !r.InferredLocally || r.raw.Kind != sparkmerge.KindStruct {
		return nil, false
	}
	return topLevelKeys(r.raw), true
}

// topLevelKeys maps each field's folded name to its spelling.
func topLevelKeys(raw sparkmerge.DataType) map[string]string {
	keys := make(map[string]string, len(raw.Fields))
	for _, f := range raw.Fields {
		keys[strings.ToLower(f.Name)] = f.Name
	}
	return keys
}
