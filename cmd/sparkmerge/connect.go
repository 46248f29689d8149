package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	tclog "github.com/testcontainers/testcontainers-go/log"
	"golang.org/x/oauth2"

	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/spark"
)

const defaultRemote = "sc://localhost:15002"

// useFileRemote takes the job file's remote unless --remote or --local
// was given.
func (g *globalOptions) useFileRemote(jf *jobFile) {
	if g.remote == "" && jf.Remote != "" && !g.local {
		g.remote = jf.Remote
	}
}

// connect opens a session to the Spark Connect server the flags and the
// environment name, or starts a local container when --local is set. The
// returned stop function closes the session and stops what was started.
func (g *globalOptions) connect(ctx context.Context, stderr io.Writer, job *spark.Job) (*spark.Client, func(), error) {
	remote, err := g.remoteAddress()
	if err != nil {
		return nil, nil, err
	}
	conf, err := parseKeyValues("conf", g.conf, "spark.sql.caseSensitive=true") // before starting a container
	if err != nil {
		return nil, nil, err
	}
	stopServer := func() {}
	if g.local {
		if g.remote != "" {
			return nil, nil, usagef("--local starts its own Spark: do not combine it with --remote")
		}
		server, err := g.startLocal(ctx, stderr, job)
		if err != nil {
			return nil, nil, err
		}
		remote = server.Remote()
		stopServer = func() {
			if err := server.Stop(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintf(stderr, "sparkmerge: stop local Spark: %v\n", err)
			}
		}
	}
	opts, err := g.connectOptions(remote, conf)
	if err != nil {
		stopServer()
		return nil, nil, err
	}
	client, err := spark.Connect(ctx, remote, opts)
	if err != nil {
		stopServer()
		if errors.Is(err, spark.ErrInvalidRemote) {
			return nil, nil, &usageError{fmt.Errorf("--remote: %w", err)}
		}
		return nil, nil, err
	}
	return client, func() {
		if ctx.Err() != nil {
			// Interrupted: the Spark job we started would run on.
			ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if err := client.Interrupt(ictx); err != nil {
				fmt.Fprintf(stderr, "sparkmerge: stop the Spark job: %v\n", err)
			}
			cancel()
		}
		client.Close()
		stopServer()
	}, nil
}

// remoteAddress is the connection string: --remote, else the job file's,
// else $SPARK_REMOTE, else the default, checked.
func (g *globalOptions) remoteAddress() (string, error) {
	remote := g.remote
	if remote == "" {
		remote = g.getenv("SPARK_REMOTE")
	}
	if remote == "" {
		remote = defaultRemote
	}
	if _, err := spark.ParseRemote(remote); err != nil {
		return "", &usageError{fmt.Errorf("--remote: %w", err)}
	}
	return remote, nil
}

// connectOptions are the options of a connection to remote: the session
// settings conf, the keep-alive, the token source and the environment
// (PySpark's variables, read by the library through g.getenv).
func (g *globalOptions) connectOptions(remote string, conf map[string]string) (spark.ConnectOptions, error) {
	tokens, err := g.tokenSource(remote)
	if err != nil {
		return spark.ConnectOptions{}, err
	}
	return spark.ConnectOptions{
		UserAgent: "sparkmerge/" + readBuildInfo().Version, Conf: conf, KeepAlive: g.keepAlive,
		TokenSource: tokens, Getenv: g.getenv, SessionPool: g.sessionPool(),
	}, nil
}

// sessionPool is where runs keep their Spark sessions for the next run on
// the same server (see spark.ConnectOptions.SessionPool):
// $SPARKMERGE_SESSION_POOL, else sparkmerge/sessions in the user's cache
// directory; none with --new-session, with $SPARKMERGE_SESSION_POOL=off,
// or with --local (whose server stops with the run).
func (g *globalOptions) sessionPool() string {
	dir := g.getenv("SPARKMERGE_SESSION_POOL")
	if g.newSession || g.local || dir == "off" {
		return ""
	}
	if dir != "" {
		return dir
	}
	return userCacheDir(g.getenv, "sparkmerge", "sessions")
}

// userCacheDir is os.UserCacheDir joined with elem, read through getenv
// ("" without $HOME): $XDG_CACHE_HOME, else ~/Library/Caches on macOS and
// ~/.cache elsewhere.
func userCacheDir(getenv func(string) string, elem ...string) string {
	dir := getenv("XDG_CACHE_HOME")
	if home := getenv("HOME"); dir == "" && home != "" {
		dir = filepath.Join(home, ".cache")
		if runtime.GOOS == "darwin" {
			dir = filepath.Join(home, "Library", "Caches")
		}
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}

// tokenSource is where the access tokens of a connection without token=
// come from, when anywhere: --token-command (or $SPARKMERGE_TOKEN_COMMAND),
// else, for a Databricks host only (see databricksHost), a Databricks
// service principal's OAuth credentials ($DATABRICKS_CLIENT_ID and
// $DATABRICKS_CLIENT_SECRET, exchanged at $DATABRICKS_HOST, by default the
// server's host), as Databricks' own tools read them. Either one refreshes
// tokens, which expire within the hour, for merges that run longer.
func (g *globalOptions) tokenSource(remote string) (oauth2.TokenSource, error) {
	command := g.tokenCommand
	if command == "" {
		command = g.getenv("SPARKMERGE_TOKEN_COMMAND")
	}
	if g.local {
		// The local container asks for no token: credentials meant for a
		// cluster, in the environment, must not stop --local.
		return nil, nil
	}
	r, err := spark.ParseRemote(remote)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--remote: %w", err)}
	}
	id, secret := g.getenv("DATABRICKS_CLIENT_ID"), g.getenv("DATABRICKS_CLIENT_SECRET")
	databricks := id != "" && secret != "" && databricksHost(r, g.getenv("DATABRICKS_HOST"))
	if command == "" && !databricks {
		return nil, nil
	}
	if r.Token() != "" {
		if command != "" {
			return nil, usagef("the connection string has token= and a token command is set: give one of them")
		}
		return nil, nil // a token given outright wins over credentials in the environment
	}
	if command != "" {
		// Tokens without an expiry are taken to last as long as OAuth
		// access tokens usually do.
		return spark.CommandTokenSource(command, time.Hour), nil
	}
	host := g.getenv("DATABRICKS_HOST")
	if host == "" {
		host = r.Host
	}
	return spark.ClientCredentials(spark.DatabricksTokenURL(host), id, secret, "all-apis"), nil
}

// databricksHosts are the domains of Databricks workspaces (AWS, Azure,
// GCP, and their government and China clouds).
var databricksHosts = []string{".cloud.databricks.com", ".gcp.databricks.com", ".azuredatabricks.net", ".databricks.azure.cn", ".databricks.azure.us", ".cloud.databricks.us", ".cloud.databricks.mil"}

// databricksHost reports whether r is a Databricks workspace: its host is
// in a Databricks domain or is $DATABRICKS_HOST's, or it names a cluster
// (x-databricks-cluster-id). Databricks credentials in the environment
// apply to such a server only: sent anywhere else they would fail an
// OAuth exchange for a server that wants none (sc://localhost).
func databricksHost(r spark.Remote, envHost string) bool {
	host := strings.ToLower(r.Host)
	for _, d := range databricksHosts {
		if strings.HasSuffix(host, d) {
			return true
		}
	}
	if envHost != "" {
		h := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(envHost), "https://"), "http://")
		h, _, _ = strings.Cut(h, "/")
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		}
		if h == host {
			return true
		}
	}
	_, cluster := r.Headers["x-databricks-cluster-id"]
	return cluster
}

// startLocal runs the project's Spark Connect image for this command, with
// every local input and output directory mounted at the same absolute path
// so that paths mean the same inside the container.
func (g *globalOptions) startLocal(ctx context.Context, stderr io.Writer, job *spark.Job) (*localspark.Server, error) {
	// The reaper image cannot be pulled on every machine; the container is
	// stopped by this process instead.
	if g.getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	// SPARKMERGE_SPARK_IMAGE names any image; else SPARK_VERSION picks the
	// project's build of that version (SPARK_VERSION=3.5.7 make image).
	image := g.getenv("SPARKMERGE_SPARK_IMAGE")
	if image == "" {
		image = localspark.ImageFor(g.getenv("SPARK_VERSION"))
	}
	var mounts []string
	addDir := func(p string) {
		if p == "" || strings.Contains(p, "://") {
			return
		}
		abs, err := filepath.Abs(strings.TrimPrefix(p, "file:"))
		if err != nil {
			return
		}
		// Mount the nearest existing ancestor: outputs may not exist yet.
		for dir := abs; ; dir = filepath.Dir(dir) {
			if info, err := os.Stat(dir); err == nil {
				if !info.IsDir() {
					dir = filepath.Dir(dir)
				}
				mounts = append(mounts, dir)
				return
			}
			if dir == filepath.Dir(dir) {
				return
			}
		}
	}
	for _, s := range job.Sources {
		for _, p := range s.Paths {
			if spark.IsGlob(p) {
				p = filepath.Dir(p)
			}
			addDir(p)
		}
	}
	if job.Target.Path != "" {
		addDir(filepath.Dir(strings.TrimRight(job.Target.Path, "/")))
	}
	fmt.Fprintf(stderr, "starting local Spark (%s)...\n", image)
	// testcontainers prints a banner about the Docker engine on its first
	// call; the user asked for a merge, and errors are returned anyway.
	tclog.SetDefault(tclog.NewNoopLogger())
	return localspark.Start(ctx, localspark.Options{Image: image, Mounts: dedupeDirs(mounts)})
}

// dedupeDirs drops directories already covered by an ancestor in the list.
func dedupeDirs(dirs []string) []string {
	sort.Strings(dirs)
	var out []string
	for _, d := range dirs {
		if len(out) > 0 {
			last := out[len(out)-1]
			if d == last || strings.HasPrefix(d, last+string(filepath.Separator)) {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}
