//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// parityTypes are the widening matrix's types, as Spark SQL type strings.
var parityTypes = []string{
	"boolean", "tinyint", "smallint", "int", "bigint", "float", "double",
	"decimal(10,2)", "decimal(12,4)", "decimal(38,0)", "string", "binary",
	"date", "timestamp", "timestamp_ntz", "void",
	"array<int>", "array<bigint>", "map<string,int>", "map<string,double>",
	"struct<a:int,b:string>", "struct<a:bigint,b:string>",
}

// documentedDifference says where sparkmerge deliberately differs from
// Spark's union widening (see the sparkmerge package docs): a string meets
// any other atomic type as string (Spark 4 ANSI would cast the string to the
// other type and fail at run time on bad values), and boolean + numeric is
// string (Spark has no common type).
func documentedDifference(a, b sparkmerge.DataType) bool {
	atomic := func(t sparkmerge.DataType) bool {
		return !t.Kind.IsComplex() && t.Kind != sparkmerge.KindNull
	}
	str := func(t sparkmerge.DataType) bool { return t.Kind == sparkmerge.KindString }
	boolNum := func(x, y sparkmerge.DataType) bool { return x.Kind == sparkmerge.KindBoolean && y.Kind.IsNumeric() }
	return (str(a) && atomic(b) && !str(b)) || (str(b) && atomic(a) && !str(a)) || boolNum(a, b) || boolNum(b, a)
}

// TestWideningParityWithSpark unions two one-column frames on the real
// Spark for every pair of types and compares Spark's result type with the
// planner's: equal, or a documented difference.
func TestWideningParityWithSpark(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	types := make([]sparkmerge.DataType, len(parityTypes))
	for i, s := range parityTypes {
		dt, err := sparkmerge.ParseType(s)
		if err != nil {
			t.Fatalf("parse %s: %v", s, err)
		}
		types[i] = dt
	}
	var equal, documented int
	for i, a := range types {
		for _, b := range types[i:] {
			name := a.String() + "+" + b.String()
			ours, ourErr := sparkmerge.WiderType(a, b, sparkmerge.Options{})
			q := fmt.Sprintf("SELECT CAST(NULL AS %s) AS c UNION ALL SELECT CAST(NULL AS %s) AS c", a, b)
			theirs, sparkErr := c.QuerySchema(ctx, q)
			switch {
			case documentedDifference(a, b):
				if ourErr != nil || ours.Kind != sparkmerge.KindString {
					t.Errorf("%s: planner gives %v (err %v), want string (documented rule)", name, ours, ourErr)
				}
				documented++
			case sparkErr != nil && ourErr != nil:
				equal++ // both refuse
			case sparkErr != nil:
				t.Errorf("%s: Spark refuses (%v) but the planner gives %s", name, errClass(sparkErr), ours)
			case spark35Difference(c.SparkVersion(), a, b, theirs.Fields[0].Type, ours, ourErr):
				documented++
			case lossyRefusal(ourErr):
				// Spark's type rounds values: refused by default, Spark's
				// type with LossyWidening.
				lossy, err := sparkmerge.WiderType(a, b, sparkmerge.Options{LossyWidening: true})
				if err != nil || !lossy.Equal(theirs.Fields[0].Type) {
					t.Errorf("%s: Spark gives %s, the planner with LossyWidening %s (err %v)", name, theirs.Fields[0].Type, lossy, err)
				}
				documented++
			case ourErr != nil:
				t.Errorf("%s: Spark gives %s but the planner refuses: %v", name, theirs.Fields[0].Type, ourErr)
			case !ours.Equal(theirs.Fields[0].Type):
				t.Errorf("%s: Spark gives %s, planner %s", name, theirs.Fields[0].Type, ours)
			default:
				equal++
			}
		}
	}
	t.Logf("%d pairs agree with Spark, %d differ as documented", equal, documented)
}

// spark35Difference says where Spark 3.5's union widening differs from
// 4.0's, which the planner follows, in a way that keeps every value:
//   - an integral type with float: 3.5 gives float, which rounds integers
//     past 2^24; the planner gives double, as 4.0 does: ANSI type coercion
//     (SPARK-34246) widens so, and 3.5 runs without ANSI mode by default
//     (4.0 turned it on, SPARK-44444).
//   - two decimals past 38 digits: 3.5 keeps the scale and bounds the
//     precision (decimal(10,2)+decimal(38,0) is decimal(38,2), where a
//     38-digit integer overflows); the planner keeps the integer digits
//     (decimal(38,0), refused by default as it rounds the fraction), as 4.0
//     does (SPARK-45905).
func spark35Difference(version string, a, b, theirs, ours sparkmerge.DataType, ourErr error) bool {
	if !strings.HasPrefix(version, "3.") {
		return false
	}
	integral := func(t sparkmerge.DataType) bool { return t.Kind.IsIntegral() }
	if ourErr == nil && ours.Kind == sparkmerge.KindDouble && theirs.Kind == sparkmerge.KindFloat &&
		(integral(a) && b.Kind == sparkmerge.KindFloat || integral(b) && a.Kind == sparkmerge.KindFloat) {
		return true
	}
	if lossyRefusal(ourErr) && a.Kind == sparkmerge.KindDecimal && b.Kind == sparkmerge.KindDecimal {
		scale := max(a.Scale, b.Scale)
		digits := max(a.Precision-a.Scale, b.Precision-b.Scale)
		return theirs.Equal(sparkmerge.NewDecimal(min(digits+scale, sparkmerge.MaxDecimalPrecision), min(scale, sparkmerge.MaxDecimalPrecision)))
	}
	return false
}

// lossyRefusal reports whether the planner refused a widening because
// Spark's type would round values (sparkmerge.ColumnConflict.Reason).
func lossyRefusal(err error) bool {
	var tce *sparkmerge.TypeConflictError
	return errors.As(err, &tce) && len(tce.Conflicts) > 0 && tce.Conflicts[0].Reason != ""
}

func errClass(err error) string {
	var se *spark.SparkError
	if errorsAs(err, &se) {
		return se.ErrorClass
	}
	return err.Error()
}
