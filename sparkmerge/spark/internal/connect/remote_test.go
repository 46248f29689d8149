package connect

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseRemote(t *testing.T) {
	const sid = "6a1b2c3d-1111-4222-8333-444455556666"
	tests := []struct {
		in         string
		want       Remote
		wantToken  string
		wantSecure bool
		redacted   string
	}{
		{
			in:       "sc://localhost",
			want:     Remote{Host: "localhost", Port: 15002},
			redacted: "sc://localhost:15002",
		},
		{
			in:       "sc://spark.example.com:443/",
			want:     Remote{Host: "spark.example.com", Port: 443},
			redacted: "sc://spark.example.com:443",
		},
		{
			in:         "sc://h:443/;token=abc+/de==;use_ssl=true;user_id=ann;x-databricks-cluster-id=0123-abc",
			want:       Remote{Host: "h", Port: 443, UseSSL: true, UserID: "ann", Headers: map[string]string{"x-databricks-cluster-id": "0123-abc"}},
			wantToken:  "abc+/de==",
			wantSecure: true,
			redacted:   "sc://h:443/;token=REDACTED;use_ssl=true;user_id=ann;x-databricks-cluster-id=0123-abc",
		},
		{
			// A token implies TLS (PySpark), even with use_ssl=false, except to localhost.
			in:         "sc://h/;token=t0k;use_ssl=false",
			want:       Remote{Host: "h", Port: 15002},
			wantToken:  "t0k",
			wantSecure: true,
			redacted:   "sc://h:15002/;token=REDACTED",
		},
		{
			in:        "sc://localhost:15002/;token=t0k",
			want:      Remote{Host: "localhost", Port: 15002},
			wantToken: "t0k",
			redacted:  "sc://localhost:15002/;token=REDACTED",
		},
		{
			in:         "sc://h/;use_ssl=TRUE",
			want:       Remote{Host: "h", Port: 15002, UseSSL: true},
			wantSecure: true,
			redacted:   "sc://h:15002/;use_ssl=true",
		},
		{
			// Upper-case keys are lower-cased (gRPC metadata keys must be), values kept.
			in:       "sc://h/;X-Databricks-Cluster-Id=AbC;User_ID=Bob",
			want:     Remote{Host: "h", Port: 15002, UserID: "Bob", Headers: map[string]string{"x-databricks-cluster-id": "AbC"}},
			redacted: "sc://h:15002/;user_id=Bob;x-databricks-cluster-id=AbC",
		},
		{
			in:       "sc://h/;session_id=" + sid + ";user_agent=my%20app;;",
			want:     Remote{Host: "h", Port: 15002, SessionID: sid, UserAgent: "my app"},
			redacted: "sc://h:15002/;user_agent=my%20app;session_id=" + sid,
		},
		{
			in:       "sc://[::1]:15003",
			want:     Remote{Host: "::1", Port: 15003},
			redacted: "sc://[::1]:15003",
		},
		{
			in:       "sc://[::1]",
			want:     Remote{Host: "::1", Port: 15002},
			redacted: "sc://[::1]:15002",
		},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRemote(tt.in)
			if err != nil {
				t.Fatalf("ParseRemote: %v", err)
			}
			// The token is compared through Token(): Remote hides it.
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Remote{})); diff != "" {
				t.Errorf("ParseRemote (-want +got):\n%s", diff)
			}
			if got.Token() != tt.wantToken {
				t.Errorf("Token() = %q, want %q", got.Token(), tt.wantToken)
			}
			if got.Secure() != tt.wantSecure {
				t.Errorf("Secure() = %v, want %v", got.Secure(), tt.wantSecure)
			}
			if got.Redacted() != tt.redacted {
				t.Errorf("Redacted() = %q, want %q", got.Redacted(), tt.redacted)
			}
			// The redacted form parses back to the same remote, less the
			// token, which reads back as REDACTED.
			back, err := ParseRemote(got.Redacted())
			if err != nil {
				t.Fatalf("ParseRemote(Redacted()): %v", err)
			}
			if diff := cmp.Diff(got, back, cmpopts.IgnoreUnexported(Remote{})); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			wantBackToken := ""
			if tt.wantToken != "" {
				wantBackToken = "REDACTED"
			}
			if back.Token() != wantBackToken {
				t.Errorf("round trip Token() = %q, want %q", back.Token(), wantBackToken)
			}
		})
	}
}

func TestParseRemoteErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"localhost:15002",
		"http://localhost:15002",
		"sc://",
		"sc://:15002",
		"sc://h:0",
		"sc://h:65536",
		"sc://h:port",
		"sc://::1:15002",
		"sc://h/path",
		"sc://h/;token",
		"sc://h/;=v",
		"sc://h/;use_ssl=yes",
		"sc://h/;session_id=not-a-uuid",
		"sc://h/;bad key=v",
		"sc://h/;grpc-timeout=1",
		"sc://user@h",
		"sc://h/;a=b?x=y",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := ParseRemote(in)
			if !errors.Is(err, ErrInvalidRemote) {
				t.Fatalf("ParseRemote(%q) error = %v, want ErrInvalidRemote", in, err)
			}
		})
	}
}

func TestRemoteNeverShowsToken(t *testing.T) {
	const secret = "s3cr3t-T0KEN=="
	for _, in := range []string{
		"sc://h/;token=" + secret,
		"sc://h/;token=" + secret + ";use_ssl=maybe",
		"sc://h/;token=" + secret + ";session_id=x",
		"sc://h:99999/;token=" + secret,
		"sc://h/;x-api-key=" + secret,
		"sc://h/;authorization=Bearer%20" + secret,
		"sc://h/;token=" + secret + ";Bad Key=1",
	} {
		r, err := ParseRemote(in)
		if err != nil {
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("ParseRemote(%q) error shows the token: %v", in, err)
			}
			continue
		}
		printed := []string{r.String(), r.Redacted(), fmt.Sprint(r), fmt.Sprintf("%v %+v %#v %s", r, r, r, r)}
		if strings.Contains(in, ";token=") {
			// fmt cannot call String on an unexported field; the token
			// still does not show (header values do: they are exported).
			holder := struct{ remote Remote }{r}
			printed = append(printed, fmt.Sprintf("%v %+v", holder, holder))
		}
		for _, s := range printed {
			if strings.Contains(s, "s3cr3t") {
				t.Errorf("printed remote shows the token: %s", s)
			}
		}
		if strings.Contains(in, ";token=") && r.Token() != secret {
			t.Errorf("Token() = %q, want %q", r.Token(), secret)
		}
	}
}
