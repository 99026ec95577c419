#!/usr/bin/env bash
# Starts and stops the real Apache ActiveMQ Artemis brokers and the throwaway PostgreSQL cluster
# that the tests, the benchmarks and the demo run against. Everything listens on loopback only.
#
#   scripts/testenv.sh up [--cluster] [--new]
#                                obtain Artemis (Maven Central, cached), create and start brokers and
#                                PostgreSQL; --new: refuse a state folder that already holds an environment
#   scripts/testenv.sh run [--cluster] COMMAND...
#                                start a new environment of its own, run COMMAND pointed at it
#                                (ARTEMIS_TESTENV_FILE) and as its owner (ARTEMIS_TESTENV_OWNER), stop it;
#                                the exit status is COMMAND's. `make test` uses this.
#   scripts/testenv.sh fetch     obtain the Artemis distributions only (Maven Central, cached)
#   scripts/testenv.sh down      stop everything and delete the state folder
#   scripts/testenv.sh status    say what runs, on which ports
#   scripts/testenv.sh logs      print the tail of every log
#   scripts/testenv.sh kill-broker NAME | start-broker NAME | stop-broker NAME
#                                for fault tests: SIGKILL, (re)start, or stop one broker; only with the
#                                environment's owner token in ARTEMIS_TESTENV_OWNER
#   scripts/testenv.sh stop-postgres | start-postgres
#                                for fault tests: stop (fast shutdown) or start the environment's
#                                PostgreSQL; only with the owner token, as above
#
# Brokers (name: version, port offset), with the default TESTENV_PORT_SHIFT=0:
#   source: 2.40.0, +100   AMQP 5772, AMQPS 5773, all-protocols 61716,
#                          Jolokia http://127.0.0.1:8261/console/jolokia and https on 8262
#   target: 2.40.0, +200   AMQP 5872, AMQPS 5873, AMQP without duplicate detection 5874,
#                          Jolokia 8361, https on 8362
#   (AMQPS and https use a certificate from the environment's own CA, tls/ca.pem)
#   legacy: 2.31.2, +300   AMQP 5972, Jolokia 8461 (cross-version moves; TESTENV_LEGACY_VERSION
#                          picks another version, as make test-versions does)
#   node1/node2: 2.40.0, +400/+500, one cluster (only with TESTENV_CLUSTER=1 or `up --cluster`)
#   PostgreSQL: 15532
#
# Environment:
#   ARTEMIS_HOME            use this Artemis distribution for the 2.40 brokers instead of downloading
#   ARTEMIS_LEGACY_HOME     likewise for the legacy broker
#   TESTENV_LEGACY_VERSION  the legacy broker's Artemis version (default 2.31.2): any version whose
#                           apache-artemis bin distribution Maven Central serves, 2.18.0 or later
#   ARTEMIS_CACHE_DIR       where downloaded distributions are kept (default ~/.cache/terraform-provider-artemis)
#   ARTEMIS_TESTENV_DIR     state folder (default ${TMPDIR:-/tmp}/terraform-provider-artemis-testenv;
#                           `run`: a new folder ${TMPDIR:-/tmp}/terraform-provider-artemis-test.XXXXXX)
#   TESTENV_PORT_SHIFT      added to every port above (default 0; `run`: auto), to run another
#                           environment beside the first, with its own ARTEMIS_TESTENV_DIR. auto takes
#                           the first of 500 1500 2000 2500 3000 1000 whose ports are all free and that
#                           no other environment has claimed (claims: ${TMPDIR:-/tmp}/terraform-provider-
#                           artemis-ports); never 0, the default environment's. `make bench` uses 1000.
#   TESTENV_PG_PORT         PostgreSQL port (default 15532 + the shift)
#   TESTENV_JOURNAL         how `up` creates its brokers: fast (default: --no-autotune --nio
#                           --no-fsync, for tests) or synced (`artemis create`'s own defaults, journal
#                           sync on and autotune, as operators run brokers; make bench's standard)
#   TESTENV_JAVA_MEMORY     the brokers' heap (`artemis create --java-memory`, default 1G); make
#                           bench's scale curve gives its brokers more (BENCH_SCALE_JAVA_MEMORY)
#   TESTENV_GLOBAL_MAX_SIZE the brokers' memory for messages before they page (`artemis create
#                           --global-max-size`; default: Artemis's, half the heap)
#   ARTEMIS_TESTENV_OWNER   the owner token: `up` of a new environment records its SHA-256 in
#                           testenv.json (a random token, printed, when unset); kill-broker,
#                           stop-broker, start-broker and the Go tests that use them refuse without it,
#                           so that one test run never takes down brokers another run is using
#
# `up` checks every port it needs before it starts anything and fails, naming the port, when one
# is taken; an environment's shift and PostgreSQL port are fixed at its first `up`.
# `up` writes $ARTEMIS_TESTENV_DIR/testenv.json, which internal/testenv reads once a test is
# pointed at it (ARTEMIS_TESTENV_FILE or ARTEMIS_TESTENV_DIR; tests never look at a default path).
set -euo pipefail

ARTEMIS_VERSION=2.40.0
ARTEMIS_LEGACY_VERSION=${TESTENV_LEGACY_VERSION:-2.31.2}
CACHE_DIR=${ARTEMIS_CACHE_DIR:-$HOME/.cache/terraform-provider-artemis}
STATE_DIR=$(readlink -m "${ARTEMIS_TESTENV_DIR:-${TMPDIR:-/tmp}/terraform-provider-artemis-testenv}")
# SHIFT and PG_PORT are settled by choose_ports (up) or read from the state folder (load_ports).
SHIFT=${TESTENV_PORT_SHIFT:-0}
PG_PORT=${TESTENV_PG_PORT:-}
# Shifts that `auto` tries: 500 apart (wider than the +100..+502 that one environment spans) and
# all below 65535. Never 0, the default environment's (make testenv-up, demo, testacc); 1000,
# make bench's, last.
AUTO_SHIFTS="500 1500 2000 2500 3000 1000"
CLAIM_ROOT=${TMPDIR:-/tmp}/terraform-provider-artemis-ports
# The journal flags of `artemis create` (TESTENV_JOURNAL): none for synced, its own defaults.
# Test brokers (fast) also look for auto-delete queues and addresses every second instead of
# every 30 s (address-queue-scan-period), so a test of what the broker deletes waits for the
# deletion, not for the scan; synced brokers keep every default, as operators run them.
case ${TESTENV_JOURNAL:-fast} in
  fast) JOURNAL_ARGS=(--no-autotune --nio --no-fsync) SCAN_PERIOD_MS=1000 ;;
  synced) JOURNAL_ARGS=() SCAN_PERIOD_MS= ;;
  *) printf 'testenv: TESTENV_JOURNAL=%s: use fast or synced\n' "$TESTENV_JOURNAL" >&2; exit 2 ;;
esac
ADMIN_USER=admin
ADMIN_PASSWORD=admin-secret
TRANSFER_USER=transfer
TRANSFER_PASSWORD=transfer-secret
# A reviewer (docs/guides/broker-permissions.md, "Reviewers"): console login, read-only
# management (get*, is*, list*, count*, browse*) and AMQP browse; a default plan, which only
# reads, passes as this user, and an apply (or a plan with plan_sends_canaries) is refused.
VIEWER_USER=viewer
VIEWER_PASSWORD=viewer-secret
VIEWER_JMX='list* get* is* count* browse*'

# Every permission the transfer user holds, the one list the broker configuration is written
# from; it is exactly what docs/guides/broker-permissions.md lists. Each row: kind, permission,
# and a user (password $LP_PASSWORD) whose role has every other row but not this one, for the
# least-privilege tests. Kinds: login (the console's HAWTIO_ROLES), jmx (a method pattern in
# management.xml), staging (a security setting on studio.transfer.#), any (on #).
TRANSFER_PERMISSIONS='
login   console                 lp-login
jmx     list*                   lp-list
jmx     get*                    lp-get
jmx     is*                     lp-is
jmx     count*                  lp-count
jmx     browse*                 lp-browse-jmx
jmx     moveMessages            lp-movemessages
jmx     moveMessage             lp-movemessage
jmx     createQueue             lp-createqueue
jmx     destroyQueue            lp-destroyqueue
jmx     addAddressSettings      lp-addaddresssettings
jmx     removeAddressSettings   lp-removeaddresssettings
staging send                    lp-staging-send
staging consume                 lp-staging-consume
staging browse                  lp-staging-browse
any     send                    lp-send
any     browse                  lp-browse
'
LP_PASSWORD=lp-secret

# permission_rows: the rows of TRANSFER_PERMISSIONS, one "kind permission user" a line.
permission_rows() { printf '%s\n' "$TRANSFER_PERMISSIONS" | awk 'NF == 3'; }

# roles_holding KIND PERMISSION: the roles (comma-separated) granted one permission: transfer,
# and every least-privilege role except the one that lacks it.
roles_holding() {
  local roles=transfer kind perm user
  while read -r kind perm user; do
    [ "$kind" = "$1" ] && [ "$perm" = "$2" ] && continue
    roles+=",$user"
  done < <(permission_rows)
  printf '%s\n' "$roles"
}

# permission_key KIND PERMISSION: how testenv.json names a permission (least_privilege_users).
permission_key() {
  case $1 in
    login) echo "console login" ;;
    jmx) echo "$2" ;;
    staging) echo "$2 on studio.transfer.#" ;;
    any) echo "$2 on #" ;;
  esac
}
READY_TIMEOUT=${TESTENV_READY_TIMEOUT:-120}

log() { printf 'testenv: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------------------------------------
# Artemis distributions

# artemis_home VERSION OVERRIDE_VAR: prints the folder of an unpacked distribution, downloading
# it from Maven Central through Maven once.
artemis_home() {
  local version=$1 override=${2:-} lock=
  if [ -n "$override" ]; then
    [ -x "$override/bin/artemis" ] || die "$override/bin/artemis not found (check ARTEMIS_HOME)"
    printf '%s\n' "$override"
    return
  fi
  local home="$CACHE_DIR/apache-artemis-$version"
  if [ ! -x "$home/bin/artemis" ]; then
    # Environments started side by side (make test's groups) fetch and unpack one at a time.
    mkdir -p "$CACHE_DIR"
    exec {lock}> "$CACHE_DIR/.fetch.lock"
    flock "$lock"
  fi
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
  [ -z "${lock:-}" ] || exec {lock}>&-
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
  # Older versions (2.21 and before) have no --java-memory: they get the same heap in artemis.profile below.
  local memory=(--java-memory "${TESTENV_JAVA_MEMORY:-1G}")
  [ "$("$home/bin/artemis" help create 2>/dev/null | grep -c -- --java-memory)" != 0 ] || memory=()
  local paging=()
  [ -n "${TESTENV_GLOBAL_MAX_SIZE:-}" ] && paging=(--global-max-size "$TESTENV_GLOBAL_MAX_SIZE")
  "$home/bin/artemis" create "$dir" --silent --force \
    --user "$ADMIN_USER" --password "$ADMIN_PASSWORD" --require-login --role amq \
    --name "$name" --host 127.0.0.1 --http-host 127.0.0.1 --port-offset "$offset" \
    "${JOURNAL_ARGS[@]}" ${memory[@]+"${memory[@]}"} ${paging[@]+"${paging[@]}"} \
    --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor "$@" \
    > "$STATE_DIR/brokers/$name.create.log" 2>&1 || { cat "$STATE_DIR/brokers/$name.create.log" >&2; die "artemis create $name failed"; }

  [ ${#memory[@]} -eq 0 ] && sed -i 's/-Xmx[0-9]*[GgMm]\b/-Xmx1G/' "$dir/etc/artemis.profile"
  # artemis create's profile starts the heap at 512M, which a smaller max (the heap guard's demonstration)
  # would refuse: such a heap starts at its max.
  if [[ "${TESTENV_JAVA_MEMORY:-}" =~ ^[0-9]+[Mm]$ ]] && [ "${TESTENV_JAVA_MEMORY%[Mm]}" -lt 512 ]; then
    sed -i "s/-Xms[0-9]*[GgMm]\b/-Xms$TESTENV_JAVA_MEMORY/" "$dir/etc/artemis.profile"
  fi
  if [ -n "$SCAN_PERIOD_MS" ]; then
    sed -i "0,\|</journal-type>|s||&\n      <address-queue-scan-period>$SCAN_PERIOD_MS</address-queue-scan-period>|" "$dir/etc/broker.xml"
    grep -q "<address-queue-scan-period>$SCAN_PERIOD_MS<" "$dir/etc/broker.xml" || die "broker $name: no <journal-type> in broker.xml to set the scan period beside"
  fi

  # The transfer user holds exactly what a transfer needs (TRANSFER_PERMISSIONS, and
  # docs/guides/broker-permissions.md); each least-privilege user lacks one of it.
  local kind perm user roles
  {
    printf '\n%s = %s\n%s = %s\n' "$TRANSFER_USER" "$TRANSFER_PASSWORD" "$VIEWER_USER" "$VIEWER_PASSWORD"
    while read -r kind perm user; do printf '%s = %s\n' "$user" "$LP_PASSWORD"; done < <(permission_rows)
  } >> "$dir/etc/artemis-users.properties"
  {
    printf '\ntransfer = %s\nviewer = %s\n' "$TRANSFER_USER" "$VIEWER_USER"
    while read -r kind perm user; do printf '%s = %s\n' "$user" "$user"; done < <(permission_rows)
  } >> "$dir/etc/artemis-roles.properties"

  # Console/Jolokia login: 2.40 reads HAWTIO_ROLES, older versions HAWTIO_ROLE.
  roles=$(roles_holding login console)
  sed -i -e "s/^HAWTIO_ROLES='amq'/HAWTIO_ROLES='amq,$roles,viewer'/" \
         -e "s/^HAWTIO_ROLE='amq'/HAWTIO_ROLE='amq,$roles,viewer'/" "$dir/etc/artemis.profile"

  # JMX RBAC: only the operations a transfer calls, and the read-only ones for the viewer.
  # The most specific method pattern wins, so each named operation lists amq again.
  local ops="" defaults=""
  while read -r kind perm user; do
    [ "$kind" = jmx ] || continue
    roles="amq,$(roles_holding jmx "$perm")"
    case " $VIEWER_JMX " in *" $perm "*) roles+=",viewer" ;; esac
    ops+="            <access method=\"$perm\" roles=\"$roles\"/>\n"
    # <default-access> covers the MBeans no <role-access> match names: reading them only.
    case $perm in 'get*'|'is*') defaults+="\n            <access method=\"$perm\" roles=\"$roles\"/>" ;; esac
  done < <(permission_rows)
  sed -i "0,\|<match domain=\"org.apache.activemq.artemis\">|s||<match domain=\"org.apache.activemq.artemis\">\n$ops|" \
    "$dir/etc/management.xml"
  sed -i "0,\|<default-access>|s||<default-access>$defaults|" "$dir/etc/management.xml"

  # Messaging: send, consume and browse the run's own queues (studio.transfer.#) and send to any
  # address (the target queue's). A security match does not merge with "#", so amq is repeated
  # on studio.transfer.#. The viewer browses both (run manifests are under studio.transfer.#).
  {
    # amq keeps on studio.transfer.# everything "#" gives it.
    for perm in send consume browse createDurableQueue deleteDurableQueue createAddress deleteAddress \
                createNonDurableQueue deleteNonDurableQueue manage; do
      printf 'securityRoles."studio.transfer.#".amq.%s=true\n' "$perm"
    done
    while read -r kind perm user; do
      case $kind in
        staging) for r in $(roles_holding staging "$perm" | tr , ' '); do
                   printf 'securityRoles."studio.transfer.#".%s.%s=true\n' "$r" "$perm"
                 done ;;
        any) for r in $(roles_holding any "$perm" | tr , ' '); do
               printf 'securityRoles."#".%s.%s=true\n' "$r" "$perm"
             done ;;
      esac
    done < <(permission_rows)
    printf 'securityRoles."studio.transfer.#".%s.browse=true\n' "$VIEWER_USER"
    printf 'securityRoles."#".%s.browse=true\n' "$VIEWER_USER"
  } >> "$dir/etc/broker.properties"
  reads_broker_properties "$home" || security_properties_to_xml "$dir"
}

# reads_broker_properties HOME: whether the distribution applies etc/broker.properties at start
# (2.21 does; 2.18 and 2.19 ignore the file, so their brokers would lack every role above).
reads_broker_properties() {
  local jar
  for jar in "$1"/lib/artemis-server-2*.jar; do
    # grep -c reads to the end: grep -q would leave early and, under pipefail, fail on unzip's SIGPIPE.
    [ -f "$jar" ] && [ "$(unzip -p "$jar" 2>/dev/null | grep -a -c 'broker.properties')" != 0 ] && return 0
  done
  return 1
}

# security_properties_to_xml DIR: writes the securityRoles lines of etc/broker.properties into
# broker.xml's <security-settings> instead, for a broker that does not read broker.properties.
# "#" keeps the roles `artemis create` gave amq there.
security_properties_to_xml() {
  local dir=$1 xml
  xml=$(awk '
    BEGIN {
      n = split("createNonDurableQueue deleteNonDurableQueue createDurableQueue deleteDurableQueue createAddress deleteAddress consume browse send manage", p, " ")
      matches[++nm] = "#"; seen["#"] = 1
      for (i = 1; i <= n; i++) add("#", p[i], "amq")
    }
    function add(m, perm, role) {
      if (!((m, perm) in roles)) { perms[m, ++np[m]] = perm; roles[m, perm] = role; return }
      roles[m, perm] = roles[m, perm] "," role
    }
    match($0, /^securityRoles\."[^"]+"\.[^.]+\.[^=]+=true$/) {
      line = $0; sub(/^securityRoles\."/, "", line)
      m = substr(line, 1, index(line, "\"") - 1); line = substr(line, length(m) + 3)
      role = substr(line, 1, index(line, ".") - 1); line = substr(line, length(role) + 2)
      perm = substr(line, 1, index(line, "=") - 1)
      if (!(m in seen)) { seen[m] = 1; matches[++nm] = m }
      add(m, perm, role)
    }
    END {
      printf "<security-settings>"
      for (i = 1; i <= nm; i++) {
        m = matches[i]
        printf "\\n         <security-setting match=\"%s\">", m
        for (j = 1; j <= np[m]; j++) printf "\\n            <permission type=\"%s\" roles=\"%s\"/>", perms[m, j], roles[m, perms[m, j]]
        printf "\\n         </security-setting>"
      }
      printf "\\n      </security-settings>"
    }' "$dir/etc/broker.properties")
  # One sed over the whole file (-z): the block spans lines.
  sed -z -i "s|<security-settings>.*</security-settings>|$xml|" "$dir/etc/broker.xml"
}

# add_acceptor BROKER NAME URL: one more acceptor in broker.xml.
add_acceptor() {
  local name=$1 acceptor=$2 url=$3 dir
  dir=$(broker_dir "$name")
  grep -q "acceptor name=\"$acceptor\"" "$dir/etc/broker.xml" && return
  sed -i "s#</acceptors>#   <acceptor name=\"$acceptor\">${url//&/\\&}</acceptor>\n      </acceptors>#" "$dir/etc/broker.xml"
}

# The target gets an AMQP acceptor with duplicate detection off, which a transfer must refuse.
add_target_acceptors() {
  local port=$1
  add_acceptor target amqp-nodedup "tcp://127.0.0.1:$((port + 1))?protocols=AMQP;amqpDuplicateDetection=false"
}

# add_tls_endpoints BROKER OFFSET: an AMQPS acceptor (5673 + offset) and an https binding of the
# console and Jolokia (8162 + offset) beside the http one, both with the certificate from the
# environment's CA (make_tls). 2.40's bootstrap.xml takes several <binding>s, each with its apps.
add_tls_endpoints() {
  local name=$1 offset=$(($2 + SHIFT)) dir
  dir=$(broker_dir "$name")
  # A running broker (of an environment made before) would not open them until restarted.
  broker_running "$name" && return
  add_acceptor "$name" amqps "tcp://127.0.0.1:$((5673 + offset))?protocols=AMQP;sslEnabled=true;keyStorePath=$STATE_DIR/tls/server.p12;keyStorePassword=keystore-secret;keyStoreType=PKCS12;amqpDuplicateDetection=true;amqpMinLargeMessageSize=102400"
  grep -q 'binding name="artemis-https"' "$dir/etc/bootstrap.xml" && return
  sed -i "0,\|</web>|s||    <binding name=\"artemis-https\" uri=\"https://127.0.0.1:$((8162 + offset))\" keyStorePath=\"$STATE_DIR/tls/server.p12\" keyStorePassword=\"keystore-secret\" keyStoreType=\"PKCS12\">\n           <app name=\"console\" url=\"console\" war=\"console.war\"/>\n       </binding>\n   </web>|" \
    "$dir/etc/bootstrap.xml"
}

broker_running() {
  local pidfile
  pidfile=$(broker_pidfile "$1")
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# start_broker NAME HTTP_PORT: starts in the background and waits for the broker's own
# "Server is now active" and "HTTP Server started" log lines. They are read from the broker's
# console output (log/console.log), which this script appends to and nothing rolls over: the
# broker's own log/artemis.log rolls at midnight, and a broker restarted after a roll has fewer
# lines than were counted before it, so its markers were never seen (the fault harness's
# restarted brokers, "not active after 120s", in a run just past midnight).
start_broker() {
  local name=$1 dir
  dir=$(broker_dir "$name")
  broker_running "$name" && return
  [ -d "$dir" ] || die "no broker named $name (run 'up' first)"
  mkdir -p "$dir/log"
  local marker_log="$dir/log/console.log"
  local lines=0
  [ -f "$marker_log" ] && lines=$(wc -l < "$marker_log")
  log "starting broker $name"
  # setsid: the broker must outlive the shell that started it (make, go test).
  setsid nohup "$dir/bin/artemis" run >> "$dir/log/console.log" 2>&1 < /dev/null &
  echo $! > "$(broker_pidfile "$name")"
  local deadline=$((SECONDS + READY_TIMEOUT))
  while :; do
    # One awk over the whole log, not `tail | grep -q`: under pipefail, grep -q leaving at the
    # first match kills tail with SIGPIPE once more than a pipe's worth of log follows the
    # marker, and the pipeline fails for good (a restarted target logging a warning for every
    # duplicate the relay resent never became "active" in make test).
    if [ -f "$marker_log" ] && awk -v from="$((lines + 1))" \
         'NR >= from && /AMQ221007/ { active = 1 } NR >= from && /AMQ241001/ { http = 1 } END { exit !(active && http) }' "$marker_log"; then
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
# Ports: each environment claims its shift, and `up` checks its ports before starting anything.

# broker_offset NAME: the port offset of a broker before the shift.
broker_offset() {
  case $1 in
    source) echo 100 ;; target) echo 200 ;; legacy) echo 300 ;; node1) echo 400 ;; node2) echo 500 ;;
    *) die "no broker named $1" ;;
  esac
}

# broker_ports NAME SHIFT: prints "port what" for every port the broker listens on.
broker_ports() {
  local name=$1 o
  o=$(($(broker_offset "$1") + $2))
  printf '%s %s\n' $((5672 + o)) "$name AMQP" $((61616 + o)) "$name all-protocols" $((8161 + o)) "$name Jolokia"
  case $name in source|target)
    printf '%s %s\n' $((5673 + o)) "$name AMQPS" $((8162 + o)) "$name Jolokia https" ;;
  esac
  if [ "$name" = target ]; then
    printf '%s %s\n' $((5674 + o)) "target AMQP without duplicate detection"
  fi
}

# port_in_use PORT: whether something accepts connections on 127.0.0.1:PORT.
port_in_use() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# taken_ports SHIFT PG_PORT BROKER...: prints "port what" for each port in use among those the
# named brokers need (and PostgreSQL's, unless PG_PORT is empty).
taken_ports() {
  local shift=$1 pg=$2 name port what
  shift 2
  for name in "$@"; do
    while read -r port what; do
      port_in_use "$port" && printf '%s %s\n' "$port" "$what"
    done < <(broker_ports "$name" "$shift")
  done
  if [ -n "$pg" ] && port_in_use "$pg"; then printf '%s %s\n' "$pg" PostgreSQL; fi
  return 0
}

# claim_shift SHIFT: claims a port shift for this state folder (mkdir is atomic, so two `up`s
# never take the same shift). A claim whose state folder is gone is stale and taken over.
claim_shift() {
  local dir=$CLAIM_ROOT/shift-$1 holder
  mkdir -p "$CLAIM_ROOT"
  for _ in 1 2; do
    if mkdir "$dir" 2>/dev/null; then
      printf '%s\n' "$STATE_DIR" > "$dir/state_dir"
      return 0
    fi
    holder=$(cat "$dir/state_dir" 2>/dev/null || true)
    [ "$holder" = "$STATE_DIR" ] && return 0
    # An empty holder is a claim being written right now: taken.
    if [ -n "$holder" ] && [ ! -d "$holder" ]; then rm -rf "$dir"; continue; fi
    return 1
  done
  return 1
}

# shift_holder SHIFT: the state folder that claims a shift, if any.
shift_holder() { cat "$CLAIM_ROOT/shift-$1/state_dir" 2>/dev/null || true; }

release_shift() {
  [ "$(shift_holder "$1")" = "$STATE_DIR" ] && rm -rf "$CLAIM_ROOT/shift-$1"
  return 0
}

# load_ports: the shift and PostgreSQL port this environment was set up with (none recorded:
# an environment from before ports were recorded, on the defaults).
load_ports() {
  if [ -f "$STATE_DIR/ports" ]; then
    SHIFT=$(sed -n 's/^shift=//p' "$STATE_DIR/ports")
    PG_PORT=$(sed -n 's/^pg_port=//p' "$STATE_DIR/ports")
  else
    SHIFT=${SHIFT/auto/0}
    PG_PORT=${PG_PORT:-$((15532 + SHIFT))}
  fi
}

# choose_ports CLUSTER: settles SHIFT and PG_PORT for `up`. A new environment claims its shift
# (the first free one with auto) and records it; an existing one keeps what it recorded. Either
# way, the ports of every broker not running yet must be free: `up` fails here, before starting
# anything, rather than leave a broker without its acceptor.
choose_ports() {
  local cluster=$1 names=(source target legacy) stopped=() n candidates taken
  [ "$cluster" = 1 ] && names+=(node1 node2)
  if [ -f "$STATE_DIR/ports" ]; then
    local want_shift=${TESTENV_PORT_SHIFT:-} want_pg=${TESTENV_PG_PORT:-}
    load_ports
    if { [ -n "$want_shift" ] && [ "$want_shift" != auto ] && [ "$want_shift" != "$SHIFT" ]; } \
       || { [ -n "$want_pg" ] && [ "$want_pg" != "$PG_PORT" ]; }; then
      die "$STATE_DIR was set up with TESTENV_PORT_SHIFT=$SHIFT and TESTENV_PG_PORT=$PG_PORT; use those, or another ARTEMIS_TESTENV_DIR"
    fi
    claim_shift "$SHIFT" || die "port shift $SHIFT is claimed by the environment in $(shift_holder "$SHIFT")"
  else
    case $SHIFT in
      auto) candidates=$AUTO_SHIFTS ;;
      *[!0-9]*|'') die "TESTENV_PORT_SHIFT=$SHIFT: use a number (e.g. 2000) or auto" ;;
      *) candidates=$SHIFT ;;
    esac
    local s pg chosen=""
    for s in $candidates; do
      pg=${TESTENV_PG_PORT:-$((15532 + s))}
      if ! claim_shift "$s"; then
        [ "$SHIFT" = auto ] && continue
        die "port shift $s is claimed by the environment in $(shift_holder "$s"); pick another TESTENV_PORT_SHIFT (and ARTEMIS_TESTENV_DIR), or TESTENV_PORT_SHIFT=auto"
      fi
      taken=$(taken_ports "$s" "$pg" "${names[@]}")
      if [ -z "$taken" ]; then chosen=$s; break; fi
      release_shift "$s"
      if [ "$SHIFT" != auto ]; then
        log "these ports are in use:"; sed 's/^/  /' <<< "$taken" >&2
        die "port shift $s: ports in use (another environment or program); pick another TESTENV_PORT_SHIFT and ARTEMIS_TESTENV_DIR (and TESTENV_PG_PORT), or TESTENV_PORT_SHIFT=auto"
      fi
    done
    [ -n "$chosen" ] || die "no free port shift among $AUTO_SHIFTS (each has ports in use or is claimed); stop an environment first"
    SHIFT=$chosen
    PG_PORT=${TESTENV_PG_PORT:-$((15532 + SHIFT))}
    mkdir -p "$STATE_DIR"
    printf 'shift=%s\npg_port=%s\n' "$SHIFT" "$PG_PORT" > "$STATE_DIR/ports"
    return 0
  fi
  # An existing environment: only what is not running yet must find its ports free.
  for n in "${names[@]}"; do broker_running "$n" || stopped+=("$n"); done
  local pg=$PG_PORT
  postgres_running && pg=""
  taken=$(taken_ports "$SHIFT" "$pg" ${stopped[@]+"${stopped[@]}"})
  if [ -n "$taken" ]; then
    log "these ports are in use:"; sed 's/^/  /' <<< "$taken" >&2
    die "cannot start the stopped parts of the environment in $STATE_DIR: their ports are in use"
  fi
}

# ---------------------------------------------------------------------------------------------
# Owner: the token that allows killing, stopping and starting this environment's brokers.

sha256_of() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# record_owner: a new environment records the SHA-256 of its owner token; an existing one keeps
# its owner (`up` again does not hand it to someone else).
record_owner() {
  if [ -s "$STATE_DIR/owner.sha256" ]; then
    if [ -n "${ARTEMIS_TESTENV_OWNER:-}" ] && [ "$(sha256_of "$ARTEMIS_TESTENV_OWNER")" != "$(cat "$STATE_DIR/owner.sha256")" ]; then
      log "note: $STATE_DIR keeps the owner it was started with; your ARTEMIS_TESTENV_OWNER does not own it"
    fi
    return
  fi
  local token=${ARTEMIS_TESTENV_OWNER:-}
  if [ -z "$token" ]; then
    token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
    log "owner token of this environment: $token"
    log "  (fault tests and kill-broker/stop-broker/start-broker need ARTEMIS_TESTENV_OWNER=$token)"
  fi
  sha256_of "$token" > "$STATE_DIR/owner.sha256"
}

# require_owner ACTION: refuses unless ARTEMIS_TESTENV_OWNER is this environment's owner token.
require_owner() {
  local action=$1
  [ -f "$STATE_DIR/testenv.json" ] || die "$action: no environment in $STATE_DIR"
  [ -s "$STATE_DIR/owner.sha256" ] \
    || die "$action refused: the environment in $STATE_DIR records no owner (started by an older scripts/testenv.sh), so nobody may kill, stop or start its brokers; start a new one"
  [ -n "${ARTEMIS_TESTENV_OWNER:-}" ] \
    || die "$action refused: ARTEMIS_TESTENV_OWNER is not set; only the owner of the environment in $STATE_DIR may kill, stop or start its brokers (up printed the token, or was given it)"
  [ "$(sha256_of "$ARTEMIS_TESTENV_OWNER")" = "$(cat "$STATE_DIR/owner.sha256")" ] \
    || die "$action refused: ARTEMIS_TESTENV_OWNER is not the owner token of the environment in $STATE_DIR; another run owns it"
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

# tls_json NAME OFFSET: the AMQPS and https management URLs of a broker, those it has.
tls_json() {
  local offset=$(($2 + SHIFT)) dir
  dir=$(broker_dir "$1")
  if grep -q 'acceptor name="amqps"' "$dir/etc/broker.xml"; then
    printf ',\n      "amqps_url": "amqps://127.0.0.1:%s"' $((5673 + offset))
  fi
  if grep -q 'binding name="artemis-https"' "$dir/etc/bootstrap.xml"; then
    printf ',\n      "management_https_url": "https://127.0.0.1:%s/console/jolokia"' $((8162 + offset))
  fi
}

# least_privilege_json: "least_privilege_users": {permission: user lacking only it}.
least_privilege_json() {
  local kind perm user sep=""
  printf '  "least_privilege_password": "%s",\n  "least_privilege_users": {' "$LP_PASSWORD"
  while read -r kind perm user; do
    printf '%s\n    "%s": "%s"' "$sep" "$(permission_key "$kind" "$perm")" "$user"
    sep=,
  done < <(permission_rows)
  printf '\n  },\n'
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
    least_privilege_json
    printf '  "tls_ca_file": "%s",\n' "$STATE_DIR/tls/ca.pem"
    printf '  "postgres_dsn": "postgres://postgres@127.0.0.1:%s/artemis_ledger?sslmode=disable",\n' "$PG_PORT"
    printf '  "port_shift": %s,\n' "$SHIFT"
    printf '  "owner_sha256": "%s",\n' "$(cat "$STATE_DIR/owner.sha256")"
    printf '  "brokers": {\n'
    broker_json source $ARTEMIS_VERSION 100 "$(tls_json source 100)"; printf ',\n'
    broker_json target $ARTEMIS_VERSION 200 "$(tls_json target 200),
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

# holds_env: whether the state folder already holds an environment (or the start of one).
holds_env() { [ -e "$STATE_DIR/testenv.json" ] || [ -d "$STATE_DIR/brokers" ] || [ -e "$STATE_DIR/ports" ]; }

postgres_running() {
  local pidfile=$STATE_DIR/postgres/data/postmaster.pid
  [ -f "$pidfile" ] && kill -0 "$(head -n 1 "$pidfile")" 2>/dev/null
}

cmd_up() {
  local cluster=${TESTENV_CLUSTER:-0} new=0 arg
  for arg in "$@"; do
    case $arg in
      --cluster) cluster=1 ;;
      --new) new=1 ;;
      *) die "up: unknown argument $arg (use --cluster, --new)" ;;
    esac
  done
  if [ "$new" = 1 ] && holds_env; then
    die "$STATE_DIR already holds an environment; --new starts only a new one (give another ARTEMIS_TESTENV_DIR)"
  fi
  command -v java >/dev/null || die "Java 17 is needed to run Artemis"
  choose_ports "$cluster"
  log "state folder $STATE_DIR, ports shifted by $SHIFT, PostgreSQL on $PG_PORT"
  record_owner
  local home legacy_home
  home=$(artemis_home $ARTEMIS_VERSION "${ARTEMIS_HOME:-}")
  legacy_home=$(artemis_home $ARTEMIS_LEGACY_VERSION "${ARTEMIS_LEGACY_HOME:-}")
  make_tls

  create_broker source "$home" 100
  add_tls_endpoints source 100
  create_broker target "$home" 200
  add_tls_endpoints target 200
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
  log "ready: $STATE_DIR/testenv.json (point tests at it with ARTEMIS_TESTENV_FILE=$STATE_DIR/testenv.json)"
}

cmd_down() {
  [ -d "$STATE_DIR" ] || return 0
  load_ports
  local f
  for f in "$STATE_DIR"/brokers/*.pid; do
    [ -e "$f" ] || continue
    stop_broker "$(basename "$f" .pid)" &
  done
  stop_postgres
  wait
  rm -rf "$STATE_DIR"
  release_shift "$SHIFT"
  log "stopped and removed $STATE_DIR"
}

# cmd_run [--cluster] COMMAND...: a new environment of its own for COMMAND, stopped afterwards
# whatever happened (also on Ctrl-C). It never reuses or stops an environment it did not start.
cmd_run() {
  local up_args=(--new)
  [ "${1:-}" = --cluster ] && { up_args+=(--cluster); shift; }
  [ "${1:-}" = -- ] && shift
  [ $# -gt 0 ] || die "run: give the command to run, e.g. scripts/testenv.sh run --cluster go test ./..."
  if [ -z "${ARTEMIS_TESTENV_DIR:-}" ]; then
    STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/terraform-provider-artemis-test.XXXXXX")
    chmod 755 "$STATE_DIR" # mktemp makes it 0700; run as root, PostgreSQL runs as user postgres
  elif holds_env; then
    die "run: $STATE_DIR already holds an environment, and run starts its own; unset ARTEMIS_TESTENV_DIR (or give a new folder), or run against that one with ARTEMIS_TESTENV_FILE=$STATE_DIR/testenv.json"
  fi
  SHIFT=${TESTENV_PORT_SHIFT:-auto}
  export ARTEMIS_TESTENV_DIR=$STATE_DIR ARTEMIS_TESTENV_FILE=$STATE_DIR/testenv.json
  export ARTEMIS_TESTENV_OWNER=${ARTEMIS_TESTENV_OWNER:-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')}
  # From here on the folder is this run's: stop and remove it on the way out.
  trap 'rc=$?; cmd_down || true; exit $rc' EXIT
  trap 'exit 130' INT TERM
  cmd_up "${up_args[@]}"
  log "running against $ARTEMIS_TESTENV_FILE: $*"
  local rc=0
  "$@" || rc=$?
  return "$rc"
}

cmd_status() {
  local d
  [ -d "$STATE_DIR" ] || { echo "no environment in $STATE_DIR"; return 0; }
  load_ports
  echo "environment $STATE_DIR: ports shifted by $SHIFT, PostgreSQL port $PG_PORT$([ -s "$STATE_DIR/owner.sha256" ] || echo ', no owner recorded')"
  for d in "$STATE_DIR"/brokers/*/; do
    [ -d "$d" ] || continue
    local n
    n=$(basename "$d")
    if broker_running "$n"; then echo "broker $n: running"; else echo "broker $n: stopped"; fi
  done
  if [ -f "$STATE_DIR/postgres/data/PG_VERSION" ]; then
    postgres_running && echo "postgres: running" || echo "postgres: stopped"
  fi
}

cmd_logs() {
  local f
  for f in "$STATE_DIR"/brokers/*/log/console.log "$STATE_DIR"/postgres/postgres.log; do
    [ -f "$f" ] || continue
    printf '==== %s (last %s lines)\n' "$f" "${TESTENV_LOG_LINES:-60}"
    tail -n "${TESTENV_LOG_LINES:-60}" "$f"
  done
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  run) shift; cmd_run "$@" ;;
  fetch) artemis_home $ARTEMIS_VERSION "${ARTEMIS_HOME:-}" >/dev/null
    artemis_home "$ARTEMIS_LEGACY_VERSION" "${ARTEMIS_LEGACY_HOME:-}" >/dev/null ;;
  down) cmd_down ;;
  status) cmd_status ;;
  logs) cmd_logs ;;
  kill-broker) require_owner kill-broker; kill_broker "${2:?broker name}" ;;
  stop-broker) require_owner stop-broker; stop_broker "${2:?broker name}" ;;
  start-broker) require_owner start-broker; start_broker "${2:?broker name}" ;;
  stop-postgres) require_owner stop-postgres; load_ports; stop_postgres ;;
  start-postgres) require_owner start-postgres; load_ports; start_postgres ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
