#!/usr/bin/env bash
# `make bench`: measures the move engine against Artemis's own `artemis transfer` and against the
# brokers' raw limit (`artemis perf`), and writes BENCHMARKS.md, bench/results.json and
# bench/throughput.png.
#
# It starts a test environment of its own (scripts/testenv.sh, without the cluster nodes) in a
# separate state folder and on shifted ports, so that it never disturbs a running test
# environment, and stops it at the end whatever happened (also on Ctrl-C).
#
# Environment:
#   BENCH_PROFILE        quick (development sizes, 1 repetition), standard (default: the cases
#                        of issue #6, 3 repetitions) or long (standard plus 1,000,000 x 1 KiB)
#   BENCH_ARGS           extra flags for the benchmark program (go run ./internal/bench/cmd/bench -h)
#   ARTEMIS_HOME         as for scripts/testenv.sh: the brokers' and the artemis CLI's distribution
#   ARTEMIS_TESTENV_DIR  default ${TMPDIR:-/tmp}/terraform-provider-artemis-bench; deleted at the end
#   TESTENV_PORT_SHIFT   default 1000; TESTENV_PG_PORT default 16532
#
# Exit status: 0 when every run was correct; 3 when the results were written but some run lost,
# doubled or failed (BENCHMARKS.md says which); anything else when no results were written.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

PROFILE=${BENCH_PROFILE:-standard}
case "$PROFILE" in
  quick|standard|long) ;;
  *) die "BENCH_PROFILE=$PROFILE: use quick, standard or long" ;;
esac

default_testenv_dir=${TMPDIR:-/tmp}/terraform-provider-artemis-testenv
export ARTEMIS_TESTENV_DIR=${ARTEMIS_TESTENV_DIR:-${TMPDIR:-/tmp}/terraform-provider-artemis-bench}
export TESTENV_PORT_SHIFT=${TESTENV_PORT_SHIFT:-1000}
export TESTENV_PG_PORT=${TESTENV_PG_PORT:-16532}
export TESTENV_CLUSTER=0
# The environment is removed at the end: never the one the tests use.
if [ "$(readlink -m "$ARTEMIS_TESTENV_DIR")" = "$(readlink -m "$default_testenv_dir")" ] || [ "$TESTENV_PORT_SHIFT" = 0 ]; then
  die "ARTEMIS_TESTENV_DIR=$ARTEMIS_TESTENV_DIR, TESTENV_PORT_SHIFT=$TESTENV_PORT_SHIFT is the test environment's; the benchmark stops and deletes its own, so give it another folder and a port shift"
fi
if [ -e "$ARTEMIS_TESTENV_DIR/testenv.json" ]; then
  die "$ARTEMIS_TESTENV_DIR already holds an environment (another make bench?); stop it with ARTEMIS_TESTENV_DIR=$ARTEMIS_TESTENV_DIR scripts/testenv.sh down"
fi

work=$(mktemp -d)
cleanup() {
  local rc=$?
  log "stopping the benchmark environment"
  bash scripts/testenv.sh down || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Built before the brokers start, so that a compile error costs nothing.
log "building the benchmark"
go build -o "$work/bench" ./internal/bench/cmd/bench

log "starting the benchmark environment in $ARTEMIS_TESTENV_DIR (ports shifted by $TESTENV_PORT_SHIFT)"
bash scripts/testenv.sh up

log "running profile $PROFILE"
start=$SECONDS
rc=0
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
"$work/bench" -profile "$PROFILE" -results bench/results.json -markdown BENCHMARKS.md -chart bench/throughput.png \
  ${BENCH_ARGS:-} || rc=$?
log "benchmark finished in $((SECONDS - start)) s (exit $rc)"

# 0 and 3 mean results were written: draw the chart from them.
if [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
  go run -C tools/benchchart . -in ../../bench/results.json -out ../../bench/throughput.png
  log "wrote BENCHMARKS.md, bench/results.json and bench/throughput.png"
fi
exit "$rc"
