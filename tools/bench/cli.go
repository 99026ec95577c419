package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/tools/harness"
)

// ArtemisCLI runs the `artemis` command of the brokers' own distribution.
type ArtemisCLI struct {
	Home string // ARTEMIS_HOME: bin/artemis is run from there
	User string
	// Password is passed on the command line, as the CLI wants it; it is shown as *** in
	// every command line this package reports.
	Password string
	Log      io.Writer // the commands' output goes here too
}

func (a ArtemisCLI) bin() string { return filepath.Join(a.Home, "bin", "artemis") }

// CommandLine is how a command is shown: the password replaced, the path shortened.
func (a ArtemisCLI) CommandLine(args []string) string {
	shown := make([]string, len(args))
	for i, s := range args {
		if s == a.Password && i > 0 && strings.HasSuffix(args[i-1], "password") {
			s = "***"
		}
		shown[i] = s
	}
	return "$ARTEMIS_HOME/bin/artemis " + strings.Join(shown, " ")
}

// run runs one artemis command, polling the JVM's peak memory while it runs.
func (a ArtemisCLI) run(ctx context.Context, args []string) (ProcessRun, error) {
	cmd := exec.CommandContext(ctx, a.bin(), args...)
	// ARTEMIS_INSTANCE unset: the CLI runs with its own defaults, not a broker instance's profile.
	cmd.Env = append(os.Environ(), "ARTEMIS_INSTANCE=")
	cmd.Stdin = nil
	out := &harness.TailBuffer{Max: 8192}
	w := io.Writer(out)
	if a.Log != nil {
		w = io.MultiWriter(out, a.Log)
	}
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return ProcessRun{}, fmt.Errorf("starting %s: %w", a.CommandLine(args), err)
	}
	// bin/artemis execs java, so the child's pid is the JVM's.
	peak := watchPeakRSS(func() int { return cmd.Process.Pid })
	err := cmd.Wait()
	pr := processRun(cmd.ProcessState, time.Since(start), out.String())
	pr.PeakRSSKiB, _ = peak()
	if err != nil {
		return pr, fmt.Errorf("%s: %w: %s", a.CommandLine(args), err, harness.LastLines(pr.OutputTail, 5))
	}
	return pr, nil
}

// BrokerURLs are one broker's URLs for the CLI.
type BrokerURLs struct {
	Core string // tcp://host:port (Core protocol, all-protocols acceptor)
	AMQP string // amqp://host:port
}

func (b BrokerURLs) forProtocol(protocol string) string {
	if strings.EqualFold(protocol, "amqp") {
		return b.AMQP
	}
	return b.Core
}

// TransferArgs are the arguments of `artemis transfer` for one contender. --message-count
// ends the transfer as soon as the case has moved, instead of after the receive timeout
// (default 5 s) with no message: a fair end-to-end time.
func (a ArtemisCLI) TransferArgs(c Contender, src, tgt BrokerURLs, srcQueue, tgtQueue string, count int) []string {
	args := []string{"transfer", "--silent",
		"--source-url", src.forProtocol(c.Protocol), "--source-user", a.User, "--source-password", a.Password,
		"--source-protocol", c.Protocol, "--source-queue", srcQueue,
		"--target-url", tgt.forProtocol(c.Protocol), "--target-user", a.User, "--target-password", a.Password,
		"--target-protocol", c.Protocol, "--target-queue", tgtQueue,
		"--message-count", strconv.Itoa(count)}
	if c.CommitInterval > 0 {
		args = append(args, "--commit-interval", strconv.Itoa(c.CommitInterval))
	}
	return args
}

var transferredTotal = regexp.MustCompile(`Transferred a total of (\d+) messages`)

// Transfer runs `artemis transfer` and returns what it did; moved is the count the CLI reports.
func (a ArtemisCLI) Transfer(ctx context.Context, args []string) (pr ProcessRun, moved int64, err error) {
	pr, err = a.run(ctx, args)
	if m := transferredTotal.FindStringSubmatch(pr.OutputTail); m != nil {
		moved, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return pr, moved, err
}

// ProducerArgs are the arguments of `artemis producer` filling queue with count durable
// BytesMessages of size bytes over protocol (core or amqp), from one thread (so that its
// "count" property numbers them 0..count-1), committing every 1,000 so that a fill on a
// broker that syncs its journal takes seconds, not one sync per message. Each message also
// carries the fill's tag, so that the check can tell this fill's messages from any other.
func (a ArtemisCLI) ProducerArgs(url, protocol, queue string, count, size int, tag string) []string {
	props := fmt.Sprintf(`[{"type":"string","key":%q,"value":%q}]`, harness.FillProperty, tag)
	return []string{"producer", "--silent", "--url", url, "--user", a.User, "--password", a.Password,
		"--protocol", protocol, "--destination", "queue://" + queue, "--message-count", strconv.Itoa(count),
		"--message-size", strconv.Itoa(size), "--threads", "1", "--commit-interval", "1000", "--properties", props}
}

// Produce runs `artemis producer` and times it.
func (a ArtemisCLI) Produce(ctx context.Context, args []string, count int) (harness.FillResult, error) {
	pr, err := a.run(ctx, args)
	if err != nil {
		return harness.FillResult{}, err
	}
	return harness.FillResult{Seconds: pr.WallSeconds, MsgsPerSec: float64(count) / pr.WallSeconds}, nil
}

// PerfProducerArgs are the arguments of a durable `artemis perf producer` that sends for
// seconds, with at most maxPending messages unconfirmed, and writes its report to jsonPath.
func (a ArtemisCLI) PerfProducerArgs(url, protocol, queue string, size, maxPending, seconds int, jsonPath string) []string {
	return []string{"perf", "producer", "--silent", "--url", url, "--user", a.User, "--password", a.Password,
		"--protocol", strings.ToUpper(protocol), "--persistent", "--message-size", strconv.Itoa(size),
		"--max-pending", strconv.Itoa(maxPending), "--duration", strconv.Itoa(seconds), "--json", jsonPath,
		"queue://" + queue}
}

// PerfConsumerArgs are the arguments of an `artemis perf consumer` that takes count messages.
func (a ArtemisCLI) PerfConsumerArgs(url, protocol, queue string, count int64, jsonPath string) []string {
	return []string{"perf", "consumer", "--silent", "--url", url, "--user", a.User, "--password", a.Password,
		"--protocol", strings.ToUpper(protocol), "--message-count", strconv.FormatInt(count, 10), "--json", jsonPath,
		"queue://" + queue}
}

// Perf runs an `artemis perf` command and reads its report, leaving out skip warm-up intervals.
func (a ArtemisCLI) Perf(ctx context.Context, args []string, jsonPath string, skip int) (PerfRate, error) {
	if _, err := a.run(ctx, args); err != nil {
		return PerfRate{}, err
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		return PerfRate{}, fmt.Errorf("%s: reading its report: %w", a.CommandLine(args), err)
	}
	rate, err := ParsePerfReport(raw, skip)
	if err != nil {
		return PerfRate{}, fmt.Errorf("%s: %w", a.CommandLine(args), err)
	}
	return rate, nil
}

var defaultCommitInterval = regexp.MustCompile(`(?s)--commit-interval=<commitInterval>\s.*?Default:\s*(\d+)`)

// TransferDefaultCommit reads `artemis transfer`'s default commit interval from its help, so
// that the report states the default the tool really has. 0 when the help does not say.
func (a ArtemisCLI) TransferDefaultCommit(ctx context.Context) (int, error) {
	out, err := exec.CommandContext(ctx, a.bin(), "help", "transfer").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("artemis help transfer: %w: %s", err, harness.LastLines(string(out), 5))
	}
	return parseDefaultCommit(string(out)), nil
}

func parseDefaultCommit(help string) int {
	m := defaultCommitInterval.FindStringSubmatch(help)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// placeholders replaces the values of the given flags, and a queue://name destination, so that
// a command line shown in the report stands for every run of its kind rather than one run's.
func placeholders(args []string, byFlag map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && byFlag[args[i-1]] != "":
			a = byFlag[args[i-1]]
		case strings.HasPrefix(a, "queue://"):
			a = "queue://<queue>"
		}
		out[i] = a
	}
	return out
}
