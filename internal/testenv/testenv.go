package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Env describes the running test environment, as written by `scripts/testenv.sh up`.
type Env struct {
	Script           string `json:"script"`
	StateDir         string `json:"state_dir"`
	ArtemisHome      string `json:"artemis_home"`
	AdminUser        string `json:"admin_user"`
	AdminPassword    string `json:"admin_password"`
	TransferUser     string `json:"transfer_user"`
	TransferPassword string `json:"transfer_password"`
	// ViewerUser is a reviewer: console login, read-only management (get*, is*, list*, count*,
	// browse*) and AMQP browse; a default plan, which only reads, passes as this user, and an
	// apply (or a plan with plan_sends_canaries) is refused.
	ViewerUser     string `json:"viewer_user"`
	ViewerPassword string `json:"viewer_password"`
	// LeastPrivilegeUsers maps each permission the transfer user holds (a management.xml method
	// pattern such as "moveMessages" or "count*", "console login", or a messaging permission such
	// as "send on studio.transfer.#") to a user that holds every other one but not it; all of them
	// log in with LeastPrivilegePassword.
	LeastPrivilegeUsers    map[string]string `json:"least_privilege_users"`
	LeastPrivilegePassword string            `json:"least_privilege_password"`
	TLSCAFile              string            `json:"tls_ca_file"`
	PostgresDSN            string            `json:"postgres_dsn"`
	Brokers                map[string]Broker `json:"brokers"`
	// OwnerSHA256 is the SHA-256 (hex) of the owner token the environment was started with;
	// the token itself is not written down, so that only who was given it can present it.
	OwnerSHA256 string `json:"owner_sha256"`
}

// Broker is one broker of the environment.
type Broker struct {
	Name        string `json:"-"`
	Version     string `json:"version"`
	InstanceDir string `json:"instance_dir"`
	AMQPURL     string `json:"amqp_url"`
	AMQPSURL    string `json:"amqps_url"`
	// AMQPNoDedupURL is an acceptor with amqpDuplicateDetection=false (target only).
	AMQPNoDedupURL string `json:"amqp_nodedup_url"`
	CoreURL        string `json:"core_url"`
	ManagementURL  string `json:"management_url"`
	// ManagementHTTPSURL is Jolokia over https, with a certificate from the environment's CA
	// (TLSCAFile); source and target only.
	ManagementHTTPSURL string `json:"management_https_url"`
}

// Environment variables that point tests at an environment and prove its ownership.
const (
	envFile     = "ARTEMIS_TESTENV_FILE"
	envDir      = "ARTEMIS_TESTENV_DIR"
	envRequired = "ARTEMIS_TESTENV_REQUIRED"
	envOwner    = "ARTEMIS_TESTENV_OWNER"
)

// ErrNotPointed is returned by Load when neither ARTEMIS_TESTENV_FILE nor ARTEMIS_TESTENV_DIR is
// set: tests never look for an environment at a default path.
var ErrNotPointed = errors.New("no test environment given: set " + envFile + " to its testenv.json or " + envDir +
	" to its state folder (`make test` starts one and sets it; `make testacc` uses a running one)")

// FilePath is the environment file the tests were pointed at, or "" when they were not.
func FilePath() string {
	if p := os.Getenv(envFile); p != "" {
		return p
	}
	if d := os.Getenv(envDir); d != "" {
		return filepath.Join(d, "testenv.json")
	}
	return ""
}

// Load reads the environment file the tests were pointed at.
func Load() (*Env, error) {
	path := FilePath()
	if path == "" {
		return nil, ErrNotPointed
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading test environment %s (start it with scripts/testenv.sh up): %w", path, err)
	}
	var env Env
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("parsing test environment %s: %w", path, err)
	}
	for name, b := range env.Brokers {
		b.Name = name
		env.Brokers[name] = b
	}
	return &env, nil
}

// Required reports whether a missing environment must fail tests rather than skip them.
func Required() bool { return os.Getenv(envRequired) == "1" }

// Require returns the environment, skipping the test when there is none and it is not required.
// When the test fails, the tail of every broker log is printed.
func Require(t testing.TB) *Env {
	t.Helper()
	env, err := Load()
	if err != nil {
		if Required() {
			t.Fatalf("real brokers required: %v", err)
		}
		t.Skipf("no real brokers: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			env.printLogs(t)
		}
	})
	return env
}

// Broker returns the named broker or fails the test.
func (e *Env) Broker(t testing.TB, name string) Broker {
	t.Helper()
	b, ok := e.Brokers[name]
	if !ok {
		t.Fatalf("test environment has no broker %q (cluster brokers need `scripts/testenv.sh up --cluster`)", name)
	}
	return b
}

// RequireOwned is Require for tests that kill, stop or start brokers: it also checks that the
// caller holds the environment's owner token (ARTEMIS_TESTENV_OWNER). Without it the test is
// skipped, or fails when ARTEMIS_TESTENV_REQUIRED=1, before it touches anything.
func RequireOwned(t testing.TB) *Env {
	t.Helper()
	env := Require(t)
	if err := env.Owned(); err != nil {
		if Required() {
			t.Fatalf("this test kills or restarts brokers: %v", err)
		}
		t.Skipf("this test kills or restarts brokers: %v", err)
	}
	return env
}

// ErrNotOwner is returned when a caller without the environment's owner token asks to kill, stop
// or start one of its brokers.
var ErrNotOwner = errors.New("not the owner of this test environment")

// Owned reports, as an error that says what to do, whether ARTEMIS_TESTENV_OWNER holds the
// token the environment was started with.
func (e *Env) Owned() error {
	if e.OwnerSHA256 == "" {
		return fmt.Errorf("%w: the environment in %s records no owner (it was started by an older scripts/testenv.sh), "+
			"so nobody may kill, stop or start its brokers; start a fresh one (make test does)", ErrNotOwner, e.StateDir)
	}
	token := os.Getenv(envOwner)
	if token == "" {
		return fmt.Errorf("%w: %s is not set; set it to the token the environment in %s was started with "+
			"(scripts/testenv.sh up printed it, or it was the %s given to up)", ErrNotOwner, envOwner, e.StateDir, envOwner)
	}
	if sum := sha256.Sum256([]byte(token)); hex.EncodeToString(sum[:]) != e.OwnerSHA256 {
		return fmt.Errorf("%w: %s does not match the token the environment in %s was started with; "+
			"another run owns it, so its brokers are left alone", ErrNotOwner, envOwner, e.StateDir)
	}
	return nil
}

// KillBroker sends SIGKILL to a broker, for fault tests. It refuses unless the caller owns the
// environment (Owned).
func (e *Env) KillBroker(name string) error { return e.runOwned("kill-broker", name) }

// StartBroker starts a stopped or killed broker and waits until it is active. It refuses unless
// the caller owns the environment (Owned).
func (e *Env) StartBroker(name string) error { return e.runOwned("start-broker", name) }

// StopBroker stops a broker gracefully. It refuses unless the caller owns the environment
// (Owned).
func (e *Env) StopBroker(name string) error { return e.runOwned("stop-broker", name) }

// StopPostgres stops the environment's PostgreSQL (a fast shutdown: open connections are cut),
// for fault tests. It refuses unless the caller owns the environment (Owned).
func (e *Env) StopPostgres() error { return e.runOwned("stop-postgres", "") }

// StartPostgres starts the environment's PostgreSQL again and waits until it accepts
// connections. It refuses unless the caller owns the environment (Owned).
func (e *Env) StartPostgres() error { return e.runOwned("start-postgres", "") }

// runOwned runs a script command that changes a broker's state. The script checks the token
// again, so a caller that skips this check is refused all the same.
func (e *Env) runOwned(command, broker string) error {
	if err := e.Owned(); err != nil {
		return fmt.Errorf("testenv %s %s: %w", command, broker, err)
	}
	if broker == "" {
		return e.run(command)
	}
	return e.run(command, broker)
}

func (e *Env) run(args ...string) error {
	// Bounded: a broker start waits at most the script's ready timeout (120 s by default).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{e.Script}, args...)...)
	cmd.Env = append(os.Environ(), envDir+"="+e.StateDir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("testenv %s: %w: %s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

func (e *Env) printLogs(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", e.Script, "logs")
	cmd.Env = append(os.Environ(), envDir+"="+e.StateDir, "TESTENV_LOG_LINES=40")
	out, _ := cmd.CombinedOutput()
	t.Logf("test environment logs:\n%s", out)
}

var nameCounter atomic.Uint64

// UniqueName returns a queue or address name no other test uses, so tests may share brokers.
func UniqueName(prefix string) string {
	return fmt.Sprintf("%s.%d.%d", prefix, time.Now().UnixNano()%1_000_000_000, nameCounter.Add(1))
}

// Produce puts n messages on a destination (queue://name, or address::queue) of a broker with
// Artemis's own CLI producer, a client other than ours, as the admin user. Each message carries
// the CLI's int property "count". Extra CLI arguments (e.g. --properties, --msgttl) follow.
func (e *Env) Produce(t testing.TB, broker, destination string, n int, extra ...string) {
	t.Helper()
	b := e.Broker(t, broker)
	args := append([]string{"producer", "--url", b.CoreURL, "--user", e.AdminUser, "--password", e.AdminPassword,
		"--destination", destination, "--message-count", fmt.Sprint(n), "--silent"}, extra...)
	if !containsArg(extra, "--message-size", "--message", "--text-size", "--object-size", "--data") {
		args = append(args, "--message-size", "100")
	}
	// Committed in transactions of 1,000: one by one, each send waits for the broker
	// (10,000 took 37 s; in transactions, 4.5 s). The messages are the same.
	if !containsArg(extra, "--txt-size") {
		args = append(args, "--txt-size", "1000")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(e.ArtemisHome, "bin", "artemis"), args...)
	cmd.Env = append(os.Environ(), "ARTEMIS_INSTANCE="+b.InstanceDir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("artemis producer on %s: %v\n%s", broker, err, out.String())
	}
}

func containsArg(args []string, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a == n {
				return true
			}
		}
	}
	return false
}
