package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFilePath_OnlyWhatTheTestsWerePointedAt(t *testing.T) {
	for _, c := range []struct {
		name, file, dir, want string
	}{
		{name: "nothing set: no default path", want: ""},
		{name: "state folder", dir: "/x/env", want: "/x/env/testenv.json"},
		{name: "file", file: "/y/testenv.json", want: "/y/testenv.json"},
		{name: "file wins over folder", file: "/y/testenv.json", dir: "/x/env", want: "/y/testenv.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(envFile, c.file)
			t.Setenv(envDir, c.dir)
			if got := FilePath(); got != c.want {
				t.Errorf("FilePath() = %q, want %q", got, c.want)
			}
		})
	}
}

// A running environment at the old default path must not be found without a pointer.
func TestLoad_WithoutAPointerIgnoresTheDefaultPath(t *testing.T) {
	t.Setenv(envFile, "")
	t.Setenv(envDir, "")
	t.Setenv("TMPDIR", t.TempDir())
	old := filepath.Join(os.TempDir(), "terraform-provider-artemis-testenv")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "testenv.json"), []byte(`{"brokers":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(); !errors.Is(err, ErrNotPointed) {
		t.Fatalf("Load() = %v, want ErrNotPointed", err)
	}
}

func TestLoad_ReadsThePointedFile(t *testing.T) {
	dir := t.TempDir()
	sum := sha256.Sum256([]byte("tok"))
	raw := `{"state_dir": "` + dir + `", "owner_sha256": "` + hex.EncodeToString(sum[:]) + `",
	  "brokers": {"source": {"amqp_url": "amqp://127.0.0.1:5772"}}}`
	if err := os.WriteFile(filepath.Join(dir, "testenv.json"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envFile, "")
	t.Setenv(envDir, dir)
	env, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if b := env.Brokers["source"]; b.Name != "source" || b.AMQPURL != "amqp://127.0.0.1:5772" {
		t.Errorf("source broker %+v", b)
	}
	if env.OwnerSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("owner %q", env.OwnerSHA256)
	}
}

func TestOwned_OnlyTheTokenTheEnvironmentWasStartedWith(t *testing.T) {
	sum := sha256.Sum256([]byte("right-token"))
	owned := &Env{StateDir: "/s", OwnerSHA256: hex.EncodeToString(sum[:])}
	for _, c := range []struct {
		name  string
		env   *Env
		token string
		ok    bool
		say   string
	}{
		{name: "the owner", env: owned, token: "right-token", ok: true},
		{name: "no token", env: owned, say: "ARTEMIS_TESTENV_OWNER is not set"},
		{name: "another run's token", env: owned, token: "other", say: "another run owns it"},
		{name: "an environment without owner", env: &Env{StateDir: "/s"}, token: "right-token", say: "records no owner"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(envOwner, c.token)
			err := c.env.Owned()
			if c.ok {
				if err != nil {
					t.Fatalf("Owned() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrNotOwner) || !strings.Contains(err.Error(), c.say) {
				t.Fatalf("Owned() = %v, want ErrNotOwner saying %q", err, c.say)
			}
		})
	}
}

// The broker commands refuse before they run anything: the script is never called.
func TestKillBroker_RefusesWithoutTheOwnerToken(t *testing.T) {
	sum := sha256.Sum256([]byte("right-token"))
	env := &Env{Script: "/nonexistent/testenv.sh", StateDir: "/s", OwnerSHA256: hex.EncodeToString(sum[:])}
	t.Setenv(envOwner, "")
	for name, op := range map[string]func(string) error{"kill": env.KillBroker, "stop": env.StopBroker, "start": env.StartBroker} {
		if err := op("source"); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s without the token: %v, want ErrNotOwner", name, err)
		}
	}
}
