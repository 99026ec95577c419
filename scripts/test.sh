#!/usr/bin/env bash
# Every test (make test): unit, integration and acceptance, in TEST_SHARDS groups that run side by
# side, each against an environment of its own (scripts/testenv.sh run --cluster: brokers and
# PostgreSQL in a new state folder on the first free port shift, stopped afterwards whatever
# happened). Within a group, tests run one after another as they always have, since some kill or
# restart a broker of their environment; across groups nothing is shared but the machine.
#
#   scripts/test.sh                 every test, TEST_SHARDS (default 3) groups side by side
#   scripts/test.sh --durations FILE...
#                                   writes scripts/test-durations.tsv from the output of
#                                   `make test GO_TEST_FLAGS=-json` (needs jq)
#
# The groups are balanced by each test's last measured duration (scripts/test-durations.tsv; a test
# it does not list counts as DEFAULT_SECONDS): the longest first, each to the group with the least
# so far. A stale file only unbalances the groups; every listed test still runs exactly once, since
# each group runs its packages with -run naming exactly its own top-level tests.
#
# Environment: TEST_SHARDS, GO_TEST_TIMEOUT (per package, default 45m), GO_TEST_FLAGS (passed to go
# test, e.g. -json), TEST_FAILURES_FILE (where the names of failed tests are written when any fails)
# and scripts/testenv.sh's own variables. Output: each group's go test output, in
# group order, once all are done (stdout), and one line per package as it finishes (stderr).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DURATIONS=scripts/test-durations.tsv
DEFAULT_SECONDS=3

if [ "${1:-}" = --durations ]; then
  shift
  [ $# -gt 0 ] || { echo "test: give the go test -json output files" >&2; exit 2; }
  {
    echo "# package	test	seconds (the last measured duration of each top-level test, for scripts/test.sh)"
    jq -rR 'fromjson? | select(.Test != null and (.Test | contains("/") | not) and (.Action == "pass" or .Action == "fail"))
           | [.Package, .Test, (.Elapsed | tostring)] | @tsv' "$@" | sort
  } > "$DURATIONS.new"
  mv "$DURATIONS.new" "$DURATIONS"
  echo "test: wrote $DURATIONS ($(grep -vc '^#' "$DURATIONS") tests)" >&2
  exit 0
fi

shards=${TEST_SHARDS:-3}
case $shards in '' | *[!0-9]* | 0) echo "test: TEST_SHARDS must be a positive number, not '$shards'" >&2; exit 2 ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/terraform-provider-artemis-shards.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in ${pids[@]+"${pids[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The Artemis distributions once, before the groups start their environments side by side.
bash scripts/testenv.sh fetch

# Every package's top-level tests (compiling every test binary once; the groups reuse the build).
# No environment is named here, so nothing runs but the listing.
env -u ARTEMIS_TESTENV_FILE -u ARTEMIS_TESTENV_DIR -u ARTEMIS_TESTENV_REQUIRED \
  go test -count=1 -list '.*' ./... > "$work/list" 2> "$work/list.err" || {
  cat "$work/list" "$work/list.err" >&2
  echo "test: listing the tests failed (above)" >&2
  exit 1
}
awk '/^(Test|Example|Fuzz)/ { names[++n] = $1; next }
     /^ok[ \t]/ { for (i = 1; i <= n; i++) print $2 "\t" names[i]; n = 0; next }
     { n = 0 }' "$work/list" > "$work/tests"

# Balance: longest first, each to the group with the least so far.
awk -F '\t' -v shards="$shards" -v dflt="$DEFAULT_SECONDS" '
  FNR == NR { if ($0 !~ /^#/) secs[$1 "\t" $2] = $3; next }
  { key = $1 "\t" $2; print ((key in secs) ? secs[key] : dflt) "\t" key }' \
  <([ -f "$DURATIONS" ] && cat "$DURATIONS" || true) "$work/tests" |
  sort -t "$(printf '\t')" -k1,1gr -k2,2 -k3,3 |
  awk -F '\t' -v shards="$shards" '
    { best = 0; for (s = 1; s < shards; s++) if (load[s] < load[best]) best = s
      load[best] += $1; print best "\t" $2 "\t" $3 }
    END { for (s = 0; s < shards; s++) printf "%d\t%.0f\n", s, load[s] > "/dev/stderr" }' \
  > "$work/assigned" 2> "$work/loads"

total=$(wc -l < "$work/tests")
echo "test: $total tests in $(cut -f1 "$work/tests" | sort -u | wc -l) packages, $shards groups side by side (expected seconds per group: $(cut -f2 "$work/loads" | paste -sd ' '))" >&2

# run_shard N: the group's packages, one go test each, with -run naming exactly its tests.
run_shard() {
  local shard=$1 rc=0 pkg pattern start
  local packages
  packages=$(awk -F '\t' -v s="$shard" '$1 == s { print $2 }' "$work/assigned" | sort -u)
  for pkg in $packages; do
    pattern=$(awk -F '\t' -v s="$shard" -v p="$pkg" '$1 == s && $2 == p { print $3 }' "$work/assigned" | sort | paste -sd '|')
    start=$SECONDS
    if ARTEMIS_TESTENV_REQUIRED=1 TF_ACC=1 TF_ACC_TERRAFORM_PATH="$(command -v terraform)" CHECKPOINT_DISABLE=1 \
      go test "$pkg" -count=1 -run "^($pattern)\$" -timeout "${GO_TEST_TIMEOUT:-45m}" ${GO_TEST_FLAGS:-} \
      >> "$work/shard-$shard.out"; then
      echo "test: ok     $pkg ($((SECONDS - start))s)" >&2
    else
      rc=1
      echo "test: FAILED $pkg ($((SECONDS - start))s)" >&2
    fi
  done
  return "$rc"
}
export -f run_shard
export work

for ((s = 0; s < shards; s++)); do
  : > "$work/shard-$s.out"
  bash scripts/testenv.sh run --cluster -- bash -c "run_shard $s" 2> >(sed -u "s/^/[group $s] /" >&2) &
  pids+=($!)
done

rc=0
for ((s = 0; s < shards; s++)); do
  wait "${pids[$s]}" || { rc=1; echo "test: group $s failed" >&2; }
done
pids=()
for ((s = 0; s < shards; s++)); do cat "$work/shard-$s.out"; done
if [ "$rc" = 0 ]; then
  echo "test: every group passed ($total tests)" >&2
  exit 0
fi
# The failed tests by name, last, where a reader of a long log (CI shows its tail) finds them; with
# TEST_FAILURES_FILE set, also written there for a later summary.
failed=$(for ((s = 0; s < shards; s++)); do
  awk -v g="$s" '/^[ \t]*--- FAIL: / { sub(/^[ \t]*/, ""); print "group " g ": " $0 }
                 /^FAIL[ \t]+[^ \t]+[ \t]/ { print "group " g ": " $0 }' "$work/shard-$s.out"
done)
{
  echo "test: a group failed; the failed tests and packages (their output is above):"
  printf '%s\n' "${failed:-(no --- FAIL line: a build failed, or a test binary panicked or timed out)}" | sed 's/^/test:   /'
} >&2
if [ -n "${TEST_FAILURES_FILE:-}" ]; then printf '%s\n' "${failed:-no --- FAIL line (a build failure, panic or timeout)}" > "$TEST_FAILURES_FILE"; fi
exit "$rc"
