// Package testenv gives tests the real brokers and PostgreSQL started by scripts/testenv.sh.
//
// Tests that need them call Require. Outside `make test` (no environment file) they are skipped,
// unless ARTEMIS_TESTENV_REQUIRED=1, which `make test` and CI set so that a missing environment
// fails the run instead of passing it by skipping.
package testenv

import (
	"bytes"
	"encoding/json"
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
	Script           string            `json:"script"`
	StateDir         string            `json:"state_dir"`
	ArtemisHome      string            `json:"artemis_home"`
	AdminUser        string            `json:"admin_user"`
	AdminPassword    string            `json:"admin_password"`
	TransferUser     string            `json:"transfer_user"`
	TransferPassword string            `json:"transfer_password"`
	ViewerUser       string            `json:"viewer_user"` // may read through management, nothing else
	ViewerPassword   string            `json:"viewer_password"`
	TLSCAFile        string            `json:"tls_ca_file"`
	PostgresDSN      string            `json:"postgres_dsn"`
	Brokers          map[string]Broker `json:"brokers"`
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
}

// FilePath is where the environment file is looked for.
func FilePath() string {
	if p := os.Getenv("ARTEMIS_TESTENV_FILE"); p != "" {
		return p
	}
	if d := os.Getenv("ARTEMIS_TESTENV_DIR"); d != "" {
		return filepath.Join(d, "testenv.json")
	}
	return filepath.Join(os.TempDir(), "terraform-provider-artemis-testenv", "testenv.json")
}

// Load reads the environment file.
func Load() (*Env, error) {
	path := FilePath()
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
func Required() bool { return os.Getenv("ARTEMIS_TESTENV_REQUIRED") == "1" }

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

// KillBroker sends SIGKILL to a broker, for fault tests.
func (e *Env) KillBroker(name string) error { return e.run("kill-broker", name) }

// StartBroker starts a stopped or killed broker and waits until it is active.
func (e *Env) StartBroker(name string) error { return e.run("start-broker", name) }

// StopBroker stops a broker gracefully.
func (e *Env) StopBroker(name string) error { return e.run("stop-broker", name) }

func (e *Env) run(args ...string) error {
	cmd := exec.Command("bash", append([]string{e.Script}, args...)...)
	cmd.Env = append(os.Environ(), "ARTEMIS_TESTENV_DIR="+e.StateDir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("testenv %s: %w: %s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

func (e *Env) printLogs(t testing.TB) {
	cmd := exec.Command("bash", e.Script, "logs")
	cmd.Env = append(os.Environ(), "ARTEMIS_TESTENV_DIR="+e.StateDir, "TESTENV_LOG_LINES=40")
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
	cmd := exec.Command(filepath.Join(e.ArtemisHome, "bin", "artemis"), args...)
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
