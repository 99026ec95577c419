#!/usr/bin/env bash
# `make bench`: measures the move engine against Artemis's own `artemis transfer` and against the
# brokers' raw limit (`artemis perf`), and our relay on one ever deeper queue (the scale curve),
# and writes BENCHMARKS.md, bench/results.json, bench/results-scale.json and bench/throughput.png
# (and the other parts' results named below).
#
# It measures the profile twice, each time on brokers of a test environment of its own
# (scripts/testenv.sh, without the cluster nodes) in a separate state folder and on shifted
# ports, so that it never disturbs a running test environment, and stops each at the end
# whatever happened (also on Ctrl-C):
#   synced  brokers made with `artemis create`'s defaults (journal sync on, autotune), as
#           operators run them: bench/results.json, the page's figures
#   fast    the test environment's brokers (--no-autotune --nio --no-fsync):
#           bench/results-no-fsync.json, the page's second column
# On the synced brokers it then measures the migration of a whole broker (bench/results-migration.json,
# the page's "Migration of a whole broker"): 200 queues of long-tailed depths (3 of 100,000 x 1 KiB,
# 3 of 5 x 1 MiB, most under 1,000, some empty; drawn from a fixed seed), filled again before each
# run and moved to the target by one `terraform apply -parallelism=10` of
# examples/migrate-broker (after its step one, the inventory of the source's queues, and a
# `terraform plan` of the same configuration timed on its own, neither in the apply's time), by
# `artemis transfer` per queue one at a time, and by the same 10 at a time (xargs -P 10), each
# checked for every message once; the contenders run in rounds (3 by default), their order
# rotated each round, and the page shows each one's medians and every run.
# On the synced brokers it also measures small moves (bench/results-small-moves.json, the page's
# "Small moves"): 10 queues of 50 x 1 KiB, their target queues created beforehand, moved by one
# `terraform apply -parallelism=10` of ten artemis_queue_transfer resources, 3 times, each move
# timed by its duration_seconds and every message checked once on the target.
# Queues are filled with Artemis's CLI producer (over Core, and over AMQP for the goal case);
# our side is timed as the engine alone (a child process running Engine.Move) and as a whole
# `terraform apply` of the provider built here.
#
# The scale curve (part scale) runs on brokers of its own, synced: one queue of 10,000, 100,000,
# 1,000,000 and 3,000,000 x 1 KiB, each filled once, copied and then moved by our relay, each run
# checked for loss and doubles: bench/results-scale.json, the page's "Scale curve" (about 50
# minutes on the 2-core machine of BENCHMARKS.md, about half of it the 3,000,000; 6 GB of journal
# and pages in its state folder at that depth).
#
# Environment:
#   BENCH_PARTS          what to measure, any of: "profile" (BENCH_PROFILE on BENCH_BROKERS),
#                        "migration" (the whole-broker migration on the synced brokers, about 40 min a
#                        round on this machine; it needs synced in BENCH_BROKERS), "small" (the small
#                        moves on the synced brokers, a few minutes), "sessions" (the management
#                        sessions, on the synced environment's source and legacy brokers, about a
#                        minute: bench/results-sessions.json, the page's "Management sessions"; not
#                        in the default, since it makes the legacy broker 2.18.0 unless
#                        TESTENV_LEGACY_VERSION says otherwise) and "scale" (the scale curve);
#                        default "profile small migration scale". BENCH_PARTS=scale make bench
#                        measures the curve alone; the page is rendered from whatever results
#                        files exist, the others kept
#   BENCH_BASELINE_REV   a git revision (e.g. main~3): its provider is built too, and the profile
#                        runs "ours (terraform apply) at <rev>" on 100,000 x 1 KiB, alternating with
#                        today's apply and artemis transfer; the page states both ratios to
#                        artemis transfer side by side
#   BENCH_MIGRATION_REPS the migration's rounds (default 3), each contender once per round
#   BENCH_MIGRATION_CONTENDERS which of the migration's contenders run, of ours-apply,
#                        transfer-loop-1 (one at a time) and transfer-loop-parallel (default all
#                        three; e.g. ours-apply,transfer-loop-parallel leaves out the slowest)
#   BENCH_MIGRATION_ARGS extra flags for the migration (e.g. -migration-queues 20
#                        -migration-deep 500 for a try of the harness)
#   BENCH_SCALE_CASES    the curve's depths instead of its default, as COUNTxSIZE/core,... (e.g.
#                        10000x1024/core for a try of the harness)
#   BENCH_SCALE_JAVA_MEMORY, BENCH_SCALE_GLOBAL_MAX_SIZE  the heap of the curve's brokers and
#                        their memory for messages before they page (default 4G and 1G). With
#                        Artemis's default of half the heap the target's heap ran out: at 1G
#                        (OutOfMemoryError with 1.2 million of a 3 million copy on it) and nearly
#                        at 4G (old generation 89% after a full GC once paging began at 1.03
#                        million): the 1 KiB AMQP messages held in its memory take more heap than
#                        the broker counts for them
#                        An empty BENCH_SCALE_GLOBAL_MAX_SIZE keeps Artemis's default (half the heap)
#   BENCH_SCALE_CONTENDERS which of the curve's contenders run: ours (the move), ours-copy (the
#                        copy) or both (default ours,ours-copy)
#   BENCH_SCALE_RESULTS  where the curve's results go (default bench/results-scale.json); the page
#                        shows every bench/results-scale*.json, each a run of its own
#   BENCH_PROFILE        quick (development sizes, 1 repetition), standard (default: the cases
#                        of issues #6 and #15, 3 repetitions, the parts of a move measured on
#                        their own, a resume timed) or long (standard plus 1,000,000 x 1 KiB
#                        raced once by our relay and artemis transfer)
#   BENCH_BROKERS        which brokers, in order: default "synced fast"; "synced" or "fast" alone
#                        writes that one's results and a page without the second column
#   BENCH_ARGS           extra flags for the benchmark program (go run ./tools/bench/cmd/bench -h)
#   ARTEMIS_HOME         as for scripts/testenv.sh: the brokers' and the artemis CLI's distribution
#   ARTEMIS_TESTENV_DIR  default ${TMPDIR:-/tmp}/terraform-provider-artemis-bench; each kind of
#                        broker gets <dir>-synced or <dir>-fast, deleted at the end
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

PARTS=" ${BENCH_PARTS:-profile small migration scale} "
for part in $PARTS; do
  case "$part" in profile|small|sessions|migration|scale) ;; *) die "BENCH_PARTS=$BENCH_PARTS: use profile, small, sessions, migration and/or scale" ;; esac
done
has_part() { [[ $PARTS == *" $1 "* ]]; }

BROKER_KINDS=${BENCH_BROKERS:-synced fast}
for kind in $BROKER_KINDS; do
  case "$kind" in synced|fast) ;; *) die "BENCH_BROKERS=$BENCH_BROKERS: use synced and/or fast" ;; esac
done
if ! has_part profile; then
  if has_part migration || has_part small || has_part sessions; then
    # The migration, the small moves or the sessions without the profile: only the synced brokers are started.
    case " $BROKER_KINDS " in *" synced "*) BROKER_KINDS=synced ;; *) die "BENCH_PARTS=migration, small and sessions run on the synced brokers: add synced to BENCH_BROKERS" ;; esac
  else
    BROKER_KINDS= # the scale curve alone starts brokers of its own
  fi
fi

default_testenv_dir=${TMPDIR:-/tmp}/terraform-provider-artemis-testenv
BASE_DIR=${ARTEMIS_TESTENV_DIR:-${TMPDIR:-/tmp}/terraform-provider-artemis-bench}
export TESTENV_PORT_SHIFT=${TESTENV_PORT_SHIFT:-1000}
export TESTENV_PG_PORT=${TESTENV_PG_PORT:-16532}
export TESTENV_CLUSTER=0
# The sessions are measured on 2.40 (source) and on the oldest version the provider supports.
if has_part sessions; then export TESTENV_LEGACY_VERSION=${TESTENV_LEGACY_VERSION:-2.18.0}; fi
# Each environment is removed at the end: never the one the tests use.
if [ "$(readlink -m "$BASE_DIR")" = "$(readlink -m "$default_testenv_dir")" ] || [ "$TESTENV_PORT_SHIFT" = 0 ]; then
  die "ARTEMIS_TESTENV_DIR=$BASE_DIR, TESTENV_PORT_SHIFT=$TESTENV_PORT_SHIFT is the test environment's; the benchmark stops and deletes its own, so give it another folder and a port shift"
fi
scale_kind=
has_part scale && scale_kind=scale
for kind in $BROKER_KINDS $scale_kind; do
  if [ -e "$BASE_DIR-$kind/testenv.json" ]; then
    die "$BASE_DIR-$kind already holds an environment (another make bench?); stop it with ARTEMIS_TESTENV_DIR=$BASE_DIR-$kind scripts/testenv.sh down"
  fi
done

work=$(mktemp -d)
export ARTEMIS_TESTENV_DIR=
cleanup() {
  local rc=$?
  if [ -n "$ARTEMIS_TESTENV_DIR" ]; then
    log "stopping the benchmark environment in $ARTEMIS_TESTENV_DIR"
    bash scripts/testenv.sh down || true
  fi
  if [ -d "$work/baseline" ]; then git worktree remove --force "$work/baseline" || true; fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Built before the brokers start, so that a compile error costs nothing.
log "building the benchmark and the provider"
go build -o "$work/bench" ./tools/bench/cmd/bench
mkdir -p "$work/plugin"
# The provider is built as .goreleaser.yml builds a release (no cgo, no symbol tables), so that its
# memory and start-up are those of the binary an operator installs.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/plugin/terraform-provider-artemis" .
apply_args=()
if terraform=$(command -v terraform); then
  apply_args=(-provider-dir "$work/plugin" -terraform "$terraform")
else
  log "no terraform on PATH: the whole-apply contender is left out"
fi
# The provider of BENCH_BASELINE_REV, built the same way from a detached worktree of that revision
# in the work folder (removed once built), so that the profile measures it beside today's.
baseline_args=()
if [ -n "${BENCH_BASELINE_REV:-}" ]; then
  [ ${#apply_args[@]} -gt 0 ] || die "BENCH_BASELINE_REV=$BENCH_BASELINE_REV needs terraform on PATH"
  base_rev=$(git rev-parse --short "$BENCH_BASELINE_REV^{commit}") || die "BENCH_BASELINE_REV=$BENCH_BASELINE_REV is no revision of this repository"
  log "building the provider at $base_rev (BENCH_BASELINE_REV=$BENCH_BASELINE_REV)"
  git worktree add --quiet --detach "$work/baseline" "$base_rev"
  mkdir -p "$work/plugin-baseline"
  base_rc=0
  (cd "$work/baseline" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/plugin-baseline/terraform-provider-artemis" .) || base_rc=$?
  git worktree remove --force "$work/baseline"
  [ "$base_rc" = 0 ] || die "building the provider at $base_rev failed"
  baseline_args=(-baseline-provider-dir "$work/plugin-baseline" -baseline-rev "$base_rev")
fi

results_of() { if [ "$1" = synced ]; then echo bench/results.json; else echo bench/results-no-fsync.json; fi; }

start=$SECONDS
rc=0
# end_part EXIT: stops the part's environment; a run whose checks failed (exit 3) makes the whole
# benchmark exit 3 at the end, any other failure ends it now.
end_part() {
  bash scripts/testenv.sh down
  export ARTEMIS_TESTENV_DIR=
  case "$1" in
    0) ;;
    3) rc=3 ;;
    *) exit "$1" ;;
  esac
}
for kind in $BROKER_KINDS; do
  export ARTEMIS_TESTENV_DIR=$BASE_DIR-$kind
  log "starting the $kind benchmark environment in $ARTEMIS_TESTENV_DIR (ports shifted by $TESTENV_PORT_SHIFT)"
  TESTENV_JOURNAL=$kind bash scripts/testenv.sh up
  krc=0
  if has_part profile; then
    log "running profile $PROFILE on the $kind brokers"
    # shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
    "$work/bench" -profile "$PROFILE" -brokers "$kind" -results "$(results_of "$kind")" -markdown "$work/$kind.md" \
      -chart bench/throughput.png "${apply_args[@]}" ${baseline_args[@]+"${baseline_args[@]}"} ${BENCH_ARGS:-} || krc=$?
    log "the $kind brokers' run finished (exit $krc)"
  fi
  if has_part small && [ "$kind" = synced ] && { [ "$krc" = 0 ] || [ "$krc" = 3 ]; }; then
    if [ ${#apply_args[@]} = 0 ]; then
      log "no terraform on PATH: the small moves are left out"
    else
      log "small moves on the $kind brokers"
      smrc=0
      "$work/bench" -small-moves -brokers "$kind" -small-moves-results bench/results-small-moves.json "${apply_args[@]}" || smrc=$?
      log "the small moves finished (exit $smrc)"
      if [ "$smrc" != 0 ]; then krc=$smrc; fi
    fi
  fi
  if has_part sessions && [ "$kind" = synced ] && { [ "$krc" = 0 ] || [ "$krc" = 3 ]; }; then
    log "management sessions on the $kind environment's source and legacy brokers"
    ssrc=0
    "$work/bench" -sessions -sessions-results bench/results-sessions.json || ssrc=$?
    log "the sessions finished (exit $ssrc)"
    if [ "$ssrc" != 0 ]; then krc=$ssrc; fi
  fi
  if has_part migration && [ "$kind" = synced ] && { [ "$krc" = 0 ] || [ "$krc" = 3 ]; }; then
    log "migrating a whole broker on the $kind brokers"
    mrc=0
    # shellcheck disable=SC2086 # BENCH_MIGRATION_ARGS is a list of flags
    "$work/bench" -migration -brokers "$kind" -migration-results bench/results-migration.json "${apply_args[@]}" \
      -migration-reps "${BENCH_MIGRATION_REPS:-3}" -migration-contenders "${BENCH_MIGRATION_CONTENDERS:-}" ${BENCH_MIGRATION_ARGS:-} || mrc=$?
    log "the migration finished (exit $mrc)"
    if [ "$mrc" != 0 ]; then krc=$mrc; fi
  fi
  end_part "$krc"
done
if has_part scale; then
  export ARTEMIS_TESTENV_DIR=$BASE_DIR-scale
  log "starting the synced brokers of the scale curve in $ARTEMIS_TESTENV_DIR (ports shifted by $TESTENV_PORT_SHIFT)"
  TESTENV_JOURNAL=synced TESTENV_JAVA_MEMORY=${BENCH_SCALE_JAVA_MEMORY:-4G} \
    TESTENV_GLOBAL_MAX_SIZE=${BENCH_SCALE_GLOBAL_MAX_SIZE-1G} bash scripts/testenv.sh up
  scale_args=()
  [ -n "${BENCH_SCALE_CASES:-}" ] && scale_args=(-cases "$BENCH_SCALE_CASES")
  krc=0
  "$work/bench" -profile scale -brokers synced -contenders "${BENCH_SCALE_CONTENDERS:-ours,ours-copy}" -results "${BENCH_SCALE_RESULTS:-bench/results-scale.json}" \
    -markdown "$work/scale.md" ${scale_args[@]+"${scale_args[@]}"} || krc=$?
  log "the scale curve's run finished (exit $krc)"
  end_part "$krc"
fi
log "benchmark finished in $((SECONDS - start)) s (exit $rc)"

# The page shows the synced brokers' results (bench/results.json) with the unsynced ones'
# (bench/results-no-fsync.json) beside them, whichever of the two this run measured: a run of one
# kind alone keeps the other kind's last results on the page, which states each run's commit.
first=bench/results.json
other_args=()
if [ ! -f "$first" ]; then
  first=bench/results-no-fsync.json
elif [ -f bench/results-no-fsync.json ]; then
  other_args=(-other-results bench/results-no-fsync.json)
fi
# A separate run of our move and copy only (bench/results-copy.json) gives the page's copy section
# when these results have no copy run.
if [ -f bench/results-copy.json ]; then
  other_args+=(-copy-results bench/results-copy.json)
fi
# The whole-broker migration's results give the page's migration section.
if [ -f bench/results-migration.json ]; then
  other_args+=(-migration-results bench/results-migration.json)
fi
# The small moves' results give the page's small moves section.
if [ -f bench/results-small-moves.json ]; then
  other_args+=(-small-moves-results bench/results-small-moves.json)
fi
# The management sessions' results give the page's sessions section.
if [ -f bench/results-sessions.json ]; then
  other_args+=(-sessions-results bench/results-sessions.json)
fi
# The scale curve (bench/results-scale*.json) comes from runs of its own.
scale_files=$(find bench -maxdepth 1 -name 'results-scale*.json' ! -name '*.incomplete.json' | sort | paste -sd, -)
if [ -n "$scale_files" ]; then
  other_args+=(-scale-results "$scale_files")
fi
"$work/bench" -render-only -results "$first" -markdown BENCHMARKS.md -chart bench/throughput.png "${other_args[@]}"
go run -C tools/benchchart . -in "../../$first" -out ../../bench/throughput.png
log "wrote BENCHMARKS.md from $first${other_args[1]:+ and ${other_args[1]}}, and bench/throughput.png"
exit "$rc"
