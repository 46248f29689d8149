package sparkmerge

import (
	"errors"
	"fmt"
	"strings"
)

// SQL returns one Spark SQL statement that merges the sources:
//
//	SELECT <SelectExprs(0)> FROM <relations[0]>
//	UNION ALL
//	SELECT <SelectExprs(1)> FROM <relations[1]>
//	...
//
// relations gives, per source, what follows FROM: a table name
// (db.events), a path relation (parquet.`/data/a.parquet`) or a
// parenthesised query. They are inserted verbatim: SQL cannot know whether
// a dot separates a database from a table or belongs to a file name, so
// quote them yourself (QuoteIdent quotes one name part).
func (p *Plan) SQL(relations []string) (string, error) {
	if len(relations) != len(p.Sources) {
		return "", fmt.Errorf("render sql: %d relations for %d sources; give one relation per source", len(relations), len(p.Sources))
	}
	if len(p.Target.Fields) == 0 {
		return "", errors.New("render sql: the target has no columns; SQL cannot select zero columns")
	}
	var b strings.Builder
	for i, rel := range relations {
		if strings.TrimSpace(rel) == "" {
			return "", fmt.Errorf("render sql: relation %d (source %q) is empty", i+1, p.Sources[i].Name)
		}
		if i > 0 {
			b.WriteString("\n" + p.UnionKeyword() + "\n")
		}
		b.WriteString("SELECT ")
		b.WriteString(strings.Join(p.SelectExprs(i), ", "))
		b.WriteString("\nFROM ")
		b.WriteString(rel)
	}
	return b.String(), nil
}

// UnionKeyword is the SQL keyword that combines the sources' SELECTs:
// "UNION ALL", or "UNION" (distinct rows) with Options.Distinct.
func (p *Plan) UnionKeyword() string {
	if p.Distinct {
		return "UNION"
	}
	return "UNION ALL"
}
