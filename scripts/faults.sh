#!/usr/bin/env bash
# `make faults [PROFILE=short|long]`: the fault harness. Seeded iterations of an
# artemis_queue_transfer applied through the real terraform CLI over real brokers, one fault
# each (provider, terraform or broker killed, Ctrl-C, connections cut or stalled, a full target,
# a held management lock, a failover between two target nodes, a return stopped twice, a slow
# read of a run's manifest; and for copies, PostgreSQL restarted and the provider killed), an
# operator's recovery (apply again, bounded), and a checker that counts every message by its
# producer id.
#
#   scripts/faults.sh [short|long]      short (default): one iteration per fault kind;
#                                       long: 10 per kind (270), the published figures
#   KIND=postgres-restart,kill-provider-copy scripts/faults.sh long
#                                       only these kinds, in turn (the profile's number per kind)
#   SEED=123 KIND=kill-target scripts/faults.sh
#                                       replay one iteration (every iteration prints both first)
#   go run ./tools/faults/cmd/faults -from faults -page templates/guides/fault-tolerance.md.tmpl
#                                       rewrite the page from the published results (after a change of
#                                       its text), then make docs
#
# It starts a test environment of its own, with the cluster nodes, in a separate state folder
# and on shifted ports, as its owner (ARTEMIS_TESTENV_OWNER: the harness kills and restarts its
# brokers and its PostgreSQL), and stops it at the end whatever happened (also on Ctrl-C); or,
# with FAULTS_ENV=existing, runs in one the caller started and owns. Nothing is downloaded:
# terraform runs the provider built from this checkout through dev_overrides.
#
# Environment:
#   FAULTS_PUBLISH       1: add the run's results to faults/ (results-<date>-<profile>.json), write
#                        templates/guides/fault-tolerance.md.tmpl from every published run (each
#                        kind's row from the newest run that measured it) and regenerate docs/
#                        (make docs). Default 1 for long, 0 otherwise (the results then stay in
#                        the work folder, which is printed).
#   FAULTS_ARGS          extra flags for the harness (go run ./tools/faults/cmd/faults -h),
#                        e.g. -iterations 30, -budget 50m, -v (terraform's output)
#   FAULTS_TF_LOG        TF_LOG of every apply (e.g. INFO: the relay's progress and waits), in the
#                        workspaces' apply-N.log, which are then kept; off by default
#   FAULTS_COMMIT        the commit the page names (default: git rev-parse HEAD), for a run
#                        from an exported tree
#   ARTEMIS_TESTENV_DIR  default ${TMPDIR:-/tmp}/terraform-provider-artemis-faults; deleted at the end
#   TESTENV_PORT_SHIFT   default auto: the first free shift no other environment has claimed (see
#                        scripts/testenv.sh); TESTENV_PG_PORT default 15532 + shift
#   FAULTS_ENV           existing: run in the running environment of ARTEMIS_TESTENV_DIR, whose
#                        owner token ARTEMIS_TESTENV_OWNER holds (`testenv.sh up --cluster` printed
#                        it); it is neither started nor stopped. Default: a new one of its own
#
# Exit status: 0 when every iteration was correct; 3 when the results were written but some
# iteration lost, doubled or did not recover; anything else when no results were written.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

log() { printf 'faults: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

PROFILE=${1:-${PROFILE:-short}}
case "$PROFILE" in
  short|long) ;;
  *) die "profile $PROFILE: use short or long" ;;
esac
publish=${FAULTS_PUBLISH:-$([ "$PROFILE" = long ] && echo 1 || echo 0)}
if [ -n "${SEED:-}" ]; then
  [ -n "${KIND:-}" ] || die "SEED needs KIND (every iteration prints both)"
  publish=0 # one replayed iteration is no figure
fi
command -v terraform >/dev/null || die "the terraform CLI is needed on PATH"

default_testenv_dir=${TMPDIR:-/tmp}/terraform-provider-artemis-testenv
existing_env=0
case ${FAULTS_ENV:-} in
  '') ;;
  existing) existing_env=1 ;;
  *) die "FAULTS_ENV=$FAULTS_ENV: use existing, or leave it unset for an environment of the harness's own" ;;
esac
if [ "$existing_env" = 1 ]; then
  [ -n "${ARTEMIS_TESTENV_DIR:-}" ] || die "FAULTS_ENV=existing needs ARTEMIS_TESTENV_DIR, the running environment's state folder"
  [ -n "${ARTEMIS_TESTENV_OWNER:-}" ] || die "FAULTS_ENV=existing needs ARTEMIS_TESTENV_OWNER, the token testenv.sh up printed: the harness kills that environment's brokers"
fi
export ARTEMIS_TESTENV_DIR=${ARTEMIS_TESTENV_DIR:-${TMPDIR:-/tmp}/terraform-provider-artemis-faults}
export TESTENV_PORT_SHIFT=${TESTENV_PORT_SHIFT:-auto}
export ARTEMIS_TESTENV_FILE=$ARTEMIS_TESTENV_DIR/testenv.json
# The harness kills brokers and removes the environment at the end: never the shared one.
if [ "$(readlink -m "$ARTEMIS_TESTENV_DIR")" = "$(readlink -m "$default_testenv_dir")" ] || [ "$TESTENV_PORT_SHIFT" = 0 ]; then
  die "ARTEMIS_TESTENV_DIR=$ARTEMIS_TESTENV_DIR, TESTENV_PORT_SHIFT=$TESTENV_PORT_SHIFT is the test environment's; the harness kills, stops and deletes its own, so give it another folder and a port shift"
fi
if [ "$existing_env" = 1 ]; then
  [ -e "$ARTEMIS_TESTENV_DIR/testenv.json" ] || die "FAULTS_ENV=existing: $ARTEMIS_TESTENV_DIR holds no environment; start one with scripts/testenv.sh up --cluster"
elif [ -e "$ARTEMIS_TESTENV_DIR/testenv.json" ]; then
  die "$ARTEMIS_TESTENV_DIR already holds an environment (another make faults?); stop it with ARTEMIS_TESTENV_DIR=$ARTEMIS_TESTENV_DIR scripts/testenv.sh down, or run in it with FAULTS_ENV=existing and its owner token"
fi
# The token that lets the harness kill and restart this environment's brokers, and only these.
export ARTEMIS_TESTENV_OWNER=${ARTEMIS_TESTENV_OWNER:-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')}

work=$(mktemp -d "${TMPDIR:-/tmp}/terraform-provider-artemis-faults-work.XXXXXX")
started_env=0
cleanup() {
  local rc=$?
  if [ "$started_env" = 1 ]; then
    log "stopping the fault environment"
    bash scripts/testenv.sh down || true
  fi
  # The workspaces are kept when something failed, or FAULTS_TF_LOG asked for their logs.
  if [ "$rc" = 0 ] && [ -z "${FAULTS_TF_LOG:-}" ]; then
    rm -rf "$work/iterations" "$work/plugins" "$work/faults"
  else
    log "terraform workspaces (apply-N.log) and results kept in $work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Built before the brokers start, so that a compile error costs nothing.
log "building the provider and the harness"
mkdir -p "$work/plugins"
# -tags faultpoints: kill-provider-at-point has the provider kill itself at an exact instant of
# the run, and return-interrupted-twice stops a return at one (a kill, or SIGINT to terraform);
# without ARTEMIS_FAULT_POINT the build behaves as a release does.
go build -tags faultpoints -o "$work/plugins/terraform-provider-artemis" .
go build -o "$work/faults" ./tools/faults/cmd/faults

if [ "$existing_env" = 1 ]; then
  log "running in the environment of $ARTEMIS_TESTENV_DIR, which stays up"
else
  log "starting the fault environment in $ARTEMIS_TESTENV_DIR (ports shifted by $TESTENV_PORT_SHIFT, with the cluster nodes)"
  started_env=1
  bash scripts/testenv.sh up --cluster --new
fi

args=(-profile "$PROFILE" -provider-dir "$work/plugins" -terraform "$(command -v terraform)" -work "$work/iterations"
  -results "$work/results.json" -commit "${FAULTS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}")
if [ -n "${SEED:-}" ]; then
  args+=(-seed "$SEED" -kind "$KIND")
  args+=(-command "SEED=$SEED KIND=$KIND make faults")
else
  [ -n "${KIND:-}" ] && args+=(-kind "$KIND")
  args+=(-command "${KIND:+KIND=$KIND }make faults PROFILE=$PROFILE${FAULTS_ARGS:+ FAULTS_ARGS='$FAULTS_ARGS'}")
fi
[ "$publish" = 1 ] && args+=(-page templates/guides/fault-tolerance.md.tmpl -published faults)

log "running profile $PROFILE"
start=$SECONDS
rc=0
# shellcheck disable=SC2086 # FAULTS_ARGS is a list of flags
"$work/faults" "${args[@]}" ${FAULTS_ARGS:-} || rc=$?
log "harness finished in $((SECONDS - start)) s (exit $rc)"

# 0 and 3 mean results were written.
if [ "$publish" = 1 ] && { [ "$rc" = 0 ] || [ "$rc" = 3 ]; }; then
  mkdir -p faults
  published=faults/results-$(date -u +%Y%m%dT%H%MZ)-$PROFILE.json
  cp "$work/results.json" "$published"
  log "regenerating docs/ (make docs)"
  make -s docs >/dev/null
  log "wrote $published, templates/guides/fault-tolerance.md.tmpl and docs/guides/fault-tolerance.md"
elif [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
  log "results in $work/results.json (FAULTS_PUBLISH=1 writes the docs page)"
fi
exit "$rc"
