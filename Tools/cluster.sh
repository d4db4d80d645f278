#!/usr/bin/env bash
# A replicated Herald on one machine, on loopback (Tools/SERVE.md, "Running past one machine"):
# etcd, three PostgreSQL 15 nodes under Patroni (synchronous mode, strict), HAProxy in front of
# PostgreSQL routing to the primary by Patroni's REST check (GET /primary), two Herald
# partitions (`herald serve --replicated-log … --log-id p1|p2`) and HAProxy in front of them,
# routing accounts as Tools/haproxy.cfg does.
#
# usage: Tools/cluster.sh up|down|status
#   up      starts everything and waits until each part answers; prints where.
#   down    stops exactly what `up` started (the pids it recorded), then keeps the directory.
#   status  what runs, which PostgreSQL node is primary, each partition's readiness.
#
# Environment:
#   HERALD_CLUSTER_DIR         the cluster's directory (default ${TMPDIR:-/tmp}/herald-cluster);
#                              cluster.env there holds the ports, URLs and passwords.
#   HERALD_CLUSTER_PARTITIONS  Herald partitions to start, 0 to 2 (default 2; 0: PostgreSQL only).
#   HERALD_BIN                 the herald executable (default: herald on PATH, else .build/debug).
#   HERALD_CLUSTER_PORT        first of 14 consecutive ports (default: free ports, chosen at up).
#   HERALD_CLUSTER_STOP_SECONDS  how long down waits for a process before SIGKILL (default 30).
# Needs Debian's etcd-server, patroni, postgresql-15 and haproxy (Tools/setup.sh). Run as root:
# PostgreSQL and Patroni run as the postgres user, which owns their directories.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${HERALD_CLUSTER_DIR:-${TMPDIR:-/tmp}/herald-cluster}
partitions=${HERALD_CLUSTER_PARTITIONS:-2}
pg_bin=/usr/lib/postgresql/15/bin

# Set while `up` starts processes: a failure then stops what it started.
starting=
die() {
  echo "cluster.sh: $*" >&2
  if [ -n "$starting" ]; then
    starting=
    down >&2 || true
  fi
  exit 1
}
say() { echo "· $*" >&2; }

# The pid recorded for `name`, when that process still runs.
alive() {
  local file=$dir/pids/$1.pid pid
  [ -f "$file" ] || return 1
  pid=$(cat "$file")
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Starts `command…` in the background as `name` (its output in log/name.log), records its pid.
# Descriptors other than 0–2 that the caller left open (a test's pipe, its sockets) are closed
# first: a server that kept the write end of our caller's pipe would hold its read for ever.
start() {
  local name=$1; shift
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      [ "$fd" -gt 2 ] && eval "exec $fd>&-"
    done
    exec "$@"
  ) </dev/null >"$dir/log/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name.pid"
}

# Waits up to `seconds` for `command…` to succeed; fails naming `what` and its log, and at
# once when a process started so far has exited.
wait_for() {
  local what=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds)) file
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "$what did not come up in ${seconds}s (see $dir/log/)"
    for file in "$dir"/pids/*.pid; do
      kill -0 "$(cat "$file")" 2>/dev/null \
        || die "$(basename "$file" .pid) exited while waiting for $what (see $dir/log/$(basename "$file" .pid).log)"
    done
    sleep 0.2
  done
}

# The postmaster pid of `node`, from its data directory, when it runs.
postmaster() {
  local file=$dir/$1/data/postmaster.pid pid
  [ -f "$file" ] || return 1
  pid=$(head -1 "$file")
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}

free_ports() {
  if [ -n "${HERALD_CLUSTER_PORT:-}" ]; then
    seq "$HERALD_CLUSTER_PORT" $((HERALD_CLUSTER_PORT + 13))
  else
    # Bound all at once, so that the 14 are distinct; closed before their servers bind them.
    /usr/bin/python3 - <<'PY'
import socket
held = []
for _ in range(14):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); held.append(s); print(s.getsockname()[1])
PY
  fi
}

secret() { head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

herald_binary() {
  if [ -n "${HERALD_BIN:-}" ]; then echo "$HERALD_BIN"
  elif command -v herald >/dev/null 2>&1; then command -v herald
  elif [ -x "$root/.build/debug/herald" ]; then echo "$root/.build/debug/herald"
  else die "no herald executable: run \`swift build\` or set HERALD_BIN"
  fi
}

up() {
  for tool in etcd patroni haproxy "$pg_bin/postgres" curl; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed (run Tools/setup.sh)"
  done
  id postgres >/dev/null 2>&1 || die "no postgres user (apt-get install postgresql-15)"
  [ "$(id -u)" -eq 0 ] || die "run as root: PostgreSQL and Patroni are started as the postgres user"
  case $partitions in 0|1|2) ;; *) die "HERALD_CLUSTER_PARTITIONS must be 0, 1 or 2, not $partitions" ;; esac
  if [ -f "$dir/cluster.env" ]; then
    for name in etcd pg1 pg2 pg3 haproxy-postgres p1 p2 haproxy-herald; do
      alive "$name" >/dev/null && die "a cluster already runs in $dir ($name); run Tools/cluster.sh down first"
    done
    die "$dir holds a stopped cluster; remove it (rm -r $dir) or set HERALD_CLUSTER_DIR"
  fi
  local herald=
  [ "$partitions" -eq 0 ] || herald=$(herald_binary)

  mkdir -p "$dir/pids" "$dir/log"
  chmod 755 "$dir"
  starting=1
  trap 'die "a command of up failed (line $LINENO)"' ERR
  local ports
  mapfile -t ports < <(free_ports)
  local etcd_port=${ports[0]} etcd_peer=${ports[1]} pg_proxy=${ports[2]} http_proxy=${ports[3]}
  local superuser_password replication_password herald_password admin_token
  superuser_password=$(secret) replication_password=$(secret) herald_password=$(secret) admin_token=$(secret)
  {
    echo "# Written by Tools/cluster.sh up; read by cluster.sh status/down and by the tests."
    echo "ETCD_PORT=$etcd_port"
    echo "PG_PROXY_PORT=$pg_proxy"
    echo "HTTP_PROXY_PORT=$http_proxy"
    for i in 1 2 3; do
      echo "PG${i}_PORT=${ports[$((2 + 2 * i))]}"
      echo "REST${i}_PORT=${ports[$((3 + 2 * i))]}"
    done
    echo "P1_PORT=${ports[10]}"
    echo "P2_PORT=${ports[11]}"
    echo "SUPERUSER_PASSWORD=$superuser_password"
    echo "HERALD_PASSWORD=$herald_password"
    echo "HERALD_ADMIN_TOKEN=$admin_token"
    echo "PARTITIONS=$partitions"
    echo "POSTGRES_URL=postgres://herald:$herald_password@127.0.0.1:$pg_proxy/herald"
    echo "SUPERUSER_URL=postgres://postgres:$superuser_password@127.0.0.1:$pg_proxy/postgres"
  } >"$dir/cluster.env"
  chmod 600 "$dir/cluster.env"
  # shellcheck source=/dev/null
  . "$dir/cluster.env"

  say "etcd on 127.0.0.1:$etcd_port"
  start etcd etcd --name herald-etcd --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "herald-etcd=http://127.0.0.1:$etcd_peer" --initial-cluster-state new
  wait_for etcd 30 curl -sf "http://127.0.0.1:$etcd_port/health"

  # Run by Patroni once, on the node that bootstraps, before any standby exists.
  cat >"$dir/post-bootstrap.sh" <<EOF
#!/bin/sh
set -e
psql -v ON_ERROR_STOP=1 -q "\$1" <<'SQL'
CREATE ROLE herald LOGIN PASSWORD '$herald_password';
CREATE DATABASE herald OWNER herald;
SQL
EOF
  chmod 700 "$dir/post-bootstrap.sh"
  chown postgres: "$dir/post-bootstrap.sh"
  local i node
  for i in 1 2 3; do
    node=pg$i
    mkdir -p "$dir/$node"
    chown postgres: "$dir/$node"
    chmod 700 "$dir/$node"
    sed -e "s|@NAME@|$node|g" -e "s|@DIR@|$dir|g" -e "s|@ETCD_PORT@|$etcd_port|g" \
      -e "s|@PG_PORT@|$(eval echo \$PG${i}_PORT)|g" -e "s|@REST_PORT@|$(eval echo \$REST${i}_PORT)|g" \
      -e "s|@SUPERUSER_PASSWORD@|$superuser_password|g" -e "s|@REPLICATION_PASSWORD@|$replication_password|g" \
      "$root/Tools/cluster/patroni.yml" >"$dir/$node.yml"
    chown postgres: "$dir/$node.yml"
    chmod 600 "$dir/$node.yml"
  done
  # All three start at once: one wins etcd's initialize key and bootstraps (initdb), the
  # others wait for it and join as its standbys (pg_basebackup).
  say "PostgreSQL under Patroni: pg1, pg2, pg3"
  for node in pg1 pg2 pg3; do
    start "$node" setpriv --reuid=postgres --regid=postgres --init-groups env HOME="$dir/$node" patroni "$dir/$node.yml"
  done
  wait_for "a primary" 90 primary
  wait_for "two standbys streaming, one of them synchronous" 90 standbys

  sed -e "s|@PG_PROXY_PORT@|$PG_PROXY_PORT|g" \
    -e "s|@PG1_PORT@|$PG1_PORT|g" -e "s|@PG2_PORT@|$PG2_PORT|g" -e "s|@PG3_PORT@|$PG3_PORT|g" \
    -e "s|@REST1_PORT@|$REST1_PORT|g" -e "s|@REST2_PORT@|$REST2_PORT|g" -e "s|@REST3_PORT@|$REST3_PORT|g" \
    "$root/Tools/cluster/haproxy-postgres.cfg" >"$dir/haproxy-postgres.cfg"
  say "HAProxy for PostgreSQL on 127.0.0.1:$PG_PROXY_PORT"
  start haproxy-postgres haproxy -db -f "$dir/haproxy-postgres.cfg"
  wait_for "the primary through HAProxy" 30 only_primary

  if [ "$partitions" -gt 0 ]; then
    local partition port
    for partition in $(seq -f 'p%g' 1 "$partitions"); do
      port=$( [ "$partition" = p1 ] && echo "$P1_PORT" || echo "$P2_PORT")
      say "herald serve, partition $partition, on 127.0.0.1:$port"
      start "$partition" env HERALD_ADMIN_TOKEN="$admin_token" "$herald" serve --store "$dir/herald-$partition" \
        --listen "127.0.0.1:$port" --replicated-log "$POSTGRES_URL" --log-id "$partition"
    done
    for partition in $(seq -f 'p%g' 1 "$partitions"); do
      port=$( [ "$partition" = p1 ] && echo "$P1_PORT" || echo "$P2_PORT")
      wait_for "partition $partition" 120 curl -sf "http://127.0.0.1:$port/readyz"
    done
    # Tools/haproxy.cfg, with this cluster's addresses, maps and socket.
    local second=$P2_PORT
    [ "$partitions" -eq 2 ] || second=$P1_PORT
    : >"$dir/herald-accounts.map"; : >"$dir/herald-pushkeys.map"; : >"$dir/herald-subscriptions.map"
    sed -e "s|/etc/haproxy/|$dir/|g" -e "s|/run/haproxy/|$dir/|g" \
      -e "s|127.0.0.1:8000|127.0.0.1:$HTTP_PROXY_PORT|" \
      -e "s|10.0.0.1:8080|127.0.0.1:$P1_PORT|g" -e "s|10.0.0.2:8080|127.0.0.1:$second|g" \
      -e '/log stderr format short local0/d' \
      "$root/Tools/haproxy.cfg" >"$dir/haproxy-herald.cfg"
    say "HAProxy for Herald on 127.0.0.1:$HTTP_PROXY_PORT"
    start haproxy-herald haproxy -db -f "$dir/haproxy-herald.cfg"
    wait_for "Herald through HAProxy" 30 curl -sf "http://127.0.0.1:$HTTP_PROXY_PORT/healthz"
  fi
  starting=
  echo "cluster up in $dir"
  [ "$partitions" -eq 0 ] || echo "herald:     http://127.0.0.1:$HTTP_PROXY_PORT (admin token in $dir/cluster.env)"
  echo "postgresql: 127.0.0.1:$PG_PROXY_PORT (user herald, database herald; password in $dir/cluster.env)"
}

# True when four connections in a row through HAProxy reach a primary: HAProxy counts every
# server up until its first check, and would spread them over all three.
only_primary() {
  local i
  for i in 1 2 3 4; do
    [ "$(PGPASSWORD=$HERALD_PASSWORD PGCONNECT_TIMEOUT=2 psql -h 127.0.0.1 -p "$PG_PROXY_PORT" -U herald -d herald \
      -XAtc "SELECT pg_is_in_recovery()")" = f ] || return 1
  done
}

# True when a node is primary (its Patroni answers GET /primary with 200).
primary() { [ "$(primary_name)" != none ]; }

# True when Patroni's /cluster lists a synchronous standby and another streaming standby.
standbys() {
  local i port
  for i in 1 2 3; do
    port="REST${i}_PORT"
    curl -sf --max-time 2 "http://127.0.0.1:${!port}/cluster" | /usr/bin/python3 -c '
import json, sys
members = json.load(sys.stdin)["members"]
roles = [m["role"] for m in members if m.get("state") in ("running", "streaming")]
sys.exit(0 if "sync_standby" in roles and len(roles) == 3 else 1)' && return 0
  done
  return 1
}

# Stops each recorded process still running, in the reverse order of `up`, one tier at a time
# (SIGTERM to the tier, then wait, SIGKILL after HERALD_CLUSTER_STOP_SECONDS, default 30; a
# Patroni busy with a rewind or a promotion can take that long): the proxies and Herald, the standbys,
# the primary, etcd. Postmasters whose Patroni died before them are stopped too.
down() {
  [ -d "$dir/pids" ] || die "no cluster in $dir"
  local tier name pid node waited primary replicas= grace=${HERALD_CLUSTER_STOP_SECONDS:-30}
  # The standbys before the primary: a primary stopping beside them waits for one of them to
  # receive its shutdown checkpoint, for ever while they stop too.
  # shellcheck source=/dev/null
  [ -f "$dir/cluster.env" ] && . "$dir/cluster.env"
  primary=$(primary_name 2>/dev/null) || primary=none
  for node in pg1 pg2 pg3; do [ "$node" = "$primary" ] || replicas+=" $node"; done
  for tier in "haproxy-herald p1 p2 haproxy-postgres" "$replicas" "$primary" "etcd"; do
    local stopping=()
    for name in $tier; do
      pid=$(alive "$name") || continue
      kill -TERM "$pid" 2>/dev/null || true
      stopping+=("$name:$pid")
    done
    waited=0
    for name in "${stopping[@]}"; do
      pid=${name#*:}
      while kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        waited=$((waited + 1))
        [ $waited -lt $((grace * 10)) ] || { kill -KILL "$pid" 2>/dev/null || true; }
      done
      say "stopped ${name%%:*} ($pid)"
    done
    for node in $tier; do
      [[ $node == pg? ]] || continue
      # A postmaster left by a Patroni that was killed: fast shutdown.
      if pid=$(postmaster "$node"); then
        setpriv --reuid=postgres --regid=postgres --init-groups "$pg_bin/pg_ctl" stop -D "$dir/$node/data" -m fast >/dev/null 2>&1 \
          || kill -KILL "$pid" 2>/dev/null || true
        say "stopped $node's PostgreSQL ($pid)"
      fi
    done
  done
  echo "cluster down; its data stays in $dir"
}

status() {
  [ -f "$dir/cluster.env" ] || { echo "no cluster in $dir"; exit 3; }
  # shellcheck source=/dev/null
  . "$dir/cluster.env"
  local name pid running=0 stopped=0 i port state
  printf '%-17s %-8s %s\n' PART PID STATE
  for name in etcd pg1 pg2 pg3 haproxy-postgres p1 p2 haproxy-herald; do
    case $name in p1|p2|haproxy-herald) [ -f "$dir/pids/$name.pid" ] || continue ;; esac
    if pid=$(alive "$name"); then
      state=running; running=$((running + 1))
      case $name in
        etcd) state="running, 127.0.0.1:$ETCD_PORT" ;;
        pg?) i=${name#pg}; port="REST${i}_PORT"
             state="running, $(patroni_role "$name" "${!port}"), PostgreSQL 127.0.0.1:$(eval echo \$PG${i}_PORT)" ;;
        haproxy-postgres) state="running, 127.0.0.1:$PG_PROXY_PORT" ;;
        p1|p2) port=$( [ "$name" = p1 ] && echo "$P1_PORT" || echo "$P2_PORT")
               state="running, 127.0.0.1:$port, $(readiness "$port")" ;;
        haproxy-herald) state="running, http://127.0.0.1:$HTTP_PROXY_PORT" ;;
      esac
    else
      pid=-; state=stopped; stopped=$((stopped + 1))
    fi
    printf '%-17s %-8s %s\n' "$name" "$pid" "$state"
  done
  if alive pg1 >/dev/null || alive pg2 >/dev/null || alive pg3 >/dev/null; then
    echo "primary: $(primary_name)"
  fi
  [ $running -gt 0 ] || exit 3
  [ $stopped -eq 0 ] || exit 1
}

# Patroni's view of one node (`name` on REST `port`): its role in the cluster (leader,
# sync_standby, replica) and PostgreSQL's state, with the standby's lag.
patroni_role() {
  curl -sf --max-time 2 "http://127.0.0.1:$2/cluster" | /usr/bin/python3 -c '
import json, sys
for m in json.load(sys.stdin)["members"]:
    if m["name"] == sys.argv[1]:
        lag = m.get("lag")
        print(m["role"] + ", " + m["state"] + ("" if lag is None else ", lag " + str(lag) + " B"))
        break
else:
    print("not a member")' "$1" 2>/dev/null || echo "REST API not answering"
}

primary_name() {
  local i port
  for i in 1 2 3; do
    port="REST${i}_PORT"
    if curl -sf --max-time 2 "http://127.0.0.1:${!port}/primary" >/dev/null 2>&1; then echo "pg$i"; return; fi
  done
  echo "none"
}

readiness() {
  local code
  code=$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz") || code=000
  [ "$code" = 200 ] && echo ready || echo "not ready (readyz $code)"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  -h|--help|help) sed -n '2,21p' "$0" ;;
  *) echo "usage: Tools/cluster.sh up|down|status" >&2; exit 2 ;;
esac
