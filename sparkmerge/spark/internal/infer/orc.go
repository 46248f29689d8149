package infer

import (
	"fmt"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/orcfooter"
)

// An ORC file's schema is in its footer too: the ORC rules read it and
// convert it as Spark 4.0's OrcUtils.toCatalystSchema does: structs, lists
// and maps as themselves; any other type by the Catalyst type Spark stored
// in its spark.sql.catalyst.type attribute if there is one, else by the
// ORC type's name parsed as a Spark type; char and varchar then read as
// string. Anything else (a union, a timestamp with local time zone, names
// equal but for case, a file without columns) is refused: Spark then gives
// its own schema or error.
//
// A timestamp parsed so would be the session's spark.sql.timestampType by
// the parser's rule, but a Spark 4.0.1 server with TIMESTAMP_NTZ still
// gave timestamp for an ORC timestamp a Spark writer stored (integration
// test TestLocalORCInferenceFollowsSessionSettings). Under that setting
// the rules leave such a column to Spark; under the default,
// TIMESTAMP_LTZ, both ways give timestamp.

// catalystTypeAttribute is where Spark's ORC writer stores the Catalyst
// type of a column ORC has no type for (OrcUtils.CATALYST_TYPE_ATTRIBUTE_NAME).
const catalystTypeAttribute = "spark.sql.catalyst.type"

// ORCConf holds the session settings that Spark's ORC schema conversion
// reads (see [ORCConfKeys]); the executor fetches them from the server.
type ORCConf struct {
	// TimestampNTZ: spark.sql.timestampType is TIMESTAMP_NTZ, under which
	// the rules leave a file with a timestamp column to Spark.
	TimestampNTZ bool
}

// orcConfKeys are the settings ORCConf depends on. spark.sql.orc.impl
// must be native: the Hive implementation converts otherwise.
var orcConfKeys = []string{"spark.sql.timestampType", "spark.sql.orc.impl"}

// ORCConfKeys are the names of the session settings [ORCConfFrom] reads.
func ORCConfKeys() []string { return append([]string(nil), orcConfKeys...) }

// ORCConfFrom reads the settings from their values by name, as the server
// reports them. It refuses settings under which the rules do not hold.
func ORCConfFrom(values map[string]string) (ORCConf, error) {
	var c ORCConf
	switch v := strings.ToUpper(strings.TrimSpace(values[orcConfKeys[0]])); v {
	case "TIMESTAMP_LTZ":
	case "TIMESTAMP_NTZ":
		c.TimestampNTZ = true
	default:
		return c, fmt.Errorf("setting %s is %q, not TIMESTAMP_LTZ or TIMESTAMP_NTZ", orcConfKeys[0], v)
	}
	if v := strings.ToLower(strings.TrimSpace(values[orcConfKeys[1]])); v != "native" {
		return c, fmt.Errorf("setting %s is %q, not native", orcConfKeys[1], v)
	}
	return c, nil
}

// orcSchemaOptions are the reader options that leave an ORC file's schema
// as its footer says; with any other option Spark infers it.
var orcSchemaOptions = map[string]bool{"mergeschema": true}

// ORCFile returns the schema Spark would give the ORC file at path, a path
// of this machine's file system, from its footer, under the given reader
// options and session settings. The error is an [*Unsupported] when the
// file or options are outside what the rules reproduce.
func (r Rules) ORCFile(path string, options map[string]string, conf ORCConf) (sparkmerge.Schema, error) {
	if err := r.check(); err != nil {
		return sparkmerge.Schema{}, err
	}
	for k := range options {
		if !orcSchemaOptions[strings.ToLower(k)] {
			return sparkmerge.Schema{}, unsupported(UnsupportedOptions, "reader option %q", k)
		}
	}
	tail, err := orcfooter.ReadFile(path)
	if err != nil {
		return sparkmerge.Schema{}, &Unsupported{Reason: UnsupportedFile, Msg: err.Error(), Err: err}
	}
	return orcSchemaOf(tail.Schema, conf)
}

// orcSchemaOf converts a file's root struct as toCatalystSchema does, with
// every field nullable, as Spark does for any file source.
func orcSchemaOf(root *orcfooter.Type, conf ORCConf) (sparkmerge.Schema, error) {
	if len(root.Children) == 0 {
		// Spark skips such a file when it infers (an old Hive writer's
		// empty file), and fails on it alone.
		return sparkmerge.Schema{}, unsupported(UnsupportedContents, "no columns")
	}
	t, why, ok := orcTypeOf(root, conf)
	if !ok {
		return sparkmerge.Schema{}, unsupported(UnsupportedContents, "%s", why)
	}
	return sparkmerge.Schema{Fields: asNullable(t).Fields}, nil
}

// orcTypeOf is toCatalystType, with CharVarcharUtils' char and varchar as
// string.
func orcTypeOf(t *orcfooter.Type, conf ORCConf) (sparkmerge.DataType, string, bool) {
	switch t.Kind {
	case orcfooter.Struct:
		fields := make([]sparkmerge.Field, len(t.Children))
		seen := make(map[string]bool, len(t.Children))
		for i, c := range t.Children {
			name := t.FieldNames[i]
			// Spark refuses names equal but for case (in a
			// case-insensitive session): leave the error to it.
			folded := strings.ToLower(name)
			if name == "" || seen[folded] {
				return sparkmerge.DataType{}, fmt.Sprintf("column name %q twice, or empty", name), false
			}
			seen[folded] = true
			ct, why, ok := orcTypeOf(c, conf)
			if !ok {
				return ct, fmt.Sprintf("column %q: %s", name, why), false
			}
			fields[i] = sparkmerge.NewField(name, ct)
		}
		return sparkmerge.StructOf(fields...), "", true
	case orcfooter.List:
		elem, why, ok := orcTypeOf(t.Children[0], conf)
		return sparkmerge.ArrayOf(elem, true), why, ok
	case orcfooter.Map:
		key, why, ok := orcTypeOf(t.Children[0], conf)
		if !ok {
			return key, why, ok
		}
		value, why, ok := orcTypeOf(t.Children[1], conf)
		return sparkmerge.MapOf(key, value, true), why, ok
	}
	name, present := t.Attributes[catalystTypeAttribute]
	if !present {
		var ok bool
		if name, ok = orcTypeName(t); !ok {
			return sparkmerge.DataType{}, name, false
		}
	}
	if strings.EqualFold(strings.TrimSpace(name), "timestamp") && conf.TimestampNTZ {
		return sparkmerge.DataType{}, "a timestamp under spark.sql.timestampType=TIMESTAMP_NTZ", false
	}
	parsed, err := sparkmerge.ParseType(name)
	if err != nil || parsed.Validate() != nil || parsed.Kind == sparkmerge.KindStruct || parsed.Kind == sparkmerge.KindArray || parsed.Kind == sparkmerge.KindMap {
		return sparkmerge.DataType{}, fmt.Sprintf("type %q", name), false
	}
	if parsed.Kind == sparkmerge.KindChar || parsed.Kind == sparkmerge.KindVarchar {
		parsed = sparkmerge.Simple(sparkmerge.KindString)
	}
	return parsed, "", true
}

// orcTypeName is ORC's TypeDescription.toString of a primitive type, as
// Spark parses it; false (with why) for the types the rules refuse.
func orcTypeName(t *orcfooter.Type) (string, bool) {
	switch t.Kind {
	case orcfooter.Boolean:
		return "boolean", true
	case orcfooter.Byte:
		return "tinyint", true
	case orcfooter.Short:
		return "smallint", true
	case orcfooter.Int:
		return "int", true
	case orcfooter.Long:
		return "bigint", true
	case orcfooter.Float:
		return "float", true
	case orcfooter.Double:
		return "double", true
	case orcfooter.String, orcfooter.Char, orcfooter.Varchar:
		return "string", true
	case orcfooter.Binary:
		return "binary", true
	case orcfooter.Date:
		return "date", true
	case orcfooter.Timestamp:
		return "timestamp", true
	case orcfooter.Decimal:
		// ORC's defaults for a decimal that does not say.
		precision, scale := 38, 10
		if t.HasPrecision {
			precision = t.Precision
		}
		if t.HasScale {
			scale = t.Scale
		}
		if precision < 1 || precision > sparkmerge.MaxDecimalPrecision || scale < 0 || scale > precision {
			return fmt.Sprintf("decimal(%d,%d)", precision, scale), false
		}
		return fmt.Sprintf("decimal(%d,%d)", precision, scale), true
	case orcfooter.Union:
		return "a union type", false
	case orcfooter.TimestampInstant:
		return "a timestamp with local time zone", false
	}
	return fmt.Sprintf("ORC type kind %d", t.Kind), false
}
