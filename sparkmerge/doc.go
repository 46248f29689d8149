// Package sparkmerge plans the merge of data sources whose schemas drift:
// columns added, removed or reordered, types widened, names spelled
// differently. It is the pure core of the sparkmerge tool: it does no I/O and
// knows nothing of Spark Connect; the executor and the CLI only render its
// plan.
//
// Given the ordered sources ([Source]: a name and a [Schema]) and [Options],
// [NewPlan] computes the target schema and, for every source, one
// [Projection] per target column: take the column (maybe renamed), cast it,
// give a typed null, rebuild a nested value field by field, or a literal for
// the provenance column. A [Plan] renders as Spark SQL select expressions
// ([Plan.SelectExprs]), as one UNION ALL statement ([Plan.SQL]), as a table
// for people ([Plan.String]) and as JSON ([Plan.MarshalJSON]);
// [Plan.Diagnostics] lists per source what was added, widened, resolved as
// string, dropped and renamed.
//
// Plans are deterministic values: the same input gives the same plan, and
// the target types do not depend on the order of the sources (only the
// column and struct field order do).
//
// # Types
//
// [TypesWiden], the default, follows Spark 4.0's ANSI union widening
// (AnsiTypeCoercion.findWiderTypeForTwo): int+bigint is bigint, int+float is
// double, decimals widen to keep every integer digit (capped at precision 38,
// the scale giving way as in SPARK-45905), integers widen into decimals,
// date+timestamp is timestamp, arrays and maps widen element-wise, and void
// (an all-null column) widens to anything. [WiderType] exposes the rule for
// two types.
//
// It deliberately differs from Spark in one way: a column that is a string
// in one source and a number, boolean, date, timestamp, binary or interval in
// another becomes string, and so does boolean with a number. Spark's ANSI
// rules would cast the string to the other type, a cast that fails at run
// time on the first value that does not parse (or give no common type for
// boolean+number). Every value converts to a string, so the merge cannot
// fail; the [Diagnostics] list such columns as Conflicts.
//
// Structs merge by field name (following [Options.CaseSensitive]), in
// first-seen field order; fields a source lacks are padded with typed nulls,
// and a null struct stays null. This also happens inside arrays and map
// values, which Spark's unionByName does not do.
//
// Types that have no common type (an array and an int, a date and a number)
// are a [*TypeConflictError] listing every such column with each source's
// type. [TypesStrict] accepts no type difference at all (nullability, void
// columns and nested struct drift aside) and reports every differing column;
// [TypesString] turns every position whose types differ into string.
//
// # Missing columns
//
// [MissingFill], the default, keeps every column and pads sources that lack
// it with a typed null, like CAST(NULL AS decimal(12,4)). [MissingFail]
// requires equal column sets and returns a [*MissingColumnsError] saying
// what each source lacks. [MissingIntersect] keeps only the common columns.
// [MissingReference] makes a reference the target: an external schema
// ([Options.Reference], e.g. an existing table's, whose types then must be
// reached by widening) or one source's ([Options.ReferenceSource]); columns
// the reference lacks are dropped with [Options.DropExtra] or reported.
// These policies apply to top-level columns; nested struct fields always
// merge as described above.
//
// # Names
//
// Names match case-insensitively by default, like Spark, and the target
// spells a column as it was first seen (or as the reference spells it).
// [Options.Normalize] rewrites top-level names before matching
// ([NormalizeTrim], [NormalizeSnakeCase], [NormalizeLower]), and
// [Options.Renames] maps names explicitly (hight=height). Two columns of one
// source that then match the same name are a [*DuplicateColumnError]; an
// empty name is an [*InvalidNameError]. SQL renderings backquote every
// identifier ([QuoteIdent]) and every struct path part.
//
// # Order and provenance
//
// [OrderFirstSeen], the default, orders columns by first appearance across
// the sources; [OrderSorted] by name, as Spark's JSON inference does;
// [OrderReference] puts the reference's columns first. [Options.SourceColumn]
// adds a last string column holding each row's source name.
//
// # Errors
//
// All errors that mean "these schemas cannot be merged under these
// policies" match [ErrSchemaConflict] with errors.Is; use errors.As for their
// data. Messages say what failed, where, and what to do next.
package sparkmerge
