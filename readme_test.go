package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// readmeCodeBlock is one fenced code block of README.md: its language and its text.
type readmeCodeBlock struct{ lang, text string }

func readmeCodeBlocks(t *testing.T) []readmeCodeBlock {
	t.Helper()
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeCodeBlock
	var cur *readmeCodeBlock
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &readmeCodeBlock{lang: strings.TrimPrefix(line, "```")}
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// readmeBlockIndex returns the index and text of the first code block of README.md, from index
// from on, in language lang that contains the text; it fails the test when there is none.
func readmeBlockIndex(t *testing.T, from int, lang, contains string) (int, string) {
	t.Helper()
	blocks := readmeCodeBlocks(t)
	for i := from; i < len(blocks); i++ {
		if blocks[i].lang == lang && strings.Contains(blocks[i].text, contains) {
			return i, blocks[i].text
		}
	}
	t.Fatalf("README.md has no ```%s block containing %q (after block %d): this test runs the README's steps", lang, contains, from)
	return 0, ""
}

func readmeBlock(t *testing.T, lang, contains string) string {
	t.Helper()
	_, text := readmeBlockIndex(t, 0, lang, contains)
	return text
}

// readmeCommand is one line of a README shell block: its environment assignments and its words.
type readmeCommand struct {
	env  []string
	args []string
}

// envAssignment is a NAME=value word before a shell command.
var envAssignment = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// readmeCommands splits a README shell block into commands: "# ..." comments dropped, leading
// NAME=value words taken as the command's environment.
func readmeCommands(block string) []readmeCommand {
	var cmds []readmeCommand
	for _, line := range strings.Split(block, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		var c readmeCommand
		for len(words) > 0 && envAssignment.MatchString(words[0]) {
			c.env, words = append(c.env, words[0]), words[1:]
		}
		c.args = words
		cmds = append(cmds, c)
	}
	return cmds
}

// closedRegistry is a loopback HTTP(S) proxy that closes every connection it is given, and counts
// them: pointed at by HTTPS_PROXY, it makes every registry request fail, and shows whether any was
// made.
type closedRegistry struct {
	url   string
	tries atomic.Int64
}

func newClosedRegistry(t *testing.T) *closedRegistry {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &closedRegistry{url: "http://" + l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.tries.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close() })
	return r
}

// isolatedEnv is the environment of a user with nothing of their own: HOME (and the XDG
// directories) in home, the CLI configuration in cliConfig, every registry request sent to a proxy
// that refuses it, and no TF_* variable of the caller. Go keeps the caller's build cache, module
// cache and settings, so that make install does not rebuild everything from a cold cache.
func isolatedEnv(t *testing.T, home, cliConfig string, registry *closedRegistry) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	goenv := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(goenv) != 4 {
		t.Fatalf("go env printed %q, want four lines", out)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch up := strings.ToUpper(name); {
		case strings.HasPrefix(up, "TF_"), strings.HasPrefix(up, "TOFU_"), strings.HasPrefix(up, "XDG_"), strings.HasPrefix(up, "CHECKPOINT_"),
			up == "HOME", up == "HTTP_PROXY", up == "HTTPS_PROXY", up == "NO_PROXY", up == "ALL_PROXY",
			up == "GOCACHE", up == "GOMODCACHE", up == "GOPATH", up == "GOENV":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"HTTPS_PROXY="+registry.url, "HTTP_PROXY="+registry.url, "https_proxy="+registry.url, "http_proxy="+registry.url,
		"GOCACHE="+goenv[0], "GOMODCACHE="+goenv[1], "GOPATH="+goenv[2], "GOENV="+goenv[3])
}

// runIn runs a command in dir with env, bounded by timeout, and fails the test on an error, with
// its output.
func runIn(t *testing.T, dir string, env []string, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 10*time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// checkLockRecords fails the test unless the lock file of dir records the provider at version.
func checkLockRecords(t *testing.T, dir, version string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatalf("terraform init wrote no lock file: %v", err)
	}
	want := regexp.MustCompile(`provider "registry\.terraform\.io/artemis-studio/artemis" \{\s*version\s*=\s*"` +
		regexp.QuoteMeta(version) + `"[^}]*"h1:`)
	if !want.Match(raw) {
		t.Fatalf(".terraform.lock.hcl does not record artemis-studio/artemis %s with a checksum:\n%s", version, raw)
	}
}

// readmeProviderBlock is the README's two brokers, dc1 and dc2, as the environment's source and
// target, logged in as its transfer user.
func readmeProviderBlock(env *testenv.Env) string {
	var b strings.Builder
	b.WriteString("provider \"artemis\" {\n  brokers = {\n")
	for _, k := range [][2]string{{"dc1", "source"}, {"dc2", "target"}} {
		key, br := k[0], env.Brokers[k[1]]
		fmt.Fprintf(&b, "    %s = {\n      amqp_urls      = [%q]\n      management_url = %q\n", key, br.AMQPURL, br.ManagementURL)
		fmt.Fprintf(&b, "      username       = %q\n      password       = %q\n    }\n", env.TransferUser, env.TransferPassword)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// The README's first transfer, as a user with Terraform and no registry access follows it: `make
// install` (into ~/.terraform.d/plugins, of a HOME of its own), a CLI configuration of nothing,
// the README's required_providers block and first transfer (its queue "orders" renamed for this
// test, its brokers dc1 and dc2 the environment's source and target), then the README's
// `terraform init`, `plan` and `apply`. Init installs the provider from the mirror and records
// its version in the lock file, no registry request is made, and the apply moves every message.
// A second working directory does the same with the README's explicit filesystem_mirror CLI
// configuration, as far as init. Under make test-tofu the CLI is OpenTofu, and the source names its
// host, as the README tells OpenTofu users to.
func TestReadme_FirstTransferInitsFromTheMirrorOfMakeInstallWithoutARegistry(t *testing.T) {
	env := testenv.Require(t)
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if os.Getenv("TF_ACC") == "" || bin == "" {
		t.Skip("this test drives the terraform CLI: it needs TF_ACC=1 and TF_ACC_TERRAFORM_PATH")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("the README's install step runs make: %v", err)
	}
	version, _ := changelogVersion(t)
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}

	versionsTF := readmeBlock(t, "terraform", "required_providers")
	if os.Getenv("TF_ACC_PROVIDER_HOST") == "registry.opentofu.org" {
		// make test-tofu: the README tells OpenTofu users to name the host.
		withHost := strings.Replace(versionsTF, `"artemis-studio/artemis"`, `"registry.terraform.io/artemis-studio/artemis"`, 1)
		if withHost == versionsTF {
			t.Fatalf("README.md's required_providers block has no source \"artemis-studio/artemis\" to give its host:\n%s", versionsTF)
		}
		versionsTF = withHost
	}
	transferAt, transferTF := readmeBlockIndex(t, 0, "terraform", `resource "artemis_queue_transfer"`)
	_, steps := readmeBlockIndex(t, transferAt+1, "sh", "terraform init")
	install := readmeCommands(readmeBlock(t, "sh", "make install"))
	if len(install) != 1 || install[0].args[0] != "make" {
		t.Fatalf("README.md's install block is %q, want the one command make install", install)
	}

	queue := testenv.UniqueName("readme.orders")
	transferTF = strings.ReplaceAll(transferTF, `queue = "orders"`, fmt.Sprintf("queue = %q", queue))
	if strings.Count(transferTF, queue) != 2 {
		t.Fatalf("README.md's first transfer does not name queue \"orders\" as its source and target:\n%s", transferTF)
	}
	const messages = 200
	clients := map[string]*artemis.Client{}
	for _, name := range []string{"source", "target"} {
		b := env.Broker(t, name)
		c, err := artemis.New(artemis.Config{Name: name, ManagementURL: b.ManagementURL, AMQPURLs: []string{b.AMQPURL},
			Username: env.AdminUser, Password: env.AdminPassword})
		if err != nil {
			t.Fatal(err)
		}
		clients[name] = c
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = c.CreateQueue(ctx, artemis.QueueSpec{Name: queue, Durable: true, RingSize: -1, MaxConsumers: -1}, false)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = c.DestroyQueue(ctx, queue)
		})
	}
	env.Produce(t, "source", "queue://"+queue, messages)

	registry := newClosedRegistry(t)
	home := t.TempDir()
	cliConfig := filepath.Join(home, "cli.tfrc")
	if err := os.WriteFile(cliConfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	userEnv := isolatedEnv(t, home, cliConfig, registry)
	runIn(t, repo, userEnv, 10*time.Minute, install[0].args[0], install[0].args[1:]...)

	work := filepath.Join(home, "orders")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"versions.tf": versionsTF, "provider.tf": readmeProviderBlock(env), "main.tf": transferTF} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var ran []string
	for _, c := range readmeCommands(steps) {
		if c.args[0] != "terraform" || len(c.args) < 2 {
			t.Fatalf("README.md's first-transfer block runs %q: this test runs only terraform commands", c.args)
		}
		sub := c.args[1]
		args := append([]string{sub, "-no-color", "-input=false"}, c.args[2:]...)
		if sub == "apply" {
			args = append(args, "-auto-approve")
		}
		out := runIn(t, work, append(userEnv, c.env...), 10*time.Minute, bin, args...)
		ran = append(ran, sub)
		if sub == "init" {
			checkLockRecords(t, work, version)
		}
		if sub == "apply" && !strings.Contains(out, "1 added") {
			t.Errorf("terraform apply added no resource:\n%s", out)
		}
	}
	if strings.Join(ran, " ") != "init plan apply" {
		t.Fatalf("README.md's first-transfer block runs terraform %q, want init, plan and apply", ran)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, want := range map[string]int64{"source": 0, "target": messages} {
		got, err := clients[name].QueueDepth(ctx, queue)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("after the apply %s's %s holds %d messages, want %d", name, queue, got, want)
		}
	}

	// The README's explicit mirror, in a HOME without an implied one.
	mirrorHome := t.TempDir()
	mirror := filepath.Join(mirrorHome, "mirror")
	const readmeMirror = "/opt/terraform/mirror"
	mirrorConfig := readmeBlock(t, "hcl", "provider_installation")
	if !strings.Contains(mirrorConfig, readmeMirror) {
		t.Fatalf("README.md's provider_installation block does not name %s:\n%s", readmeMirror, mirrorConfig)
	}
	mirrorCLIConfig := filepath.Join(mirrorHome, "cli.tfrc")
	if err := os.WriteFile(mirrorCLIConfig, []byte(strings.ReplaceAll(mirrorConfig, readmeMirror, mirror)), 0o600); err != nil {
		t.Fatal(err)
	}
	mirrorEnv := isolatedEnv(t, mirrorHome, mirrorCLIConfig, registry)
	runIn(t, repo, mirrorEnv, 10*time.Minute, "make", "--no-print-directory", "install", "PROVIDER_MIRROR="+mirror)
	mirrorWork := filepath.Join(mirrorHome, "orders")
	if err := os.Mkdir(mirrorWork, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mirrorWork, "versions.tf"), []byte(versionsTF), 0o600); err != nil {
		t.Fatal(err)
	}
	runIn(t, mirrorWork, mirrorEnv, 5*time.Minute, bin, "init", "-no-color", "-input=false")
	checkLockRecords(t, mirrorWork, version)

	if n := registry.tries.Load(); n != 0 {
		t.Errorf("terraform tried %d connections through the proxy: an init from the mirror should ask no registry", n)
	}
}
