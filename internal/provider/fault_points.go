//go:build faultpoints && unix

package provider

// A provider built with -tags faultpoints (the fault harness builds it so; a release never is)
// kills its own process at the instant of a run that ARTEMIS_FAULT_POINT names: one of the
// engine's named points (manifest-queue, manifest-written, staging-created, staging-removed,
// settings-removed), or stage:N (after the N-th staging chunk) or confirm:N (after the N-th
// confirmation from the target). The harness sets it for the first apply of an iteration only:
// the kill lands exactly there, and the next apply must resume or restart the run. With
// ARTEMIS_FAULT_ACTION=interrupt the provider instead sends SIGINT to its terraform there, as
// Ctrl-C would: terraform asks the provider to stop, and the run stops a moment later.
// The points of a return (return-counting, confirm:N of its settling) are reached the same way.
//
// ARTEMIS_FAULT_QUEUE_DELETE names a point of an artemis_queue delete's checks (before-stop:
// the first check found the queue idle; before-check: its address is blocked, the last check is
// next). There the provider does not die: it creates the file ARTEMIS_FAULT_SIGNAL names and
// waits ARTEMIS_FAULT_PAUSE (a Go duration), so that the harness's producer sends exactly then.

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// faultQueueDeleteHooks returns the hooks that hold an artemis_queue delete at
// ARTEMIS_FAULT_QUEUE_DELETE, signalling the harness; none when it is not set.
func faultQueueDeleteHooks() artemis.DeleteEmptyQueueHooks {
	point, signal := os.Getenv("ARTEMIS_FAULT_QUEUE_DELETE"), os.Getenv("ARTEMIS_FAULT_SIGNAL")
	pause, err := time.ParseDuration(os.Getenv("ARTEMIS_FAULT_PAUSE"))
	if point == "" || signal == "" || err != nil {
		return artemis.DeleteEmptyQueueHooks{}
	}
	hold := func() {
		_ = os.WriteFile(signal, []byte(point), 0o600)
		time.Sleep(pause)
	}
	switch point {
	case "before-stop":
		return artemis.DeleteEmptyQueueHooks{BeforeStop: hold}
	case "before-check":
		return artemis.DeleteEmptyQueueHooks{BeforeCheck: hold}
	}
	return artemis.DeleteEmptyQueueHooks{}
}

// faultPointHooks returns the hooks that kill the process at ARTEMIS_FAULT_POINT, or nil when
// it is not set.
func faultPointHooks() runHooks {
	point := os.Getenv("ARTEMIS_FAULT_POINT")
	if point == "" {
		return nil
	}
	name, count, _ := strings.Cut(point, ":")
	nth, err := strconv.ParseInt(count, 10, 64)
	if err != nil || nth < 1 {
		nth = 1
	}
	die := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	if os.Getenv("ARTEMIS_FAULT_ACTION") == "interrupt" {
		// Once: terraform takes a second SIGINT for a forced stop.
		var once sync.Once
		die = func() { once.Do(func() { _ = syscall.Kill(os.Getppid(), syscall.SIGINT) }) }
	}
	return func(context.CancelFunc) transfer.Hooks {
		var chunks, confirms atomic.Int64
		return transfer.Hooks{
			Reached: func(p transfer.Point) {
				if string(p) == name {
					die()
				}
			},
			AfterStageChunk: func() {
				if name == "stage" && chunks.Add(1) == nth {
					die()
				}
			},
			AfterConfirm: func() {
				if name == "confirm" && confirms.Add(1) == nth {
					die()
				}
			},
		}
	}
}
