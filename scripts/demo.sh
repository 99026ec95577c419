#!/usr/bin/env bash
# Runs the demo (`make demo`): starts the test environment, puts 10,000 messages of 1 KiB on queue
# demo.orders and 2,000 on demo.invoices of the source broker with Artemis's own CLI producer,
# builds the provider from this checkout, and runs `terraform plan` and `terraform apply` on
# examples/demo, which reads both brokers and the queue through the provider, MOVES demo.orders to
# the target broker and COPIES demo.invoices there (recorded in the environment's PostgreSQL
# ledger). It fails unless the target then holds exactly 10,000 and 2,000, demo.orders is empty on
# the source and demo.invoices still holds its 2,000.
#
# Nothing is downloaded from a registry: `make install` builds the provider into a filesystem
# mirror under $ARTEMIS_TESTENV_DIR/demo, a CLI config names that mirror as the only installation
# method, and `terraform init` installs the provider from it and writes the lock file, as the
# README tells users to do. Terraform runs in a copy of examples/demo under
# $ARTEMIS_TESTENV_DIR/demo, which keeps state, plans and the lock file out of the repo.
#
# Environment (besides those of scripts/testenv.sh, which it honours):
#   DEMO_KEEP_ENV   1 (default): leave the environment running afterwards, for a look around;
#                   stop it with `make testenv-down`.
#                   0: stop and remove the environment at the end, also when the demo fails, if
#                   the demo started it (CI does this); one that was already running is left alone.
#   ARTEMIS_TESTENV_DIR, TESTENV_PORT_SHIFT, TESTENV_PG_PORT: where and on which ports, as for
#                   scripts/testenv.sh (default: the default environment; TESTENV_PORT_SHIFT=auto
#                   with a new ARTEMIS_TESTENV_DIR runs the demo beside other environments).
#   DEMO_TERRAFORM  the CLI that runs the demo: terraform (default) or another one by name or path,
#                   such as the OpenTofu that `make test-tofu` builds (scripts/tofu.sh).
set -euo pipefail

QUEUE=demo.orders
MESSAGE_COUNT=10000
MESSAGE_SIZE=1024
COPY_QUEUE=demo.invoices
COPY_COUNT=2000

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Same default as scripts/testenv.sh; exported so that both agree on it.
export ARTEMIS_TESTENV_DIR=${ARTEMIS_TESTENV_DIR:-${TMPDIR:-/tmp}/terraform-provider-artemis-testenv}
keep_env=${DEMO_KEEP_ENV:-1}
testenv=(bash "$repo/scripts/testenv.sh")
env_file=$ARTEMIS_TESTENV_DIR/testenv.json
work=$ARTEMIS_TESTENV_DIR/demo

log() { printf '\ndemo [%ss]: %s\n' "$SECONDS" "$*" >&2; }
die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }

case "$keep_env" in
  0 | 1) ;;
  *) die "DEMO_KEEP_ENV must be 0 or 1, got '$keep_env'" ;;
esac

# The exit status stays the demo's; the environment is stopped or pointed out also on failure.
started_env=0
on_exit() {
  local rc=$?
  if [ "$keep_env" = 0 ] && [ "$started_env" = 1 ]; then
    "${testenv[@]}" down || true
  elif [ "$keep_env" = 0 ]; then
    printf 'demo: the environment in %s was running before the demo, so it is left running\n' "$ARTEMIS_TESTENV_DIR" >&2
  elif [ "$rc" != 0 ] && [ -d "$ARTEMIS_TESTENV_DIR" ]; then
    printf 'demo: the environment is left running; stop it with: ARTEMIS_TESTENV_DIR=%s make testenv-down\n' \
      "$ARTEMIS_TESTENV_DIR" >&2
  fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

command -v go >/dev/null || die "Go is needed to build the provider"
command -v make >/dev/null || die "make is needed: the demo installs the provider with make install"
cli=${DEMO_TERRAFORM:-terraform}
command -v "$cli" >/dev/null || die "the Terraform CLI is needed on PATH (https://developer.hashicorp.com/terraform/install), or DEMO_TERRAFORM naming another: '$cli' is not there"

# env_get KEY.PATH: prints one value of testenv.json, e.g. env_get brokers.source.amqp_url.
if command -v jq >/dev/null; then
  env_get() { jq -er --arg p "$1" 'getpath($p | split("."))' "$env_file"; }
elif command -v python3 >/dev/null; then
  env_get() {
    python3 - "$env_file" "$1" <<'PY'
import json, sys
value = json.load(open(sys.argv[1]))
for key in sys.argv[2].split("."):
    value = value[key]
print(value)
PY
  }
else
  die "jq or python3 is needed to read $env_file"
fi

log "starting the test environment in $ARTEMIS_TESTENV_DIR"
# Only an environment the demo starts is the demo's to stop (DEMO_KEEP_ENV=0).
[ -e "$env_file" ] || started_env=1
"${testenv[@]}" up

artemis_home=$(env_get artemis_home)
source_core_url=$(env_get brokers.source.core_url)

# Purge first so that every run starts from the same 10,000 (purging a queue that does not exist
# yet only prints a notice). The producer creates the queue; committing every 1,000 messages
# saves waiting on each durable send.
log "putting $MESSAGE_COUNT messages of $MESSAGE_SIZE bytes on $QUEUE of broker source ($source_core_url)"
export ARTEMIS_INSTANCE
ARTEMIS_INSTANCE=$(env_get brokers.source.instance_dir)
admin=(--url "$source_core_url" --user "$(env_get admin_user)" --password "$(env_get admin_password)")
for q in "$QUEUE" "$COPY_QUEUE"; do
  "$artemis_home/bin/artemis" queue purge --name "$q" "${admin[@]}" --silent
done
"$artemis_home/bin/artemis" producer "${admin[@]}" --destination "queue://$QUEUE" \
  --message-count "$MESSAGE_COUNT" --message-size "$MESSAGE_SIZE" --commit-interval 1000 --silent
log "putting $COPY_COUNT messages on $COPY_QUEUE of broker source (the demo copies this one)"
"$artemis_home/bin/artemis" producer "${admin[@]}" --destination "queue://$COPY_QUEUE" \
  --message-count "$COPY_COUNT" --message-size "$MESSAGE_SIZE" --commit-interval 1000 --silent

# The transfer needs its target queue; an operator would have it already. Empty it, so that the
# depths printed at the end are the transfer's.
target_core_url=$(env_get brokers.target.core_url)
target_admin=(--url "$target_core_url" --user "$(env_get admin_user)" --password "$(env_get admin_password)")
for q in "$QUEUE" "$COPY_QUEUE"; do
  ARTEMIS_INSTANCE=$(env_get brokers.target.instance_dir) "$artemis_home/bin/artemis" queue create --name "$q" \
    --address "$q" --anycast --durable --preserve-on-no-consumers --auto-create-address "${target_admin[@]}" --silent \
    >/dev/null 2>&1 || true
  ARTEMIS_INSTANCE=$(env_get brokers.target.instance_dir) "$artemis_home/bin/artemis" queue purge --name "$q" \
    "${target_admin[@]}" --silent
done

# queue_depth BROKER [QUEUE]: the depth of a queue ($QUEUE by default), as Artemis's own
# `queue stat` reports it.
queue_depth() {
  local url instance queue=${2:-$QUEUE}
  url=$(env_get "brokers.$1.core_url")
  instance=$(env_get "brokers.$1.instance_dir")
  ARTEMIS_INSTANCE=$instance "$artemis_home/bin/artemis" queue stat --url "$url" --user "$(env_get admin_user)" \
    --password "$(env_get admin_password)" --field NAME --operation EQUALS --value "$queue" --silent 2>/dev/null \
    | awk -F'|' -v q="$queue" '{ for (i = 1; i <= NF; i++) gsub(/^ +| +$/, "", $i) } $2 == q { print $5; exit }'
}

log "installing the provider from $repo into a filesystem mirror (make install)"
rm -rf "$work"
mkdir -p "$work/mirror" "$work/terraform"
make -C "$repo" --no-print-directory install PROVIDER_MIRROR="$work/mirror"

# OpenTofu prints warnings about its CLI config on stdout, before its version: pick the line.
cli_version=$("$cli" version 2>/dev/null | awk '/^(Terraform|OpenTofu) v/ && !n++')
[ -n "$cli_version" ] || die "'$cli version' printed no Terraform or OpenTofu version"
log "running the demo with $cli_version ($(command -v "$cli"))"
# The mirror is the only installation method, so init cannot fall back to a registry.
# examples/demo names the provider with its host, registry.terraform.io, as the README tells
# OpenTofu users to, so one mirror serves both CLIs.
cat > "$work/terraformrc" <<EOF
provider_installation {
  filesystem_mirror {
    path    = "$work/mirror"
    include = ["registry.terraform.io/artemis-studio/artemis"]
  }
}
EOF
cp "$repo"/examples/demo/*.tf "$work/terraform/"

export TF_CLI_CONFIG_FILE=$work/terraformrc CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
export TF_VAR_source_management_url TF_VAR_source_amqp_url TF_VAR_target_management_url \
  TF_VAR_target_amqp_url TF_VAR_username TF_VAR_password TF_VAR_queue=$QUEUE TF_VAR_copy_queue=$COPY_QUEUE \
  TF_VAR_ledger_dsn
TF_VAR_source_management_url=$(env_get brokers.source.management_url)
TF_VAR_source_amqp_url=$(env_get brokers.source.amqp_url)
TF_VAR_target_management_url=$(env_get brokers.target.management_url)
TF_VAR_target_amqp_url=$(env_get brokers.target.amqp_url)
TF_VAR_username=$(env_get transfer_user)
TF_VAR_password=$(env_get transfer_password)
# The copy records what it copies in the environment's PostgreSQL (the transfer ledger).
TF_VAR_ledger_dsn=$(env_get postgres_dsn)

# Terraform colours its output even when it goes to a CI log.
color=()
[ -t 1 ] || color=(-no-color)
tf() { "$cli" -chdir="$work/terraform" "$@"; }

log "$(basename "$cli") init (installs the provider from the mirror, writes the lock file)"
tf init -input=false "${color[@]}"
log "$(basename "$cli") plan (examples/demo, copied to $work/terraform)"
tf plan -input=false "${color[@]}"
log "$(basename "$cli") apply (prints the outputs)"
tf apply -input=false -auto-approve "${color[@]}"

depth=$(tf output -raw source_queue_depth)
[ "$depth" = "$MESSAGE_COUNT" ] || die "the plan saw $depth messages on $QUEUE, expected $MESSAGE_COUNT"
moved=$(tf output -raw messages_moved)
[ "$moved" = "$MESSAGE_COUNT" ] || die "the transfer moved $moved messages, expected $MESSAGE_COUNT"
copied=$(tf output -raw messages_copied)
[ "$copied" = "$COPY_COUNT" ] || die "the copy copied $copied messages, expected $COPY_COUNT"

log "queue depths after the transfer, as 'artemis queue stat' reports them"
src_after=$(queue_depth source)
tgt_after=$(queue_depth target)
copy_src_after=$(queue_depth source "$COPY_QUEUE")
copy_tgt_after=$(queue_depth target "$COPY_QUEUE")
printf 'demo:   moved:  source %s: %s messages, target %s: %s messages\n' "$QUEUE" "$src_after" "$QUEUE" "$tgt_after" >&2
printf 'demo:   copied: source %s: %s messages, target %s: %s messages\n' "$COPY_QUEUE" "$copy_src_after" "$COPY_QUEUE" "$copy_tgt_after" >&2
[ "$src_after" = 0 ] && [ "$tgt_after" = "$MESSAGE_COUNT" ] \
  || die "after the move the source holds $src_after and the target $tgt_after messages"
[ "$copy_src_after" = "$COPY_COUNT" ] && [ "$copy_tgt_after" = "$COPY_COUNT" ] \
  || die "after the copy the source holds $copy_src_after and the target $copy_tgt_after messages, expected $COPY_COUNT on each"
depth=$moved

if [ "$keep_env" = 1 ]; then
  cat >&2 <<EOF

demo: done: the transfer moved $depth messages from $QUEUE on broker source to broker target, and
demo: copied $copied messages of $COPY_QUEUE there, leaving the source queue as it was.
demo: the environment is still running. To look around:
demo:   TF_CLI_CONFIG_FILE=$work/terraformrc $cli -chdir=$work/terraform output
demo:   cat $env_file
demo: stop it with:
demo:   ARTEMIS_TESTENV_DIR=$ARTEMIS_TESTENV_DIR make testenv-down
EOF
else
  log "done: moved $depth messages of $QUEUE and copied $copied of $COPY_QUEUE from broker source to broker target (DEMO_KEEP_ENV=0: the environment stops if the demo started it)"
fi
