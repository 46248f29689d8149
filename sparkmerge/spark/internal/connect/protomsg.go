package connect

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// The upstream client registers Spark Connect's generated messages in
	// protoregistry.GlobalTypes; every message this package builds is an
	// instance of those generated types.
	_ "github.com/apache/spark-connect-go/spark/client"
)

// buildError reports a message that could not be built because the
// registered Spark Connect protos differ from what this package expects
// (an upgrade of spark-connect-go changed them). Builders panic with it and
// [guard] turns the panic into an error.
type buildError struct{ msg string }

func (e buildError) Error() string { return "build spark connect message: " + e.msg }

// newMsg returns a new, empty instance of the registered generated message
// spark.connect.<name>.
func newMsg(name string) protoreflect.Message {
	full := protoreflect.FullName("spark.connect." + name)
	mt, err := protoregistry.GlobalTypes.FindMessageByName(full)
	if err != nil {
		panic(buildError{fmt.Sprintf("message %s is not registered: %v", full, err)})
	}
	return mt.New()
}

// fd returns the field descriptor of m's field name.
func fd(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	f := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if f == nil {
		panic(buildError{fmt.Sprintf("%s has no field %q", m.Descriptor().FullName(), name)})
	}
	return f
}

// mut returns the mutable sub-message in field name of m, creating it.
func mut(m protoreflect.Message, name string) protoreflect.Message {
	return m.Mutable(fd(m, name)).Message()
}

func setMsg(m protoreflect.Message, name string, v protoreflect.Message) {
	m.Set(fd(m, name), protoreflect.ValueOfMessage(v))
}

func setString(m protoreflect.Message, name, v string) {
	m.Set(fd(m, name), protoreflect.ValueOfString(v))
}

func setBool(m protoreflect.Message, name string, v bool) {
	m.Set(fd(m, name), protoreflect.ValueOfBool(v))
}

func setInt32(m protoreflect.Message, name string, v int32) {
	m.Set(fd(m, name), protoreflect.ValueOfInt32(v))
}

// setEnum sets an enum field by the name of its value, e.g. "SET_OP_TYPE_UNION".
func setEnum(m protoreflect.Message, name, value string) {
	f := fd(m, name)
	ev := f.Enum().Values().ByName(protoreflect.Name(value))
	if ev == nil {
		panic(buildError{fmt.Sprintf("enum %s has no value %s", f.Enum().FullName(), value)})
	}
	m.Set(f, protoreflect.ValueOfEnum(ev.Number()))
}

func appendStrings(m protoreflect.Message, name string, vs ...string) {
	l := m.Mutable(fd(m, name)).List()
	for _, v := range vs {
		l.Append(protoreflect.ValueOfString(v))
	}
}

func appendMsg(m protoreflect.Message, name string, v protoreflect.Message) {
	m.Mutable(fd(m, name)).List().Append(protoreflect.ValueOfMessage(v))
}

// setStringMap copies kv into the map field name of m (in sorted key order,
// so the built message does not depend on map iteration order).
func setStringMap(m protoreflect.Message, name string, kv map[string]string) {
	if len(kv) == 0 {
		return
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	mp := m.Mutable(fd(m, name)).Map()
	for _, k := range keys {
		mp.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString(kv[k]))
	}
}

// getMsg returns the sub-message in field name of m, or nil if it is unset.
func getMsg(m protoreflect.Message, name string) protoreflect.Message {
	f := fd(m, name)
	if !m.Has(f) {
		return nil
	}
	return m.Get(f).Message()
}

// exprString builds Expression{expression_string{expression: s}}: a SQL
// expression the server parses, e.g. "CAST(NULL AS decimal(12,4)) AS `x`".
func exprString(s string) protoreflect.Message {
	e := newMsg("Expression")
	setString(mut(e, "expression_string"), "expression", s)
	return e
}

// relation builds a Relation whose rel_type oneof is set to a new message in
// field kind (e.g. "project") and returns both.
func relation(kind string) (rel, body protoreflect.Message) {
	rel = newMsg("Relation")
	return rel, mut(rel, kind)
}

// rootPlan wraps a relation as Plan{root}.
func rootPlan(rel protoreflect.Message) proto.Message {
	p := newMsg("Plan")
	setMsg(p, "root", rel)
	return p.Interface()
}

// commandPlan wraps a command body as Plan{command{<kind>: body}}.
func commandPlan(kind string, body protoreflect.Message) proto.Message {
	p := newMsg("Plan")
	cmd := mut(p, "command")
	setMsg(cmd, kind, body)
	return p.Interface()
}
