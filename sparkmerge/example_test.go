package sparkmerge_test

import (
	"fmt"

	"github.com/sparkmerge/sparkmerge"
)

// The tide CSVs of seed 002: the second file drops Region and adds
// ReadingId and TideNumber. The plan keeps all 8 columns in first-seen order
// and pads each file's missing columns with typed nulls.
func ExampleNewPlan() {
	first, _ := sparkmerge.ParseSchema("Date date, Region string, Location string, Tide string, TimeUTC int, Height double")
	second, _ := sparkmerge.ParseSchema("Date date, ReadingId string, Location string, Tide string, TimeUTC int, Height double, TideNumber int")
	plan, err := sparkmerge.NewPlan([]sparkmerge.Source{
		{Name: "TestFile1.csv", Schema: first},
		{Name: "TestFile2.csv", Schema: second},
	}, sparkmerge.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(plan)
	sql, err := plan.SQL([]string{"tides_1", "tides_2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println()
	fmt.Println(sql)
	// Output:
	// target: 8 columns
	//   Date        date
	//   Region      string
	//   Location    string
	//   Tide        string
	//   TimeUTC     int
	//   Height      double
	//   ReadingId   string
	//   TideNumber  int
	//
	// projections (sources by number):
	//   column      1       2
	//   Date        =       =
	//   Region      =       + null
	//   Location    =       =
	//   Tide        =       =
	//   TimeUTC     =       =
	//   Height      =       =
	//   ReadingId   + null  =
	//   TideNumber  + null  =
	//
	// sources:
	//   1 TestFile1.csv: 6 columns; added ReadingId, TideNumber
	//   2 TestFile2.csv: 7 columns; added Region
	//
	// SELECT `Date`, `Region`, `Location`, `Tide`, `TimeUTC`, `Height`, CAST(NULL AS string) AS `ReadingId`, CAST(NULL AS int) AS `TideNumber`
	// FROM tides_1
	// UNION ALL
	// SELECT `Date`, CAST(NULL AS string) AS `Region`, `Location`, `Tide`, `TimeUTC`, `Height`, `ReadingId`, `TideNumber`
	// FROM tides_2
}

// A type conflict under the default policy names the column, each source's
// type and the way out.
func ExampleTypeConflictError() {
	a, _ := sparkmerge.ParseSchema("id bigint, tags array<string>")
	b, _ := sparkmerge.ParseSchema("id int, tags string")
	_, err := sparkmerge.NewPlan([]sparkmerge.Source{{Name: "a.json", Schema: a}, {Name: "b.json", Schema: b}}, sparkmerge.Options{})
	fmt.Println(err)
	// Output:
	// merge schemas: 1 column has no common type: "tags": array<string> in "a.json" vs string in "b.json"; use the string type policy (Options.Types = TypesString) to merge such columns as strings, or cast or rename the column in one source
}
