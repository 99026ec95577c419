#!/usr/bin/env bash
# Starts and stops the real Apache ActiveMQ Artemis brokers and the throwaway PostgreSQL cluster
# that the tests, the benchmarks and the demo run against. Everything listens on loopback only.
#
#   scripts/testenv.sh up        obtain Artemis (Maven Central, cached), create and start brokers and PostgreSQL
#   scripts/testenv.sh down      stop everything and delete the state folder
#   scripts/testenv.sh status    say what runs
#   scripts/testenv.sh logs      print the tail of every log
#   scripts/testenv.sh kill-broker NAME | start-broker NAME | stop-broker NAME
#                                for fault tests: SIGKILL, (re)start, or stop one broker
#
# Brokers (name: version, port offset):
#   source: 2.40.0, +100   AMQP 5772, all-protocols 61716, Jolokia http://127.0.0.1:8261/console/jolokia
#   target: 2.40.0, +200   AMQP 5872, AMQPS (self-signed CA) 5873, AMQP without duplicate
#                          detection 5874, Jolokia 8361
#   legacy: 2.31.2, +300   AMQP 5972, Jolokia 8461 (cross-version moves)
#   node1/node2: 2.40.0, +400/+500, one cluster (only with TESTENV_CLUSTER=1 or `up --cluster`)
#
# Environment:
#   ARTEMIS_HOME            use this Artemis distribution for the 2.40 brokers instead of downloading
#   ARTEMIS_LEGACY_HOME     likewise for the legacy broker
#   ARTEMIS_CACHE_DIR       where downloaded distributions are kept (default ~/.cache/terraform-provider-artemis)
#   ARTEMIS_TESTENV_DIR     state folder (default ${TMPDIR:-/tmp}/terraform-provider-artemis-testenv)
#   TESTENV_PG_PORT         PostgreSQL port (default 15532)
#   TESTENV_PORT_SHIFT      added to every broker port offset (default 0), to run a second
#                           environment beside the first (with its own ARTEMIS_TESTENV_DIR)
#
# `up` writes $ARTEMIS_TESTENV_DIR/testenv.json, which internal/testenv reads.
set -euo pipefail

ARTEMIS_VERSION=2.40.0
ARTEMIS_LEGACY_VERSION=2.31.2
CACHE_DIR=${ARTEMIS_CACHE_DIR:-$HOME/.cache/terraform-provider-artemis}
STATE_DIR=${ARTEMIS_TESTENV_DIR:-${TMPDIR:-/tmp}/terraform-provider-artemis-testenv}
PG_PORT=${TESTENV_PG_PORT:-15532}
SHIFT=${TESTENV_PORT_SHIFT:-0}
ADMIN_USER=admin
ADMIN_PASSWORD=admin-secret
TRANSFER_USER=transfer
TRANSFER_PASSWORD=transfer-secret
# A user who may log in to management and read, and nothing else: plans must refuse transfers
# run as this user.
VIEWER_USER=viewer
VIEWER_PASSWORD=viewer-secret
READY_TIMEOUT=${TESTENV_READY_TIMEOUT:-120}

log() { printf 'testenv: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------------------------------------
# Artemis distributions

# artemis_home VERSION OVERRIDE_VAR: prints the folder of an unpacked distribution, downloading
# it from Maven Central through Maven once.
artemis_home() {
  local version=$1 override=${2:-}
  if [ -n "$override" ]; then
    [ -x "$override/bin/artemis" ] || die "$override/bin/artemis not found (check ARTEMIS_HOME)"
    printf '%s\n' "$override"
    return
  fi
  local home="$CACHE_DIR/apache-artemis-$version"
  if [ ! -x "$home/bin/artemis" ]; then
    local archive="$CACHE_DIR/dist/apache-artemis-$version-bin.tar.gz"
    if [ ! -s "$archive" ]; then
      command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch Artemis $version from Maven Central"
      log "fetching org.apache.activemq:apache-artemis:$version:tar.gz:bin from Maven Central"
      mkdir -p "$CACHE_DIR/dist"
      mvn -q -B dependency:copy \
        -Dartifact="org.apache.activemq:apache-artemis:$version:tar.gz:bin" \
        -DoutputDirectory="$CACHE_DIR/dist" >&2 || die "mvn could not fetch Artemis $version"
    fi
    tar -xzf "$archive" -C "$CACHE_DIR"
  fi
  printf '%s\n' "$home"
}

# ---------------------------------------------------------------------------------------------
# TLS material: a throwaway CA and a server certificate for 127.0.0.1/localhost.

make_tls() {
  local dir="$STATE_DIR/tls"
  [ -s "$dir/server.p12" ] && return
  mkdir -p "$dir"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=testenv CA" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$dir/san.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 30 -extfile "$dir/san.ext" -out "$dir/server.pem" 2>/dev/null
  openssl pkcs12 -export -in "$dir/server.pem" -inkey "$dir/server.key" -passout pass:keystore-secret \
    -out "$dir/server.p12" 2>/dev/null
}

# ---------------------------------------------------------------------------------------------
# Brokers

broker_dir() { printf '%s/brokers/%s\n' "$STATE_DIR" "$1"; }
broker_pidfile() { printf '%s/brokers/%s.pid\n' "$STATE_DIR" "$1"; }

# create_broker NAME HOME OFFSET [extra create args...]
create_broker() {
  local name=$1 home=$2 offset=$(($3 + SHIFT))
  shift 3
  local dir
  dir=$(broker_dir "$name")
  [ -f "$dir/etc/broker.xml" ] && return
  log "creating broker $name (offset +$offset)"
  mkdir -p "$STATE_DIR/brokers"
  "$home/bin/artemis" create "$dir" --silent --force \
    --user "$ADMIN_USER" --password "$ADMIN_PASSWORD" --require-login --role amq \
    --name "$name" --host 127.0.0.1 --http-host 127.0.0.1 --port-offset "$offset" \
    --no-autotune --nio --no-fsync --java-memory 1G \
    --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor "$@" \
    > "$STATE_DIR/brokers/$name.create.log" 2>&1 || { cat "$STATE_DIR/brokers/$name.create.log" >&2; die "artemis create $name failed"; }

  # The transfer user holds only what a transfer needs (docs/guides/broker-permissions.md).
  printf '\n%s = %s\n%s = %s\n' "$TRANSFER_USER" "$TRANSFER_PASSWORD" "$VIEWER_USER" "$VIEWER_PASSWORD" >> "$dir/etc/artemis-users.properties"
  printf '\ntransfer = %s\nviewer = %s\n' "$TRANSFER_USER" "$VIEWER_USER" >> "$dir/etc/artemis-roles.properties"

  # Console/Jolokia login: 2.40 reads HAWTIO_ROLES, older versions HAWTIO_ROLE.
  sed -i -e "s/^HAWTIO_ROLES='amq'/HAWTIO_ROLES='amq,transfer,viewer'/" \
         -e "s/^HAWTIO_ROLE='amq'/HAWTIO_ROLE='amq,transfer,viewer'/" "$dir/etc/artemis.profile"

  # JMX RBAC for the transfer role: read everything, and only the operations a transfer calls.
  # The most specific method pattern wins, so each named operation lists amq again.
  local ops
  ops=""
  for m in 'list*' 'get*' 'is*'; do
    ops+="            <access method=\"$m\" roles=\"amq,transfer,viewer\"/>\n"
  done
  for m in 'count*' 'browse*' moveMessages moveMessage retryMessages \
           createQueue destroyQueue createAddress deleteAddress addAddressSettings removeAddressSettings; do
    ops+="            <access method=\"$m\" roles=\"amq,transfer\"/>\n"
  done
  sed -i "0,\|<match domain=\"org.apache.activemq.artemis\">|s||<match domain=\"org.apache.activemq.artemis\">\n$ops|" \
    "$dir/etc/management.xml"
  sed -i "0,\|<default-access>|s||<default-access>\n            <access method=\"get*\" roles=\"amq,transfer,viewer\"/>\n            <access method=\"is*\" roles=\"amq,transfer,viewer\"/>|" \
    "$dir/etc/management.xml"

  # Messaging permissions for the transfer role: send and browse anywhere, consume and manage
  # only its own staging queues. A security match does not merge with "#", so amq is repeated.
  {
    for p in send browse; do printf 'securityRoles."#".transfer.%s=true\n' "$p"; done
    for p in send consume browse createDurableQueue deleteDurableQueue createAddress deleteAddress \
             createNonDurableQueue deleteNonDurableQueue manage; do
      printf 'securityRoles."studio.transfer.#".amq.%s=true\n' "$p"
      printf 'securityRoles."studio.transfer.#".transfer.%s=true\n' "$p"
    done
  } >> "$dir/etc/broker.properties"
}

# add_acceptor BROKER NAME URL: one more acceptor in broker.xml.
add_acceptor() {
  local name=$1 acceptor=$2 url=$3 dir
  dir=$(broker_dir "$name")
  grep -q "acceptor name=\"$acceptor\"" "$dir/etc/broker.xml" && return
  sed -i "s#</acceptors>#   <acceptor name=\"$acceptor\">${url//&/\\&}</acceptor>\n      </acceptors>#" "$dir/etc/broker.xml"
}

# The target gets an AMQPS acceptor (self-signed CA) for TLS tests, and an AMQP acceptor with
# duplicate detection off, which a transfer must refuse.
add_target_acceptors() {
  local port=$1
  add_acceptor target amqps "tcp://127.0.0.1:$port?protocols=AMQP;sslEnabled=true;keyStorePath=$STATE_DIR/tls/server.p12;keyStorePassword=keystore-secret;keyStoreType=PKCS12;amqpDuplicateDetection=true;amqpMinLargeMessageSize=102400"
  add_acceptor target amqp-nodedup "tcp://127.0.0.1:$((port + 1))?protocols=AMQP;amqpDuplicateDetection=false"
}

broker_running() {
  local pidfile
  pidfile=$(broker_pidfile "$1")
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# start_broker NAME HTTP_PORT: starts in the background and waits for the broker's own
# "Server is now active" and "HTTP Server started" log lines.
start_broker() {
  local name=$1 dir
  dir=$(broker_dir "$name")
  broker_running "$name" && return
  [ -d "$dir" ] || die "no broker named $name (run 'up' first)"
  mkdir -p "$dir/log"
  local marker_log="$dir/log/artemis.log"
  local lines=0
  [ -f "$marker_log" ] && lines=$(wc -l < "$marker_log")
  log "starting broker $name"
  # setsid: the broker must outlive the shell that started it (make, go test).
  setsid nohup "$dir/bin/artemis" run >> "$dir/log/console.log" 2>&1 < /dev/null &
  echo $! > "$(broker_pidfile "$name")"
  local deadline=$((SECONDS + READY_TIMEOUT))
  while :; do
    if [ -f "$marker_log" ] && tail -n +"$((lines + 1))" "$marker_log" | grep -q 'AMQ221007' \
       && tail -n +"$((lines + 1))" "$marker_log" | grep -q 'AMQ241001'; then
      break
    fi
    if ! broker_running "$name"; then
      tail -n 40 "$dir/log/console.log" >&2 || true
      die "broker $name exited during start"
    fi
    if [ $SECONDS -ge $deadline ]; then
      tail -n 40 "$dir/log/console.log" >&2 || true
      die "broker $name not active after ${READY_TIMEOUT}s"
    fi
    sleep 0.3
  done
  log "broker $name is active"
}

stop_broker() {
  local name=$1 pidfile pid
  pidfile=$(broker_pidfile "$name")
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

kill_broker() {
  local name=$1 pidfile pid
  pidfile=$(broker_pidfile "$name")
  [ -f "$pidfile" ] || die "broker $name is not running"
  pid=$(cat "$pidfile")
  kill -9 "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$pidfile"
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL

pg_bin() {
  local b
  b=$(command -v initdb 2>/dev/null || true)
  if [ -n "$b" ]; then dirname "$(readlink -f "$b")"; return; fi
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { printf '%s\n' "$d"; return; }
  done
  log "PostgreSQL binaries not found; installing Debian's postgresql package"
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 \
    || die "could not install PostgreSQL"
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { printf '%s\n' "$d"; return; }
  done
  die "PostgreSQL binaries still not found"
}

# as_pg_user CMD...: PostgreSQL refuses to run as root, so root runs it as the postgres user.
as_pg_user() {
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start_postgres() {
  local bin data="$STATE_DIR/postgres/data" sock="$STATE_DIR/postgres/sock"
  bin=$(pg_bin)
  mkdir -p "$STATE_DIR/postgres" "$sock"
  [ "$(id -u)" -eq 0 ] && { id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres; chown -R postgres "$STATE_DIR/postgres"; }
  if [ ! -f "$data/PG_VERSION" ]; then
    log "creating PostgreSQL cluster"
    as_pg_user "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 > "$STATE_DIR/postgres/initdb.log" 2>&1 \
      || { cat "$STATE_DIR/postgres/initdb.log" >&2; die "initdb failed"; }
  fi
  if ! as_pg_user "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
    as_pg_user "$bin/pg_ctl" -D "$data" -w -t 60 -l "$STATE_DIR/postgres/postgres.log" \
      -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$sock -c fsync=off" start >/dev/null \
      || { tail -n 30 "$STATE_DIR/postgres/postgres.log" >&2; die "PostgreSQL did not start"; }
  fi
  as_pg_user "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname='artemis_ledger'" | grep -q 1 \
    || as_pg_user "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres artemis_ledger
}

stop_postgres() {
  local data="$STATE_DIR/postgres/data" bin
  [ -f "$data/PG_VERSION" ] || return 0
  bin=$(pg_bin)
  as_pg_user "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------------------------------------
# testenv.json, read by internal/testenv

broker_json() {
  local name=$1 version=$2 offset=$(($3 + SHIFT)) extra=${4:-}
  cat <<EOF
    "$name": {
      "version": "$version",
      "instance_dir": "$(broker_dir "$name")",
      "amqp_url": "amqp://127.0.0.1:$((5672 + offset))",
      "core_url": "tcp://127.0.0.1:$((61616 + offset))",
      "management_url": "http://127.0.0.1:$((8161 + offset))/console/jolokia"$extra
    }
EOF
}

write_env_json() {
  local cluster=$1 script
  script=$(readlink -f "$0")
  {
    printf '{\n  "script": "%s",\n  "state_dir": "%s",\n' "$script" "$STATE_DIR"
    printf '  "artemis_home": "%s",\n' "$(artemis_home $ARTEMIS_VERSION "${ARTEMIS_HOME:-}")"
    printf '  "admin_user": "%s", "admin_password": "%s",\n' "$ADMIN_USER" "$ADMIN_PASSWORD"
    printf '  "transfer_user": "%s", "transfer_password": "%s",\n' "$TRANSFER_USER" "$TRANSFER_PASSWORD"
    printf '  "viewer_user": "%s", "viewer_password": "%s",\n' "$VIEWER_USER" "$VIEWER_PASSWORD"
    printf '  "tls_ca_file": "%s",\n' "$STATE_DIR/tls/ca.pem"
    printf '  "postgres_dsn": "postgres://postgres@127.0.0.1:%s/artemis_ledger?sslmode=disable",\n' "$PG_PORT"
    printf '  "brokers": {\n'
    broker_json source $ARTEMIS_VERSION 100; printf ',\n'
    broker_json target $ARTEMIS_VERSION 200 ",
      \"amqps_url\": \"amqps://127.0.0.1:$((5673 + 200 + SHIFT))\",
      \"amqp_nodedup_url\": \"amqp://127.0.0.1:$((5674 + 200 + SHIFT))\""; printf ',\n'
    broker_json legacy $ARTEMIS_LEGACY_VERSION 300
    if [ "$cluster" = 1 ]; then
      printf ',\n'; broker_json node1 $ARTEMIS_VERSION 400
      printf ',\n'; broker_json node2 $ARTEMIS_VERSION 500
    fi
    printf '\n  }\n}\n'
  } > "$STATE_DIR/testenv.json.tmp"
  mv "$STATE_DIR/testenv.json.tmp" "$STATE_DIR/testenv.json"
}

# ---------------------------------------------------------------------------------------------

cmd_up() {
  local cluster=${TESTENV_CLUSTER:-0}
  [ "${1:-}" = "--cluster" ] && cluster=1
  command -v java >/dev/null || die "Java 17 is needed to run Artemis"
  mkdir -p "$STATE_DIR"
  local home legacy_home
  home=$(artemis_home $ARTEMIS_VERSION "${ARTEMIS_HOME:-}")
  legacy_home=$(artemis_home $ARTEMIS_LEGACY_VERSION "${ARTEMIS_LEGACY_HOME:-}")
  make_tls

  create_broker source "$home" 100
  create_broker target "$home" 200
  add_target_acceptors $((5673 + 200 + SHIFT))
  create_broker legacy "$legacy_home" 300
  if [ "$cluster" = 1 ]; then
    create_broker node1 "$home" 400 --clustered --cluster-user cluster --cluster-password cluster-secret \
      --staticCluster "tcp://127.0.0.1:$((61616 + 500 + SHIFT))" --max-hops 1
    create_broker node2 "$home" 500 --clustered --cluster-user cluster --cluster-password cluster-secret \
      --staticCluster "tcp://127.0.0.1:$((61616 + 400 + SHIFT))" --max-hops 1
  fi

  # Start the brokers in parallel: each waits on its own log line.
  local pids=() names=(source target legacy) n
  [ "$cluster" = 1 ] && names+=(node1 node2)
  for n in "${names[@]}"; do start_broker "$n" & pids+=($!); done
  start_postgres
  local failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  [ "$failed" = 0 ] || die "a broker did not start; see $STATE_DIR/brokers/*/log"
  write_env_json "$cluster"
  log "ready: $STATE_DIR/testenv.json"
}

cmd_down() {
  [ -d "$STATE_DIR" ] || return 0
  local f
  for f in "$STATE_DIR"/brokers/*.pid; do
    [ -e "$f" ] || continue
    stop_broker "$(basename "$f" .pid)" &
  done
  stop_postgres
  wait
  rm -rf "$STATE_DIR"
  log "stopped and removed $STATE_DIR"
}

cmd_status() {
  local d
  for d in "$STATE_DIR"/brokers/*/; do
    [ -d "$d" ] || continue
    local n
    n=$(basename "$d")
    if broker_running "$n"; then echo "broker $n: running"; else echo "broker $n: stopped"; fi
  done
  if [ -f "$STATE_DIR/postgres/data/PG_VERSION" ]; then
    as_pg_user "$(pg_bin)/pg_ctl" -D "$STATE_DIR/postgres/data" status >/dev/null 2>&1 \
      && echo "postgres: running" || echo "postgres: stopped"
  fi
}

cmd_logs() {
  local f
  for f in "$STATE_DIR"/brokers/*/log/artemis.log "$STATE_DIR"/postgres/postgres.log; do
    [ -f "$f" ] || continue
    printf '==== %s (last %s lines)\n' "$f" "${TESTENV_LOG_LINES:-60}"
    tail -n "${TESTENV_LOG_LINES:-60}" "$f"
  done
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  logs) cmd_logs ;;
  kill-broker) kill_broker "${2:?broker name}" ;;
  stop-broker) stop_broker "${2:?broker name}" ;;
  start-broker) start_broker "${2:?broker name}" ;;
  *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
