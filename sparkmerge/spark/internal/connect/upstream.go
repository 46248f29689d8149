package connect

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/apache/spark-connect-go/spark/sql"
	"google.golang.org/protobuf/proto"
)

// spark-connect-go keeps a DataFrame's plan and a session's id in
// unexported fields and offers no constructor for a DataFrame from a plan
// outside its package, so sharing work with a caller's spark-connect-go
// session goes through reflection here, in one place. A change of those
// fields upstream makes these functions fail with ErrUpstreamChanged
// (tested), never panic.

// ErrUpstreamChanged reports spark-connect-go internals that differ from
// what this package reads.
var ErrUpstreamChanged = errors.New("spark-connect-go's DataFrame or session type changed; this sparkmerge release does not support that version")

// unexported returns the value of struct field name of the pointer v.
func unexported(v any, name string) (reflect.Value, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, fmt.Errorf("%w (%T is not a pointer to a struct)", ErrUpstreamChanged, v)
	}
	f := rv.Elem().FieldByName(name)
	if !f.IsValid() {
		return reflect.Value{}, fmt.Errorf("%w (%T has no field %s)", ErrUpstreamChanged, v, name)
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), nil
}

// RelationOf returns the plan (a spark.connect.Relation) of a
// spark-connect-go DataFrame.
func RelationOf(df sql.DataFrame) (proto.Message, error) {
	if df == nil {
		return nil, errors.New("nil DataFrame")
	}
	f, err := unexported(df, "relation")
	if err != nil {
		return nil, err
	}
	rel, ok := f.Interface().(proto.Message)
	if !ok || reflect.ValueOf(rel).IsNil() || rel.ProtoReflect().Descriptor().FullName() != "spark.connect.Relation" {
		return nil, fmt.Errorf("%w (a DataFrame's relation field is %s)", ErrUpstreamChanged, f.Type())
	}
	return rel, nil
}

// SessionIDOf returns the Spark Connect session id of a spark-connect-go
// session.
func SessionIDOf(s sql.SparkSession) (string, error) {
	if s == nil {
		return "", errors.New("nil SparkSession")
	}
	f, err := unexported(s, "sessionId")
	if err != nil {
		return "", err
	}
	if f.Kind() != reflect.String || f.String() == "" {
		return "", fmt.Errorf("%w (a session's sessionId field is %s)", ErrUpstreamChanged, f.Type())
	}
	return f.String(), nil
}

// UserIDOf returns the user a spark-connect-go session sends with every
// request: the server keys a session by user and id, so a client joining
// the session must send the same user (spark-connect-go sends user_id from
// its connection string, else $USER, else "na").
func UserIDOf(s sql.SparkSession) (string, error) {
	if s == nil {
		return "", errors.New("nil SparkSession")
	}
	c, err := unexported(s, "client")
	if err != nil {
		return "", err
	}
	if c.Kind() == reflect.Interface {
		c = c.Elem()
	}
	if !c.IsValid() || c.Kind() != reflect.Pointer || c.IsNil() {
		return "", fmt.Errorf("%w (a session's client is %s)", ErrUpstreamChanged, c.Kind())
	}
	opts, err := unexported(c.Interface(), "opts")
	if err != nil {
		return "", err
	}
	u := opts.FieldByName("UserId")
	if !u.IsValid() || u.Kind() != reflect.String {
		return "", fmt.Errorf("%w (a client's options have no UserId string)", ErrUpstreamChanged)
	}
	return u.String(), nil
}

// NewUpstreamDataFrame returns a spark-connect-go DataFrame of session s
// over the relation rel (built by this package): lazy, run by s when the
// caller acts on it.
func NewUpstreamDataFrame(s sql.SparkSession, rel proto.Message) (df sql.DataFrame, err error) {
	if s == nil {
		return nil, errors.New("nil SparkSession")
	}
	defer func() {
		if r := recover(); r != nil {
			df, err = nil, fmt.Errorf("%w (sql.NewDataFrame: %v)", ErrUpstreamChanged, r)
		}
	}()
	ctor := reflect.ValueOf(sql.NewDataFrame)
	if ctor.Type().NumIn() != 2 || !reflect.TypeOf(s).AssignableTo(ctor.Type().In(0)) || !reflect.TypeOf(rel).AssignableTo(ctor.Type().In(1)) {
		return nil, fmt.Errorf("%w (sql.NewDataFrame takes %s)", ErrUpstreamChanged, ctor.Type())
	}
	out := ctor.Call([]reflect.Value{reflect.ValueOf(s), reflect.ValueOf(proto.Clone(rel))})
	df, ok := out[0].Interface().(sql.DataFrame)
	if !ok {
		return nil, fmt.Errorf("%w (sql.NewDataFrame returns %s)", ErrUpstreamChanged, out[0].Type())
	}
	return df, nil
}
