package bench

// The sessions benchmark: what a Jolokia read costs the broker when the client keeps the
// console's session (what internal/artemis does: one login, then each request carries the
// session cookie and Basic authentication) against Basic authentication alone on every
// request (a JAAS login per request), for a user whose password is stored in plain text and one
// whose password is stored hashed (ENC(...), as `artemis create` writes the admin's).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// Session modes.
const (
	SessionReused = "session"
	SessionBasic  = "basic"
)

// SessionsConfig is one run of the sessions benchmark. Zero values take the defaults.
type SessionsConfig struct {
	Env *testenv.Env
	// Brokers are the environment's brokers measured (default source and legacy).
	Brokers []string
	// Requests is how many reads each run times (default 1,000), after warmUpRequests untimed.
	Requests int
	// Reps is how many rounds run, every user and mode once per round (default 3).
	Reps int
	Log  io.Writer
	// RepoDir is the checkout, for the machine's description.
	RepoDir string
}

// warmUpRequests are read before each timed run: the login, the connection and the broker's
// JIT are not what is measured.
const warmUpRequests = 50

// SessionsResults are what one sessions benchmark measured: bench/results-sessions.json.
type SessionsResults struct {
	Machine  Machine       `json:"machine"`
	Started  time.Time     `json:"started"`
	Seconds  float64       `json:"seconds"`
	Complete bool          `json:"complete"`
	Error    string        `json:"error,omitempty"`
	Requests int           `json:"requests"`
	Reps     int           `json:"reps"`
	Runs     []SessionsRun `json:"runs"`
}

// SessionsRun is Requests reads of one broker by one user in one mode.
type SessionsRun struct {
	Round   int    `json:"round"`
	Broker  string `json:"broker"`
	Version string `json:"version"`
	User    string `json:"user"`
	// Password is how the broker stores the user's password: plain or hashed.
	Password string `json:"password"`
	Mode     string `json:"mode"`
	Requests int    `json:"requests"`
	// LoggedIn says whether the console's login gave a session (mode session only).
	LoggedIn    bool    `json:"logged_in,omitempty"`
	WallSeconds float64 `json:"wall_s"`
	BrokerCPU   float64 `json:"broker_cpu_s"`
	Error       string  `json:"error,omitempty"`
}

// MicrosPerRequest is the broker's CPU per request, in microseconds.
func (r SessionsRun) MicrosPerRequest() float64 {
	if r.Requests <= 0 {
		return 0
	}
	return r.BrokerCPU * 1e6 / float64(r.Requests)
}

// sessionCase is one user in one mode.
type sessionCase struct {
	user, password, stored, mode string
}

// RunSessions measures every broker, user and mode, in rounds whose order rotates.
func RunSessions(ctx context.Context, cfg SessionsConfig) (*SessionsResults, error) {
	if len(cfg.Brokers) == 0 {
		cfg.Brokers = []string{"source", "legacy"}
	}
	if cfg.Requests == 0 {
		cfg.Requests = 1000
	}
	if cfg.Reps == 0 {
		cfg.Reps = 3
	}
	env := cfg.Env
	res := &SessionsResults{Started: time.Now().UTC(), Requests: cfg.Requests, Reps: cfg.Reps, Machine: ReadMachine(ctx, cfg.RepoDir)}
	start := time.Now()
	cases := []sessionCase{
		{env.TransferUser, env.TransferPassword, "plain", SessionReused}, {env.TransferUser, env.TransferPassword, "plain", SessionBasic},
		{env.AdminUser, env.AdminPassword, "hashed", SessionReused}, {env.AdminUser, env.AdminPassword, "hashed", SessionBasic},
	}
	var err error
	for _, name := range cfg.Brokers {
		br, ok := env.Brokers[name]
		if !ok {
			err = fmt.Errorf("the test environment has no broker %q", name)
			break
		}
		pid, perr := brokerPID(env.StateDir, name)
		if perr != nil {
			err = perr
			break
		}
		for r, round := range rotatedRounds(cases, cfg.Reps) {
			for _, c := range round {
				run := measureSession(ctx, br, name, pid, c, cfg.Requests)
				run.Round = r + 1
				if cfg.Log != nil {
					fmt.Fprintf(cfg.Log, "bench: sessions %s %s: %s user (%s password), %s: %d reads in %.2f s, broker CPU %.0f µs/read%s\n",
						name, br.Version, c.user, c.stored, c.mode, run.Requests, run.WallSeconds, run.MicrosPerRequest(), errorSuffix(run.Error))
				}
				res.Runs = append(res.Runs, run)
				if err = ctx.Err(); err != nil {
					break
				}
			}
		}
		if err != nil {
			break
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.Machine.LoadAtEnd = LoadAverage()
	if err != nil {
		res.Error = err.Error()
		return res, err
	}
	res.Complete = true
	return res, nil
}

func errorSuffix(e string) string {
	if e == "" {
		return ""
	}
	return "; FAILED: " + e
}

// measureSession times n reads of the broker's version after warmUpRequests untimed ones.
func measureSession(ctx context.Context, br testenv.Broker, name string, pid int, c sessionCase, n int) SessionsRun {
	run := SessionsRun{Broker: name, Version: br.Version, User: c.user, Password: c.stored, Mode: c.mode}
	r := &jolokiaReader{url: br.ManagementURL, user: c.user, password: c.password, broker: name,
		http: &http.Client{Timeout: 30 * time.Second}}
	if c.mode == SessionReused {
		jar, _ := cookiejar.New(nil) // never fails without options
		r.http.Jar = jar
		run.LoggedIn = r.login(ctx)
	}
	for range warmUpRequests {
		if err := r.read(ctx); err != nil {
			run.Error = err.Error()
			return run
		}
	}
	cpu0, err := ProcessCPU(pid)
	if err != nil {
		run.Error = err.Error()
		return run
	}
	start := time.Now()
	for range n {
		if err := r.read(ctx); err != nil {
			run.Error = err.Error()
			break
		}
		run.Requests++
	}
	run.WallSeconds = time.Since(start).Seconds()
	cpu1, err := ProcessCPU(pid)
	if err != nil {
		run.Error = err.Error()
	}
	run.BrokerCPU = (cpu1 - cpu0).Seconds()
	return run
}

// jolokiaReader sends the one read each run repeats, as internal/artemis sends its requests:
// a POST with Basic authentication and the console's origin, and with the session cookie when
// its client has a jar and has logged in.
type jolokiaReader struct {
	url, user, password, broker string
	http                        *http.Client
}

func (r *jolokiaReader) origin() string {
	u, err := url.Parse(r.url)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// login is the console's login, as internal/artemis makes it; false when it gave no session.
func (r *jolokiaReader) login(ctx context.Context) bool {
	base, ok := strings.CutSuffix(strings.TrimRight(r.url, "/"), "/jolokia")
	if !ok {
		return false
	}
	body, _ := json.Marshal(map[string]string{"username": r.user, "password": r.password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/auth/login", bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", r.origin())
	resp, err := r.http.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// read reads the broker's Version attribute once.
func (r *jolokiaReader) read(ctx context.Context) error {
	body, _ := json.Marshal([]map[string]any{{"type": "read", "mbean": fmt.Sprintf("org.apache.activemq.artemis:broker=%q", r.broker), "attribute": "Version"}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(r.user, r.password)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", r.origin())
	resp, err := r.http.Do(req)
	if err != nil {
		return fmt.Errorf("reading the version of broker %s as %s: %w", r.broker, r.user, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading the version of broker %s as %s: HTTP %d", r.broker, r.user, resp.StatusCode)
	}
	var out []struct {
		Status int    `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 1 {
		return fmt.Errorf("reading the version of broker %s as %s: unexpected answer %.200s", r.broker, r.user, raw)
	}
	if out[0].Status != http.StatusOK {
		return fmt.Errorf("reading the version of broker %s as %s: status %d: %s", r.broker, r.user, out[0].Status, out[0].Error)
	}
	return nil
}

// SessionsSummary is one broker, user and mode over every round: medians of its good runs.
type SessionsSummary struct {
	Broker, Version, User, Password, Mode string
	Runs, OK                              int
	LoggedIn                              bool
	// Micros is the median broker CPU per request in microseconds; Wall the median run's wall time.
	Micros, Wall float64
}

// SummarizeSessions gives the medians of each broker, user and mode, in the order they first ran.
func SummarizeSessions(runs []SessionsRun) []SessionsSummary {
	var out []SessionsSummary
	index := map[string]int{}
	var micros, walls [][]float64
	for _, r := range runs {
		key := r.Broker + "\x00" + r.User + "\x00" + r.Mode
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, SessionsSummary{Broker: r.Broker, Version: r.Version, User: r.User, Password: r.Password, Mode: r.Mode})
			micros, walls = append(micros, nil), append(walls, nil)
		}
		out[i].Runs++
		if r.Error != "" || r.Requests == 0 {
			continue
		}
		out[i].OK++
		out[i].LoggedIn = out[i].LoggedIn || r.LoggedIn
		micros[i] = append(micros[i], r.MicrosPerRequest())
		walls[i] = append(walls[i], r.WallSeconds)
	}
	for i := range out {
		out[i].Micros, out[i].Wall = Median(micros[i]), Median(walls[i])
	}
	return out
}
