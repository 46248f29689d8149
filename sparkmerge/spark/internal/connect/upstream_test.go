package connect

import (
	"context"
	"testing"

	"github.com/apache/spark-connect-go/spark/sql"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
)

// The interop with spark-connect-go reads its unexported fields. These
// tests run without a server against the pinned version, so that an
// upgrade that changes those types fails here, not at a user's run time.
func TestUpstreamInterop(t *testing.T) {
	ctx := context.Background()
	session, err := sql.NewSessionBuilder().Remote("sc://127.0.0.1:1/;user_id=ann").Build(ctx) // connects lazily
	if err != nil {
		t.Fatal(err)
	}
	id, err := SessionIDOf(session)
	if err != nil {
		t.Fatalf("SessionIDOf on spark-connect-go's session: %v", err)
	}
	if len(id) != 36 {
		t.Errorf("session id %q is not a UUID", id)
	}
	if user, err := UserIDOf(session); err != nil || user != "ann" {
		t.Errorf("UserIDOf = %q, %v; want the connection string's ann", user, err)
	}

	df, err := session.Table("db.events") // built locally, no call
	if err != nil {
		t.Fatal(err)
	}
	rel, err := RelationOf(df)
	if err != nil {
		t.Fatalf("RelationOf on spark-connect-go's DataFrame: %v", err)
	}
	read := rel.ProtoReflect().Get(rel.ProtoReflect().Descriptor().Fields().ByName("read")).Message()
	table := read.Get(read.Descriptor().Fields().ByName("named_table")).Message()
	if got := table.Get(table.Descriptor().Fields().ByName("unparsed_identifier")).String(); got != "db.events" {
		t.Errorf("the DataFrame's relation reads %q, want db.events", got)
	}

	// Back: a DataFrame of the session over one of this package's plans.
	var s Session
	mine := s.Table("other", nil).Filter("id > 1")
	back, err := NewUpstreamDataFrame(session, mine.Proto())
	if err != nil {
		t.Fatalf("NewUpstreamDataFrame: %v", err)
	}
	again, err := RelationOf(back)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(mine.Proto(), again, protocmp.Transform()); d != "" {
		t.Errorf("round trip changed the plan (-sent +got):\n%s", d)
	}

	// Not spark-connect-go's types: an error, no panic.
	if _, err := SessionIDOf(fakeSession{}); err == nil {
		t.Error("SessionIDOf accepted a foreign session type")
	}
	if _, err := UserIDOf(fakeSession{}); err == nil {
		t.Error("UserIDOf accepted a foreign session type")
	}
}

type fakeSession struct{ sql.SparkSession }
