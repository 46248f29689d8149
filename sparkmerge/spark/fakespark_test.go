package spark

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/sparkmerge/sparkmerge"
)

// sparkFake is a Spark Connect server on loopback, in this process, with a
// toy catalog and storage behind it: merges run end to end through the
// real client (gRPC, plans, Arrow batches), and a test checks what Spark
// was asked to do and what the target holds afterwards.
//
// It evaluates only what the client's own bookkeeping reads back: counts
// of stored data, listings and contents of files, schemas and settings.
// Stored data are row counts per source ([sourceRows]): a data file holds
// them as JSON, on disk for a local path (the server shares the client's
// filesystem, as a local Spark does) and in remote for any other path
// (cluster storage only the server sees); a table holds them in tables.
// A relation it cannot evaluate (the merge itself) holds merged.
//
// Every request is recorded. A call the fake cannot answer fails with the
// Spark error class FAKE_NO_ANSWER, naming it, so that no test passes on an
// answer nobody chose.
type sparkFake struct {
	addr string

	mu    sync.Mutex
	calls []sparkCall
	// settings are the session's settings (Config get and set).
	settings map[string]string
	// static are the settings a session cannot set (CANNOT_MODIFY_CONFIG).
	static map[string]bool
	// tables is the catalog, by name as the client spells it.
	tables map[string]*fakeTable
	// remote are the files of storage only the server sees, by path.
	remote map[string][]byte
	// schemas are the DDL schemas analyses answer, by path read, table or
	// SQL query; an existing dataset without one reads as "id BIGINT".
	schemas map[string]string
	// read are the rows per source the inputs hold: what --verify counts
	// reading them.
	read sourceRows
	// merged are the rows per source a write of the merge stores (nil:
	// read, every row kept).
	merged sourceRows
	// failed are the requests answered with an error, as "what: error".
	failed []string
	// hook, when set, answers an ExecutePlan before the fake does (ok
	// true), e.g. to fail one call or to block until cancelled; of an
	// AnalyzePlan schema call, only an error is taken. It runs in the
	// server's goroutine, without the lock.
	hook func(ctx context.Context, c sparkCall) (reply sparkReply, ok bool)
}

// sourceRows are row counts per source (the provenance value).
type sourceRows map[string]int64

func (r sourceRows) total() int64 {
	var n int64
	for _, v := range r {
		n += v
	}
	return n
}

func (r sourceRows) add(o sourceRows) sourceRows {
	out := maps.Clone(r)
	if out == nil {
		out = sourceRows{}
	}
	for k, v := range o {
		out[k] += v
	}
	return out
}

// fakeTable is a table of the fake catalog.
type fakeTable struct {
	schema string
	rows   sourceRows
	// provider is its format (DESCRIBE TABLE EXTENDED); "" is parquet.
	provider string
	// partitionBy are its partition columns (DESCRIBE TABLE EXTENDED).
	partitionBy []string
}

// sparkCall is one request the fake received.
type sparkCall struct {
	// method is the RPC: AnalyzePlan, ExecutePlan, Config, Interrupt,
	// ReleaseExecute or ReleaseSession.
	method string
	// what says what an ExecutePlan or AnalyzePlan asked for (see
	// classify), or "get"/"set" for Config.
	what string
	req  protoreflect.Message
}

// plan is the plan an ExecutePlan or AnalyzePlan(schema) carries.
func (c sparkCall) plan() protoreflect.Message {
	if c.method == "AnalyzePlan" {
		return pmsg(c.req, "schema", "plan")
	}
	return pmsg(c.req, "plan")
}

// sparkReply is a scripted answer: rows for a query, nothing for a
// command, or an error.
type sparkReply struct {
	cols []string
	rows [][]any
	err  error
}

// startSparkFake starts a fake Spark 4.0.1 with an empty catalog.
func startSparkFake(t *testing.T) *sparkFake {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &sparkFake{
		addr:     lis.Addr().String(),
		settings: map[string]string{},
		static:   map[string]bool{},
		tables:   map[string]*fakeTable{},
		remote:   map[string][]byte{},
		schemas:  map[string]string{},
	}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(f.handle))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return f
}

// connect is a client of the fake, closed when the test ends.
func (f *sparkFake) connect(t *testing.T, opts ConnectOptions) *Client {
	t.Helper()
	c, err := Connect(context.Background(), "sc://"+f.addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sparkFakeClient starts a fake and connects to it.
func sparkFakeClient(t *testing.T) (*Client, *sparkFake) {
	t.Helper()
	f := startSparkFake(t)
	return f.connect(t, ConnectOptions{}), f
}

// recorded are the calls of the given what or method (all calls for
// ""), in order.
func (f *sparkFake) recorded(what string) []sparkCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []sparkCall
	for _, c := range f.calls {
		if what == "" || c.what == what || c.method == what {
			out = append(out, c)
		}
	}
	return out
}

// noteFailure records call's error, if it was answered with one (not
// cancelled by the client).
func (f *sparkFake) noteFailure(call sparkCall, err *error) {
	if *err != nil && status.Code(*err) != codes.Canceled {
		f.mu.Lock()
		f.failed = append(f.failed, call.what+": "+(*err).Error())
		f.mu.Unlock()
	}
}

// failures are the requests answered with an error so far, in order.
func (f *sparkFake) failures() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.failed)
}

// fakeWrite is a WriteOperation as the fake received it.
type fakeWrite struct {
	Format, Mode, Path, Table string
	PartitionBy               []string
	Options                   map[string]string
	input                     protoreflect.Message
}

// writes are the WriteOperations received, in order.
func (f *sparkFake) writes() []fakeWrite {
	var out []fakeWrite
	for _, c := range f.recorded("write") {
		out = append(out, writeOf(c.plan()))
	}
	return out
}

// statements are the SQL commands received, in order.
func (f *sparkFake) statements() []string {
	var out []string
	for _, c := range f.recorded("sql") {
		if stmt := statementOf(c.plan()); stmt != "" { // not a query
			out = append(out, stmt)
		}
	}
	return out
}

// query answers the SQL queries the client collects (under the lock):
// a table's description, the current catalog, the settings.
func (f *sparkFake) query(q string) sparkReply {
	if name, ok := strings.CutPrefix(q, "DESCRIBE TABLE EXTENDED "); ok {
		t := f.tables[name]
		if t == nil {
			return sparkReply{err: sparkErrorOf("TABLE_OR_VIEW_NOT_FOUND", "The table or view "+name+" cannot be found")}
		}
		provider := t.provider
		if provider == "" {
			provider = "parquet"
		}
		rows := [][]any{{"Provider", provider, ""}}
		if len(t.partitionBy) > 0 {
			rows = append(rows, []any{"# Partition Information", "", ""}, []any{"# col_name", "data_type", "comment"})
			for _, c := range t.partitionBy {
				rows = append(rows, []any{c, "", nil})
			}
		}
		return sparkReply{cols: []string{"col_name", "data_type", "comment"}, rows: rows}
	}
	switch q {
	case "SELECT current_catalog()":
		return sparkReply{cols: []string{"current_catalog()"}, rows: [][]any{{"spark_catalog"}}}
	case "SET":
		out := sparkReply{cols: []string{"key", "value"}, rows: [][]any{}}
		for _, k := range sortedKeys(f.settings) {
			out.rows = append(out.rows, []any{k, f.settings[k]})
		}
		return out
	}
	return sparkReply{err: noAnswer("query " + q)}
}

// tableRows are the rows of a table of the fake catalog (nil when there
// is no such table).
func (f *sparkFake) tableRows(name string) sourceRows {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.tables[name]; t != nil {
		return maps.Clone(t.rows)
	}
	return nil
}

// storedRows are the rows stored at path p, as a count of them reads
// them.
func (f *sparkFake) storedRows(t *testing.T, p string) sourceRows {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	rows, err := f.rowsAt([]string{p})
	if err != nil {
		t.Fatalf("rows at %s: %v", p, err)
	}
	return rows
}

// putData stores a data file holding rows at path p (a file path).
func (f *sparkFake) putData(t *testing.T, p string, rows sourceRows) {
	t.Helper()
	content, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.putFile(p, content); err != nil {
		t.Fatal(err)
	}
}

var requestTypes = map[string]string{
	"AnalyzePlan":     "AnalyzePlanRequest",
	"ExecutePlan":     "ExecutePlanRequest",
	"Config":          "ConfigRequest",
	"Interrupt":       "InterruptRequest",
	"ReleaseExecute":  "ReleaseExecuteRequest",
	"ReattachExecute": "ReattachExecuteRequest",
	"ReleaseSession":  "ReleaseSessionRequest",
}

func (f *sparkFake) handle(_ any, stream grpc.ServerStream) (err error) {
	full, _ := grpc.MethodFromServerStream(stream)
	method := strings.TrimPrefix(full, "/spark.connect.SparkConnectService/")
	typ, ok := requestTypes[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "fake spark: no %s", full)
	}
	req := newProto(typ)
	if err := stream.RecvMsg(req.Interface()); err != nil {
		return err
	}
	sid := pstr(req, "session_id")
	call := sparkCall{method: method, req: req}
	switch method {
	case "AnalyzePlan":
		call.what = "version"
		if pmsg(req, "schema") != nil {
			call.what = "schema " + classify(call.plan())
		}
		if pmsg(req, "input_files") != nil {
			call.what = "input files"
		}
	case "ExecutePlan":
		call.what = classify(call.plan())
	case "Config":
		call.what = which(pmsg(req, "operation"), "op_type")
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	defer f.noteFailure(call, &err)

	switch method {
	case "AnalyzePlan":
		resp := newProto("AnalyzePlanResponse")
		pset(resp, "session_id", sid)
		if call.what == "version" {
			pset(pmut(resp, "spark_version"), "version", "4.0.1")
			return stream.SendMsg(resp.Interface())
		}
		if f.hook != nil {
			if reply, handled := f.hook(stream.Context(), call); handled && reply.err != nil {
				return reply.err
			}
		}
		if call.what == "input files" {
			// The files a binaryFile read lists, of 0 bytes too.
			f.mu.Lock()
			defer f.mu.Unlock()
			in := pmut(resp, "input_files")
			list := in.Mutable(field(in, "files")).List()
			for _, p := range pstrs(dataSourceBelow(pmsg(req, "input_files", "plan", "root")), "paths") {
				files, _ := f.dataFiles(p)
				for _, file := range files {
					list.Append(protoreflect.ValueOfString(file.path))
				}
			}
			return stream.SendMsg(resp.Interface())
		}
		f.mu.Lock()
		ddl, err := f.schemaOf(pmsg(call.plan(), "root"))
		f.mu.Unlock()
		if err != nil {
			return err
		}
		dt, err := protoSchema(ddl)
		if err != nil {
			return status.Errorf(codes.Internal, "fake spark: schema %q: %v", ddl, err)
		}
		sch := pmut(resp, "schema")
		sch.Set(field(sch, "schema"), protoreflect.ValueOfMessage(dt))
		return stream.SendMsg(resp.Interface())
	case "ExecutePlan":
		return f.execute(stream, call, sid)
	case "Config":
		resp, err := f.config(call, sid)
		if err != nil {
			return err
		}
		return stream.SendMsg(resp.Interface())
	case "Interrupt":
		return stream.SendMsg(newProto("InterruptResponse").Interface())
	case "ReleaseExecute":
		return stream.SendMsg(newProto("ReleaseExecuteResponse").Interface())
	case "ReleaseSession":
		resp := newProto("ReleaseSessionResponse")
		pset(resp, "session_id", sid)
		return stream.SendMsg(resp.Interface())
	}
	return status.Errorf(codes.Unimplemented, "fake spark: %s not expected (every answer ends with ResultComplete)", method)
}

// execute answers an ExecutePlan: its rows in one Arrow batch, then
// ResultComplete.
func (f *sparkFake) execute(stream grpc.ServerStream, call sparkCall, sid string) error {
	var reply sparkReply
	handled := false
	if f.hook != nil {
		reply, handled = f.hook(stream.Context(), call)
	}
	if !handled {
		f.mu.Lock()
		reply = f.answer(call)
		f.mu.Unlock()
	}
	if reply.err != nil {
		return reply.err
	}
	send := func(resp protoreflect.Message) error {
		pset(resp, "session_id", sid)
		return stream.SendMsg(resp.Interface())
	}
	if reply.cols != nil {
		data, err := arrowBatch(reply.cols, reply.rows)
		if err != nil {
			return status.Errorf(codes.Internal, "fake spark: %v", err)
		}
		resp := newProto("ExecutePlanResponse")
		pset(resp, "response_id", "batch")
		b := pmut(resp, "arrow_batch")
		b.Set(field(b, "data"), protoreflect.ValueOfBytes(data))
		b.Set(field(b, "row_count"), protoreflect.ValueOfInt64(int64(len(reply.rows))))
		if err := send(resp); err != nil {
			return err
		}
	}
	done := newProto("ExecutePlanResponse")
	pset(done, "response_id", "complete")
	pmut(done, "result_complete")
	return send(done)
}

// config answers a Config get or set.
func (f *sparkFake) config(call sparkCall, sid string) (protoreflect.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := newProto("ConfigResponse")
	pset(resp, "session_id", sid)
	op := pmsg(call.req, "operation")
	switch call.what {
	case "get":
		for _, k := range pstrs(pmsg(op, "get"), "keys") {
			kv := newProto("KeyValue")
			pset(kv, "key", k)
			if v, ok := f.settings[k]; ok {
				pset(kv, "value", v)
			}
			resp.Mutable(field(resp, "pairs")).List().Append(protoreflect.ValueOfMessage(kv))
		}
	case "set":
		// As Spark's SparkConnectConfigHandler: pair by pair, stopping at
		// the first refused, those before it kept.
		pairs := pmsg(op, "set").Get(field(pmsg(op, "set"), "pairs")).List()
		for i := range pairs.Len() {
			kv := pairs.Get(i).Message()
			k := pstr(kv, "key")
			if f.static[k] {
				return nil, sparkErrorOf("CANNOT_MODIFY_CONFIG", "Cannot modify the value of the Spark config: "+k)
			}
			f.settings[k] = pstr(kv, "value")
		}
	case "get_all":
		for _, k := range sortedKeys(f.settings) {
			kv := newProto("KeyValue")
			pset(kv, "key", k)
			pset(kv, "value", f.settings[k])
			resp.Mutable(field(resp, "pairs")).List().Append(protoreflect.ValueOfMessage(kv))
		}
	case "unset":
		for _, k := range pstrs(pmsg(op, "unset"), "keys") {
			delete(f.settings, k)
		}
	}
	return resp, nil
}

// classify names what a plan asks for: "write", "sql", "view" (commands);
// "count", "group" (aggregates), "list" or "fetch" (binaryFile reads of
// listings and contents), "limit", or the kind of its root relation.
func classify(plan protoreflect.Message) string {
	if cmd := pmsg(plan, "command"); cmd != nil {
		switch which(cmd, "command_type") {
		case "write_operation", "write_operation_v2":
			return "write"
		case "sql_command":
			return "sql"
		case "create_dataframe_view":
			return "view"
		}
		return which(cmd, "command_type")
	}
	rel := pmsg(plan, "root")
	kind := which(rel, "rel_type")
	switch kind {
	case "aggregate":
		if len(exprs(pmsg(rel, "aggregate"), "grouping_expressions")) == 0 {
			return "count"
		}
		return "group"
	case "set_op":
		// headsListing: a listing's two scans, the small files with
		// their heads.
		if left := pmsg(rel, "set_op", "left_input"); which(left, "rel_type") == "project" && len(exprs(pmsg(left, "project"), "expressions")) == 6 {
			if ds := dataSourceBelow(left); ds != nil && pstr(ds, "format") == "binaryFile" {
				return "list"
			}
		}
	case "project":
		if ds := dataSourceBelow(rel); ds != nil && pstr(ds, "format") == "binaryFile" {
			if e := exprs(pmsg(rel, "project"), "expressions"); len(e) == 3 || len(e) == 4 && strings.Contains(e[3], "resolveURI") {
				return "list"
			}
			return "fetch"
		}
	}
	return kind
}

// countWithRead answers countWithRead's aggregate agg (under the lock):
// the written rows (the union's first input, by provenance or in
// total) and the rows read per source.
func (f *sparkFake) countWithRead(agg protoreflect.Message) sparkReply {
	written := pmsg(agg, "input")
	if which(written, "rel_type") == "repartition" {
		written = pmsg(written, "repartition", "input") // counted in one task (countedRows)
	}
	for which(written, "rel_type") == "set_op" {
		written = pmsg(written, "set_op", "left_input")
	}
	key := exprs(pmsg(written, "project"), "expressions")[1]
	rows, err := f.eval(pmsg(written, "project", "input"))
	if err != nil {
		return sparkReply{err: err}
	}
	out := sparkReply{cols: []string{"side", "src", "n"}, rows: [][]any{}}
	if key == "CAST(NULL AS STRING) AS src" {
		out.rows = append(out.rows, []any{"written", nil, rows.total()})
	} else {
		for _, src := range sortedKeys(rows) {
			out.rows = append(out.rows, []any{"written", src, rows[src]})
		}
	}
	for _, src := range sortedKeys(f.read) {
		out.rows = append(out.rows, []any{"read", src, f.read[src]})
	}
	return out
}

// answer is the fake's own answer to an ExecutePlan (under the lock).
func (f *sparkFake) answer(call sparkCall) sparkReply {
	plan := call.plan()
	switch call.what {
	case "write":
		return sparkReply{err: f.write(writeOf(plan))}
	case "sql":
		if rel := pmsg(plan, "root"); rel != nil {
			return f.query(pstr(pmsg(rel, "sql"), "query"))
		}
		return sparkReply{err: f.exec(statementOf(plan))}
	case "view":
		return sparkReply{}
	}
	rel := pmsg(plan, "root")
	switch call.what {
	case "count":
		rows, err := f.eval(pmsg(rel, "aggregate", "input"))
		if err != nil {
			return sparkReply{err: err}
		}
		return sparkReply{cols: []string{"count"}, rows: [][]any{{rows.total()}}}
	case "group":
		agg := pmsg(rel, "aggregate")
		by := exprs(agg, "grouping_expressions")
		if slices.Equal(by, []string{"side", "src"}) {
			return f.countWithRead(agg)
		}
		if slices.Equal(by, []string{"g", "k"}) && slices.Equal(exprs(agg, "aggregate_expressions"), []string{"count(1) AS lines"}) {
			return f.notUTF8Lines(pmsg(agg, "input"))
		}
		rows := f.read
		if !slices.Equal(by, []string{"src"}) { // not countPerSource: the written rows by provenance
			var err error
			if rows, err = f.eval(pmsg(agg, "input")); err != nil {
				return sparkReply{err: err}
			}
		}
		out := sparkReply{cols: []string{by[0], "n"}, rows: [][]any{}}
		for _, src := range sortedKeys(rows) {
			out.rows = append(out.rows, []any{src, rows[src]})
		}
		return out
	case "list", "fetch":
		if which(rel, "rel_type") == "set_op" {
			small, large := f.listing(pmsg(rel, "set_op", "left_input"), true), f.listing(pmsg(rel, "set_op", "right_input"), false)
			if small.err != nil || large.err != nil {
				return sparkReply{err: cmp.Or(small.err, large.err)}
			}
			for _, row := range large.rows {
				small.rows = append(small.rows, append(row, nil, nil))
			}
			return small
		}
		return f.listing(rel, call.what == "fetch")
	case "read":
		if ds := pmsg(rel, "read", "data_source"); ds != nil && pstr(ds, "format") == "text" {
			return f.textLines(pstrs(ds, "paths"))
		}
	}
	return sparkReply{err: noAnswer("execute " + call.what)}
}

// listing answers a binaryFile read: per file its path, length and
// modification time, and its real path when asked (the fake has no links:
// its path), and for a fetch its content (the SQL's cuts are not
// applied) and the server's clock.
//
// A listing with heads (6 columns: headsListing) has its real path fourth,
// then its content and the server's clock; its content is the file whole (its files are small) where the condition of
// its name holds, null where it does not.
func (f *sparkFake) listing(rel protoreflect.Message, fetch bool) sparkReply {
	cols := exprs(pmsg(rel, "project"), "expressions")
	real := !fetch && len(cols) == 4
	heads := len(cols) == 6
	ds := dataSourceBelow(rel)
	minSize, maxSize := int64(0), int64(1<<62)
	if fl := pmsg(rel, "project", "input", "filter"); fl != nil {
		fmt.Sscanf(pstr(pmsg(fl, "condition", "expression_string"), "expression"), "length >= %d AND length <= %d", &minSize, &maxSize)
	}
	out := sparkReply{cols: []string{"path", "length", "modificationTime"}, rows: [][]any{}}
	if heads {
		out.cols = append(out.cols, "real", "content", "now")
	}
	if fetch && !heads {
		out.cols = append(out.cols, "content", "now")
	}
	if real {
		out.cols = append(out.cols, "real")
	}
	for _, p := range pstrs(ds, "paths") {
		files, exists := f.dataFiles(p)
		if !exists {
			return sparkReply{err: sparkErrorOf("PATH_NOT_FOUND", "Path does not exist: "+p)}
		}
		for _, file := range files {
			if file.size < minSize || file.size > maxSize || file.size == 0 {
				continue // Spark's scans skip files of 0 bytes
			}
			row := []any{file.path, file.size, fakeMTime}
			if heads {
				row = append(row, file.path)
				if fetch {
					var content any
					if named := strings.TrimPrefix(cols[4], "CASE WHEN "); fakeNameHolds(named, file.path) {
						content = file.content
					}
					row = append(row, content, fakeClock(cols[5]))
				}
				out.rows = append(out.rows, row)
				continue
			}
			if fetch {
				row = append(row, file.content, fakeClock(cols[4])) // its files are small: every one whole
			}
			if real {
				row = append(row, file.path)
			}
			out.rows = append(out.rows, row)
		}
	}
	return out
}

// fakeClock is the value of a column of the server's clock, sql: Spark's
// value of serverClock (fakeNow as a string), null for other SQL.
func fakeClock(sql string) any {
	if sql != serverClock {
		return nil
	}
	return strconv.FormatInt(fakeNow, 10)
}

// fakeNameHolds reports whether the condition of a file's name that sql
// starts with (listingHeads.namesSQL: "(lower(path) LIKE '%.ext' OR
// ...)") holds of p.
func fakeNameHolds(sql, p string) bool {
	cond, _, _ := strings.Cut(sql, ") THEN")
	for _, like := range strings.Split(strings.TrimPrefix(cond, "("), " OR ") {
		if ext, ok := strings.CutPrefix(like, "lower(path) LIKE '%"); ok && strings.HasSuffix(strings.ToLower(p), strings.TrimSuffix(ext, "'")) {
			return true
		}
	}
	return false
}

// notUTF8Lines answers notUTF8Files's union of text reads (under the
// lock): of each measure (its g) and file, how many lines are not
// UTF-8, for the files that hold such a line.
func (f *sparkFake) notUTF8Lines(rel protoreflect.Message) sparkReply {
	out := sparkReply{cols: []string{"g", "k", "lines"}, rows: [][]any{}}
	if which(rel, "rel_type") == "set_op" {
		left, right := f.notUTF8Lines(pmsg(rel, "set_op", "left_input")), f.notUTF8Lines(pmsg(rel, "set_op", "right_input"))
		if err := cmp.Or(left.err, right.err); err != nil {
			return sparkReply{err: err}
		}
		out.rows = append(left.rows, right.rows...)
		return out
	}
	var g int32
	if _, err := fmt.Sscanf(exprs(pmsg(rel, "project"), "expressions")[0], "CAST(%d AS INT) AS g", &g); err != nil {
		return sparkReply{err: fmt.Errorf("fake Spark: a measure of UTF-8 without its index: %w", err)}
	}
	for _, p := range pstrs(dataSourceBelow(rel), "paths") {
		files, exists := f.dataFiles(p)
		if !exists {
			return sparkReply{err: sparkErrorOf("PATH_NOT_FOUND", "Path does not exist: "+p)}
		}
		for _, file := range files {
			var bad int64
			for _, line := range strings.Split(string(file.content), "\n") {
				if !utf8.ValidString(line) {
					bad++
				}
			}
			if bad > 0 {
				out.rows = append(out.rows, []any{g, sparkPathKey(file.path), bad})
			}
		}
	}
	return out
}

// textLines answers a text read: the lines of the files at paths (under
// the lock).
func (f *sparkFake) textLines(paths []string) sparkReply {
	out := sparkReply{cols: []string{"value"}, rows: [][]any{}}
	for _, p := range paths {
		files, exists := f.dataFiles(p)
		if !exists {
			return sparkReply{err: sparkErrorOf("PATH_NOT_FOUND", "Path does not exist: "+p)}
		}
		for _, file := range files {
			for _, line := range strings.Split(strings.TrimSuffix(string(file.content), "\n"), "\n") {
				if file.size > 0 {
					out.rows = append(out.rows, []any{line})
				}
			}
		}
	}
	return out
}

// textOf is what a text write of rel stores: the literal of a one-row
// query "SELECT '...' AS value" (sparkmerge's records), nothing for any
// other (the query of no rows that clears one).
func textOf(rel protoreflect.Message) []byte {
	for which(rel, "rel_type") == "repartition" {
		rel = pmsg(rel, "repartition", "input")
	}
	q := pstr(pmsg(rel, "sql"), "query")
	lit, ok := strings.CutPrefix(q, "SELECT '")
	if lit, ok2 := strings.CutSuffix(lit, "' AS value"); ok && ok2 {
		var b strings.Builder
		for i := 0; i < len(lit); i++ {
			if lit[i] == '\\' && i+1 < len(lit) {
				i++
			}
			b.WriteByte(lit[i])
		}
		return []byte(b.String() + "\n")
	}
	return nil
}

// fakeMTime and fakeNow are every file's modification time and the
// server's clock, in Unix milliseconds: files long settled.
const (
	fakeMTime int64 = 1_700_000_000_000
	fakeNow   int64 = 1_700_000_600_000
)

// eval evaluates a relation the client reads back: a table, a path, a
// coalesce or the emptying query of a staging directory; anything else is
// the merge, which holds merged (under the lock).
func (f *sparkFake) eval(rel protoreflect.Message) (sourceRows, error) {
	switch which(rel, "rel_type") {
	case "read":
		if nt := pmsg(rel, "read", "named_table"); nt != nil {
			name := pstr(nt, "unparsed_identifier")
			t := f.tables[name]
			if t == nil {
				return nil, sparkErrorOf("TABLE_OR_VIEW_NOT_FOUND", "The table or view "+name+" cannot be found")
			}
			return maps.Clone(t.rows), nil
		}
		return f.rowsAt(pstrs(pmsg(rel, "read", "data_source"), "paths"))
	case "repartition":
		return f.eval(pmsg(rel, "repartition", "input"))
	case "sql":
		if q := pstr(pmsg(rel, "sql"), "query"); q == "SELECT 1 AS emptied WHERE false" {
			return sourceRows{}, nil
		}
	}
	if f.merged != nil {
		return maps.Clone(f.merged), nil
	}
	return maps.Clone(f.read), nil
}

// rowsAt reads the data files at paths (under the lock).
func (f *sparkFake) rowsAt(paths []string) (sourceRows, error) {
	rows := sourceRows{}
	for _, p := range paths {
		files, exists := f.dataFiles(p)
		if !exists {
			return nil, sparkErrorOf("PATH_NOT_FOUND", "Path does not exist: "+p)
		}
		if len(files) == 0 {
			return nil, sparkErrorOf("UNABLE_TO_INFER_SCHEMA", "Unable to infer schema for Parquet at "+p)
		}
		for _, file := range files {
			var r sourceRows
			if err := json.Unmarshal(file.content, &r); err != nil {
				return nil, status.Errorf(codes.Internal, "fake spark: %s holds no rows: %v", file.path, err)
			}
			rows = rows.add(r)
		}
	}
	return rows, nil
}

// schemaOf answers an analysis (under the lock).
func (f *sparkFake) schemaOf(rel protoreflect.Message) (string, error) {
	switch which(rel, "rel_type") {
	case "read":
		if nt := pmsg(rel, "read", "named_table"); nt != nil {
			name := pstr(nt, "unparsed_identifier")
			if t := f.tables[name]; t != nil {
				return t.schema, nil
			}
			return "", sparkErrorOf("TABLE_OR_VIEW_NOT_FOUND", "The table or view "+name+" cannot be found")
		}
		paths := pstrs(pmsg(rel, "read", "data_source"), "paths")
		if pstr(pmsg(rel, "read", "data_source"), "format") == "text" {
			if r := f.textLines(paths); r.err != nil {
				return "", r.err
			}
			return "value STRING", nil
		}
		if len(paths) == 1 {
			if ddl, ok := f.schemas[unescapeGlob(paths[0])]; ok {
				return ddl, nil
			}
		}
		if _, err := f.rowsAt(paths); err != nil {
			return "", err
		}
		if ddl, ok := f.schemas[unescapeGlob(paths[0])]; ok {
			return ddl, nil
		}
		return "id BIGINT", nil
	case "sql":
		q := pstr(pmsg(rel, "sql"), "query")
		if ddl, ok := f.schemas[q]; ok {
			return ddl, nil
		}
		return "", noAnswer("schema of query " + q)
	}
	return "", noAnswer("schema of a " + which(rel, "rel_type"))
}

// write runs a WriteOperation (under the lock).
func (f *sparkFake) write(w fakeWrite) error {
	if w.Format == "text" {
		if w.Mode == "overwrite" {
			f.remove(w.Path)
		}
		dir := strings.TrimSuffix(w.Path, "/")
		if err := f.putFile(dir+"/part-00000-"+uuid.NewString()+"-c000.txt", textOf(w.input)); err != nil {
			return err
		}
		return f.putFile(dir+"/_SUCCESS", nil)
	}
	rows, err := f.eval(w.input)
	if err != nil {
		return err
	}
	if w.Table != "" {
		t := f.tables[w.Table]
		switch {
		case t != nil && (w.Mode == "errorifexists" || w.Mode == "create"):
			return sparkErrorOf("TABLE_OR_VIEW_ALREADY_EXISTS", "Cannot create table "+w.Table+" because it already exists")
		case t != nil && w.Mode == "ignore":
		case t != nil && w.Mode == "append":
			t.rows = t.rows.add(rows)
		default:
			f.tables[w.Table] = &fakeTable{schema: f.schemas[w.Table], rows: rows, provider: w.Format, partitionBy: w.PartitionBy}
		}
		return nil
	}
	_, exists := f.dataFiles(w.Path)
	switch {
	case exists && w.Mode == "errorifexists":
		return sparkErrorOf("PATH_ALREADY_EXISTS", "Path "+w.Path+" already exists")
	case exists && w.Mode == "ignore":
		return nil
	case exists && w.Mode == "overwrite":
		f.remove(w.Path)
	}
	content, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	format := w.Format
	if format == "" {
		format = "parquet"
	}
	dir := strings.TrimSuffix(w.Path, "/")
	if err := f.putFile(dir+"/part-00000-"+uuid.NewString()+"-c000."+format, content); err != nil {
		return err
	}
	return f.putFile(dir+"/_SUCCESS", nil)
}

var (
	dropTable   = regexp.MustCompile(`^DROP TABLE (IF EXISTS )?(\S+)$`)
	renameTable = regexp.MustCompile(`^ALTER TABLE (\S+) RENAME TO (\S+)$`)
	alterTable  = regexp.MustCompile(`^(?:ALTER|REFRESH) TABLE (\S+)`)
	// insertOverwrite replaces a table's rows by another table's.
	insertOverwrite = regexp.MustCompile(`^INSERT OVERWRITE TABLE (\S+) SELECT .+ FROM (\S+)$`)
)

// exec runs a SQL command on the catalog (under the lock).
func (f *sparkFake) exec(stmt string) error {
	missing := func(name string) error {
		return sparkErrorOf("TABLE_OR_VIEW_NOT_FOUND", "The table or view "+name+" cannot be found")
	}
	if m := dropTable.FindStringSubmatch(stmt); m != nil {
		if f.tables[m[2]] == nil && m[1] == "" {
			return missing(m[2])
		}
		delete(f.tables, m[2])
		return nil
	}
	if m := renameTable.FindStringSubmatch(stmt); m != nil {
		if f.tables[m[1]] == nil {
			return missing(m[1])
		}
		f.tables[m[2]] = f.tables[m[1]]
		delete(f.tables, m[1])
		return nil
	}
	if m := insertOverwrite.FindStringSubmatch(stmt); m != nil {
		for _, name := range m[1:] {
			if f.tables[name] == nil {
				return missing(name)
			}
		}
		f.tables[m[1]].rows = sourceRows{}.add(f.tables[m[2]].rows)
		return nil
	}
	if m := alterTable.FindStringSubmatch(stmt); m != nil && f.tables[m[1]] == nil {
		return missing(m[1])
	}
	return nil
}

// storedFile is a data file as Spark lists it.
type storedFile struct {
	path    string // as Spark lists it: file: for a local one
	size    int64
	content []byte
}

// dataFiles lists the data files at or below p (a file, a directory, or
// a literal path as the client escapes it), skipping hidden files and
// directories (".", "_") below p as Spark does, and reports whether p
// exists at all (under the lock).
func (f *sparkFake) dataFiles(p string) (files []storedFile, exists bool) {
	p = unescapeGlob(p)
	hidden := func(rel string) bool {
		for _, part := range strings.Split(rel, "/") {
			if strings.HasPrefix(part, ".") || strings.HasPrefix(part, "_") {
				return true
			}
		}
		return false
	}
	if isLocalPath(p) {
		root := localPath(p)
		_ = filepath.WalkDir(root, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			exists = true
			rel, _ := filepath.Rel(root, q)
			if d.IsDir() || rel != "." && hidden(filepath.ToSlash(rel)) {
				return nil
			}
			content, err := os.ReadFile(q)
			if err != nil {
				return err
			}
			files = append(files, storedFile{path: "file:" + q, size: int64(len(content)), content: content})
			return nil
		})
		return files, exists
	}
	root := strings.TrimSuffix(p, "/")
	for _, name := range sortedKeys(f.remote) {
		rel, below := strings.CutPrefix(name, root+"/")
		if name != root && !below {
			continue
		}
		exists = true
		if below && hidden(rel) {
			continue
		}
		files = append(files, storedFile{path: name, size: int64(len(f.remote[name])), content: f.remote[name]})
	}
	return files, exists
}

// putFile stores a file (under the lock).
func (f *sparkFake) putFile(p string, content []byte) error {
	if isLocalPath(p) {
		lp := localPath(p)
		if err := os.MkdirAll(filepath.Dir(lp), 0o777); err != nil {
			return err
		}
		return os.WriteFile(lp, content, 0o666)
	}
	f.remote[p] = content
	return nil
}

// remove deletes p and everything below it (under the lock).
func (f *sparkFake) remove(p string) {
	if isLocalPath(p) {
		os.RemoveAll(localPath(p))
		return
	}
	root := strings.TrimSuffix(p, "/")
	for name := range f.remote {
		if name == root || strings.HasPrefix(name, root+"/") {
			delete(f.remote, name)
		}
	}
}

// unescapeGlob undoes literalPath's escapes.
func unescapeGlob(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// sparkErrorOf is a Spark error of class as the server sends it: a gRPC
// status with the class in its ErrorInfo.
func sparkErrorOf(class, message string) error {
	st, err := status.New(codes.Internal, "["+class+"] "+message+". SQLSTATE: XXKCM").WithDetails(&errdetails.ErrorInfo{
		Reason:   "org.apache.spark.sql.AnalysisException",
		Domain:   "org.apache.spark",
		Metadata: map[string]string{"errorClass": class},
	})
	if err != nil {
		return status.Errorf(codes.Internal, "fake spark: %v", err)
	}
	return st.Err()
}

// noAnswer is the fake's error for a call it has no answer for.
func noAnswer(what string) error {
	return sparkErrorOf("FAKE_NO_ANSWER", "fake spark has no answer for "+what)
}

// writeOf reads a plan's WriteOperation.
func writeOf(plan protoreflect.Message) fakeWrite {
	if v2 := pmsg(plan, "command", "write_operation_v2"); v2 != nil {
		// A create through the table's catalog (the only V2 write sent).
		var partitionBy []string
		l := v2.Get(field(v2, "partitioning_columns")).List()
		for i := range l.Len() {
			partitionBy = append(partitionBy, strings.Trim(pstr(pmsg(l.Get(i).Message(), "unresolved_attribute"), "unparsed_identifier"), "`"))
		}
		return fakeWrite{Format: pstr(v2, "provider"), Mode: "create", Table: pstr(v2, "table_name"), PartitionBy: partitionBy, Options: pmap(v2, "options"), input: pmsg(v2, "input")}
	}
	w := pmsg(plan, "command", "write_operation")
	mode := w.Get(field(w, "mode")).Enum()
	name := string(field(w, "mode").Enum().Values().ByNumber(mode).Name())
	out := fakeWrite{
		Format:      pstr(w, "source"),
		Mode:        strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "SAVE_MODE_"), "_", "")),
		Path:        pstr(w, "path"),
		PartitionBy: pstrs(w, "partitioning_columns"),
		Options:     pmap(w, "options"),
		input:       pmsg(w, "input"),
	}
	if t := pmsg(w, "table"); t != nil {
		out.Table = pstr(t, "table_name")
	}
	return out
}

// statementOf reads a plan's SqlCommand.
func statementOf(plan protoreflect.Message) string {
	return pstr(pmsg(plan, "command", "sql_command"), "sql")
}

// dataSourceBelow is the first Read.DataSource in m's tree (depth
// first), or nil.
func dataSourceBelow(m protoreflect.Message) protoreflect.Message {
	if all := dataSources(m); len(all) > 0 {
		return all[0]
	}
	return nil
}

// dataSources are the Read.DataSource messages in m's tree, depth first,
// each message's fields in the order they are declared (a set_op's left
// input before its right). Not by Message.Range, whose order protobuf-go
// leaves undefined and which differed between builds: a test reading the
// first source of a union failed in one build only.
func dataSources(m protoreflect.Message) []protoreflect.Message {
	if m.Descriptor().FullName() == "spark.connect.Read.DataSource" {
		return []protoreflect.Message{m}
	}
	var out []protoreflect.Message
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) || fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			continue
		}
		v := m.Get(fd)
		if fd.IsList() {
			for j := range v.List().Len() {
				out = append(out, dataSources(v.List().Get(j).Message())...)
			}
			continue
		}
		out = append(out, dataSources(v.Message())...)
	}
	return out
}

// pathsRead are the paths of every Read.DataSource in m's tree, sorted.
func pathsRead(m protoreflect.Message) []string {
	var out []string
	for _, ds := range dataSources(m) {
		out = append(out, pstrs(ds, "paths")...)
	}
	slices.Sort(out)
	return out
}

// newProto is a new message spark.connect.<name> of the types
// spark-connect-go registers.
func newProto(name string) protoreflect.Message {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName("spark.connect." + name))
	if err != nil {
		panic(err)
	}
	return mt.New()
}

func field(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic(fmt.Sprintf("%s has no field %s", m.Descriptor().FullName(), name))
	}
	return fd
}

// pmsg follows a path of message fields from m: nil where one is unset.
func pmsg(m protoreflect.Message, path ...string) protoreflect.Message {
	for _, name := range path {
		if m == nil {
			return nil
		}
		fd := field(m, name)
		if !m.Has(fd) {
			return nil
		}
		m = m.Get(fd).Message()
	}
	return m
}

// pmut is the sub-message in field name of m, set.
func pmut(m protoreflect.Message, name string) protoreflect.Message {
	return m.Mutable(field(m, name)).Message()
}

func pstr(m protoreflect.Message, name string) string {
	if m == nil {
		return ""
	}
	return m.Get(field(m, name)).String()
}

func pset(m protoreflect.Message, name, v string) {
	m.Set(field(m, name), protoreflect.ValueOfString(v))
}

func pstrs(m protoreflect.Message, name string) []string {
	if m == nil {
		return nil
	}
	l := m.Get(field(m, name)).List()
	out := make([]string, l.Len())
	for i := range out {
		out[i] = l.Get(i).String()
	}
	return out
}

func pmap(m protoreflect.Message, name string) map[string]string {
	out := map[string]string{}
	m.Get(field(m, name)).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		out[k.String()] = v.String()
		return true
	})
	return out
}

// exprs are the SQL texts of the Expression list field name of m.
func exprs(m protoreflect.Message, name string) []string {
	l := m.Get(field(m, name)).List()
	out := make([]string, l.Len())
	for i := range out {
		out[i] = pstr(pmsg(l.Get(i).Message(), "expression_string"), "expression")
	}
	return out
}

// which is the name of the field set in m's oneof, or "".
func which(m protoreflect.Message, oneof string) string {
	if m == nil {
		return ""
	}
	od := m.Descriptor().Oneofs().ByName(protoreflect.Name(oneof))
	if od == nil {
		panic(fmt.Sprintf("%s has no oneof %s", m.Descriptor().FullName(), oneof))
	}
	fd := m.WhichOneof(od)
	if fd == nil {
		return ""
	}
	return string(fd.Name())
}

// protoKindFields are the DataType fields of the simple kinds the fake
// answers.
var protoKindFields = map[sparkmerge.Kind]string{
	sparkmerge.KindBoolean: "boolean", sparkmerge.KindInt: "integer", sparkmerge.KindLong: "long",
	sparkmerge.KindDouble: "double", sparkmerge.KindString: "string", sparkmerge.KindDate: "date",
	sparkmerge.KindTimestamp: "timestamp", sparkmerge.KindBinary: "binary",
}

// protoSchema is a DDL schema as AnalyzePlan returns it: a struct
// DataType.
func protoSchema(ddl string) (protoreflect.Message, error) {
	schema, err := sparkmerge.ParseSchema(ddl)
	if err != nil {
		return nil, err
	}
	dt := newProto("DataType")
	st := pmut(dt, "struct")
	for _, fl := range schema.Fields {
		sf := newProto("DataType.StructField")
		pset(sf, "name", fl.Name)
		sf.Set(field(sf, "nullable"), protoreflect.ValueOfBool(fl.Nullable))
		ft := newProto("DataType")
		switch name, ok := protoKindFields[fl.Type.Kind]; {
		case fl.Type.Kind == sparkmerge.KindDecimal:
			d := pmut(ft, "decimal")
			d.Set(field(d, "precision"), protoreflect.ValueOfInt32(int32(fl.Type.Precision)))
			d.Set(field(d, "scale"), protoreflect.ValueOfInt32(int32(fl.Type.Scale)))
		case ok:
			pmut(ft, name)
		default:
			return nil, fmt.Errorf("the fake has no DataType for %s", fl.Type)
		}
		sf.Set(field(sf, "data_type"), protoreflect.ValueOfMessage(ft))
		st.Mutable(field(st, "fields")).List().Append(protoreflect.ValueOfMessage(sf))
	}
	return dt, nil
}

// arrowBatch encodes rows as one Arrow record in the IPC stream format,
// each column typed by its first value: string, int64 or []byte.
func arrowBatch(cols []string, rows [][]any) ([]byte, error) {
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(cols))
	builders := make([]array.Builder, len(cols))
	for j, name := range cols {
		var typ arrow.DataType = arrow.BinaryTypes.String
		for _, row := range rows {
			switch row[j].(type) {
			case int64:
				typ = arrow.PrimitiveTypes.Int64
			case []byte:
				typ = arrow.BinaryTypes.Binary
			}
			if row[j] != nil {
				break
			}
		}
		fields[j] = arrow.Field{Name: name, Type: typ, Nullable: true}
		builders[j] = array.NewBuilder(mem, typ)
		defer builders[j].Release()
	}
	for _, row := range rows {
		for j, v := range row {
			switch b := builders[j].(type) {
			case *array.StringBuilder:
				if s, ok := v.(string); ok {
					b.Append(s)
					continue
				}
			case *array.Int64Builder:
				if n, ok := v.(int64); ok {
					b.Append(n)
					continue
				}
			case *array.BinaryBuilder:
				if bs, ok := v.([]byte); ok {
					b.Append(bs)
					continue
				}
			}
			if v != nil {
				return nil, fmt.Errorf("column %s: value %v (%T) of another type", cols[j], v, v)
			}
			builders[j].AppendNull()
		}
	}
	arrays := make([]arrow.Array, len(cols))
	for j, b := range builders {
		arrays[j] = b.NewArray()
		defer arrays[j].Release()
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, arrays, int64(len(rows)))
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// failOn makes the executions match picks fail with a Spark error of
// class.
func (f *sparkFake) failOn(class string, match func(c sparkCall) bool) {
	f.hook = func(_ context.Context, c sparkCall) (sparkReply, bool) {
		return sparkReply{err: sparkErrorOf(class, "fake failure")}, match(c)
	}
}

// setting is the session's value of setting k.
func (f *sparkFake) setting(k string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.settings[k]
}

// wantSparkError fails the test unless err is a Spark error of class.
func wantSparkError(t *testing.T, err error, class string) {
	t.Helper()
	var se *SparkError
	if !errors.As(err, &se) || se.ErrorClass != class {
		t.Fatalf("err = %v, want a Spark error of class %s", err, class)
	}
}

// wantVerified fails the test unless res is a verified merge of rows
// rows.
func wantVerified(t *testing.T, res *Result, rows int64) {
	t.Helper()
	if !res.Verified || res.RowsWritten != rows {
		t.Errorf("verified %v, %d rows written; want verified, %d", res.Verified, res.RowsWritten, rows)
	}
}

// TestSparkFakeAnswersOnlyWhatItWasGiven: a query the fake cannot
// evaluate fails, naming it, so that a test cannot pass on rows nobody
// chose.
func TestSparkFakeAnswersOnlyWhatItWasGiven(t *testing.T) {
	c, _ := sparkFakeClient(t)
	_, err := c.ReadTarget(context.Background(), Job{Target: Target{Path: "/lake/out"}}, 3)
	wantSparkError(t, err, "FAKE_NO_ANSWER")
	if !strings.Contains(err.Error(), "no answer for execute limit") {
		t.Errorf("error %q does not name the call", err)
	}
}
