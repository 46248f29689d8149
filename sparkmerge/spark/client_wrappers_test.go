package spark

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge"
)

// A client joins the spark-connect-go session it is given, names itself,
// sets the session settings it is given, and sends the session's id and
// user with every call (the server keys a session by both).
func TestConnectSession(t *testing.T) {
	f := startSparkFake(t)
	ctx := context.Background()
	upstream, err := sql.NewSessionBuilder().Remote("sc://" + f.addr + "/;user_id=ann").Build(ctx) // connects lazily
	if err != nil {
		t.Fatal(err)
	}
	id, err := SessionIDOf(upstream)
	if err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, ConnectOptions{Session: upstream, UserAgent: "merger", Conf: map[string]string{"spark.sql.caseSensitive": "true"}})
	if c.SessionID() != id {
		t.Errorf("SessionID() = %q, want the spark-connect-go session's %q", c.SessionID(), id)
	}
	if got, want := c.Remote(), "sc://"+f.addr+"/;user_id=ann;session_id="+id; got != want {
		t.Errorf("Remote() = %q, want %q", got, want)
	}
	if c.SparkVersion() != "4.0.1" {
		t.Errorf("SparkVersion() = %q", c.SparkVersion())
	}
	if got := f.setting("spark.sql.caseSensitive"); got != "true" {
		t.Errorf("spark.sql.caseSensitive = %q after connecting, want true", got)
	}
	if err := c.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	for _, call := range f.recorded("") {
		if got := pstr(call.req, "session_id"); got != id {
			t.Errorf("%s sent session %q, want %q", call.method, got, id)
		}
		if got := pstr(call.req.Get(field(call.req, "user_context")).Message(), "user_id"); got != "ann" {
			t.Errorf("%s sent user %q, want the spark-connect-go session's ann", call.method, got)
		}
		if got := pstr(call.req, "client_type"); !strings.HasPrefix(got, "merger ") {
			t.Errorf("%s sent client type %q, want merger first", call.method, got)
		}
	}
}

// Close releases a session the client started, so that the server drops
// it now rather than after an idle hour, and leaves a session it joined or
// whose id it gave out (another client may run on it).
func TestCloseReleasesOnlyASessionItStarted(t *testing.T) {
	f := startSparkFake(t)
	ctx := context.Background()
	env := func(k string) string { return map[string]string{"USER": "ann"}[k] }
	dial := func(opts ConnectOptions) *Client {
		t.Helper()
		opts.Getenv = env
		c, err := Connect(ctx, "sc://"+f.addr, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	started := dial(ConnectOptions{})
	startedID := started.sess.SessionID() // not SessionID(), which gives it out
	if err := started.Close(); err != nil {
		t.Fatal(err)
	}
	joined := dial(ConnectOptions{SessionID: uuid.NewString()})
	joined.Close()
	viaURL, err := Connect(ctx, "sc://"+f.addr+"/;session_id="+uuid.NewString(), ConnectOptions{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	viaURL.Close()
	shared := dial(ConnectOptions{})
	_ = shared.SessionID()
	shared.Close()

	var released []string
	for _, call := range f.recorded("ReleaseSession") {
		released = append(released, pstr(call.req, "session_id"))
		if got := pstr(pmsg(call.req, "user_context"), "user_id"); got != "ann" {
			t.Errorf("ReleaseSession with user id %q, want the session's (ann): the server keys sessions by user and id", got)
		}
	}
	if !slices.Equal(released, []string{startedID}) {
		t.Errorf("released sessions %v, want only the started one %s", released, startedID)
	}
}

// Connect fails, and says so, when the server refuses a setting.
func TestConnectRefusedSetting(t *testing.T) {
	f := startSparkFake(t)
	f.static["spark.sql.warehouse.dir"] = true
	_, err := Connect(context.Background(), "sc://"+f.addr, ConnectOptions{Conf: map[string]string{"spark.sql.warehouse.dir": "/w"}})
	wantSparkError(t, err, "CANNOT_MODIFY_CONFIG")
	if !strings.HasPrefix(err.Error(), "set session settings: ") {
		t.Errorf("error %q does not say which step failed", err)
	}
}

// Interrupt asks the server to stop every operation of the session.
func TestInterrupt(t *testing.T) {
	c, f := sparkFakeClient(t)
	if err := c.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	in := f.recorded("Interrupt")
	if len(in) != 1 {
		t.Fatalf("%d interrupts, want 1", len(in))
	}
	fd := field(in[0].req, "interrupt_type")
	if got := fd.Enum().Values().ByNumber(in[0].req.Get(fd).Enum()).Name(); got != "INTERRUPT_TYPE_ALL" {
		t.Errorf("interrupt type %s, want INTERRUPT_TYPE_ALL", got)
	}
}

// QuerySchema is Spark's analysis of a query, which it does not run.
func TestQuerySchema(t *testing.T) {
	c, f := sparkFakeClient(t)
	const q = "SELECT id, amount FROM db.t"
	f.schemas[q] = "id BIGINT, amount DECIMAL(12,4)"
	got, err := c.QuerySchema(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sparkmerge.ParseSchema("id BIGINT, amount DECIMAL(12,4)")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	if n := len(f.recorded("ExecutePlan")); n != 0 {
		t.Errorf("the query ran (%d executions)", n)
	}
	_, err = c.QuerySchema(context.Background(), "SELECT nothing")
	if errorClass(err) != "FAKE_NO_ANSWER" {
		t.Errorf("a query Spark refuses: err = %v, want its Spark error", err)
	}
}

// Connection strings are parsed as PySpark parses them, and their tokens
// never printed.
func TestRemoteStrings(t *testing.T) {
	r, err := ParseRemote("sc://spark.example.com:443/;token=s3cr3t;use_ssl=true;user_id=ann")
	if err != nil {
		t.Fatal(err)
	}
	if r.Host != "spark.example.com" || r.Port != 443 || r.Token() != "s3cr3t" || r.UserID != "ann" {
		t.Errorf("parsed %s: host %q port %d user %q", r, r.Host, r.Port, r.UserID)
	}
	if _, err := ParseRemote("http://spark:15002"); !errors.Is(err, ErrInvalidRemote) {
		t.Errorf("a URL that is not sc://: err = %v, want ErrInvalidRemote", err)
	}
	for in, want := range map[string]string{
		"sc://h:1/;token=s3cr3t;user_id=ann": "sc://h:1/;token=REDACTED;user_id=ann",
		"sc://h:1":                           "sc://h:1",
		"not a remote":                       "<invalid connection string>",
	} {
		if got := RedactRemote(in); got != want {
			t.Errorf("RedactRemote(%q) = %q, want %q", in, got, want)
		}
	}
}

// The token sources for OAuth: a service principal's credentials
// exchanged at the token URL, and a command's output.
func TestTokenSources(t *testing.T) {
	if got := DatabricksTokenURL("adb-1.2.azuredatabricks.net/"); got != "https://adb-1.2.azuredatabricks.net/oidc/v1/token" {
		t.Errorf("DatabricksTokenURL = %q", got)
	}
	var form, user string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		form = r.PostForm.Encode()
		user, _, _ = r.BasicAuth()
		if user == "" {
			user = r.PostForm.Get("client_id")
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"tok-1","token_type":"Bearer","expires_in":3600}`))
	}))
	defer srv.Close()
	tok, err := ClientCredentials(srv.URL, "sp-id", "sp-secret", "all-apis").Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "tok-1" || user != "sp-id" || !strings.Contains(form, "grant_type=client_credentials") || !strings.Contains(form, "scope=all-apis") {
		t.Errorf("token %q; the server saw client %q and form %q", tok.AccessToken, user, form)
	}

	before := time.Now()
	tok, err = CommandTokenSource("echo tok-2", time.Hour).Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "tok-2" || tok.Expiry.Before(before.Add(time.Hour)) {
		t.Errorf("command token %q expiring %s, want tok-2 in an hour", tok.AccessToken, tok.Expiry)
	}
}

// Settings are set all or nothing: the server sets a call's pairs in
// order and stops at the first it refuses, keeping those before it, so
// the client puts back what it changed. At Connect (ConnectOptions.Conf,
// on a session shared with others) a setting the session had comes back
// to its value and one it had not is unset; a merge whose optional
// settings the server refuses runs without them and leaves the session's
// settings as they were.
func TestRefusedSettingsChangeNothing(t *testing.T) {
	t.Run("connect", func(t *testing.T) {
		f := startSparkFake(t)
		f.settings["spark.a"] = "0"
		f.static["spark.sql.warehouse.dir"] = true
		_, err := Connect(context.Background(), "sc://"+f.addr, ConnectOptions{Conf: map[string]string{
			"spark.a": "1", "spark.b": "1", "spark.sql.warehouse.dir": "/w", "spark.z": "1",
		}})
		wantSparkError(t, err, "CANNOT_MODIFY_CONFIG")
		if diff := cmp.Diff(map[string]string{"spark.a": "0"}, f.settings); diff != "" {
			t.Errorf("settings after the refusal (-want +got):\n%s", diff)
		}
	})
	t.Run("optional settings", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		f.settings[parallelListingKey] = "32"
		f.static[parallelListingKey] = true // after wholeStageKey, which the merge wants too
		before := maps.Clone(f.settings)
		if _, err := c.Merge(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		var tried bool
		for _, call := range f.recorded("set") {
			for _, kv := range pairsOf(call) {
				tried = tried || kv[0] == parallelListingKey
			}
		}
		if !tried {
			t.Fatalf("the merge never asked for %s: the test's merge wants other settings", parallelListingKey)
		}
		if diff := cmp.Diff(before, f.settings); diff != "" {
			t.Errorf("settings after the merge (-want +got):\n%s", diff)
		}
	})
}
