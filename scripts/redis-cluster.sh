#!/usr/bin/env bash
# A real Redis Cluster on 127.0.0.1 from the machine's redis-server: 3 masters, 1 replica each
# (a master killed or failed over is replaced by its replica), no persistence, in a temp dir.
#
#   scripts/redis-cluster.sh start [port-base]   # ports base..base+5; prints REDIS_CLUSTER_NODES=...
#   scripts/redis-cluster.sh stop [port-base]
#
# The port base is REDIS_CLUSTER_PORT_BASE when not given (default 7100). NODE_TIMEOUT_MS (default
# 1000) is cluster-node-timeout: how long a dead master goes unnoticed before its replica is
# promoted. `start` returns once every node reports cluster_state:ok and every master has its replica.
set -euo pipefail

command_name="${1:-}"
base="${2:-${REDIS_CLUSTER_PORT_BASE:-7100}}"
node_timeout="${NODE_TIMEOUT_MS:-1000}"
dir="${TMPDIR:-/tmp}/redis-cluster-$base"
ports=$(seq "$base" $((base + 5)))

usage() {
  echo "usage: $0 start|stop [port-base]" >&2
  exit 2
}

cli() { redis-cli -h 127.0.0.1 -p "$1" "${@:2}"; }
answers() { cli "$1" ping >/dev/null 2>&1; }

stop() {
  for port in $ports; do
    if [ -f "$dir/$port.pid" ]; then
      kill "$(cat "$dir/$port.pid")" 2>/dev/null || true
    fi
  done
  for port in $ports; do
    for _ in $(seq 1 50); do
      answers "$port" || break
      sleep 0.1
    done
  done
  rm -rf "$dir"
}

wait_until() {
  local what="$1" deadline=$((SECONDS + 30))
  shift
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "redis-cluster: timed out waiting for $what" >&2
      return 1
    fi
    sleep 0.2
  done
}

all_ok() {
  for port in $ports; do
    cli "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
  done
}

replicas_synced() {
  [ "$(cli "$base" cluster nodes 2>/dev/null | grep -c ' slave ')" -eq 3 ] || return 1
  for port in $ports; do
    local info
    info=$(cli "$port" info replication 2>/dev/null)
    if grep -q '^role:slave' <<<"$info"; then
      grep -q '^master_link_status:up' <<<"$info" || return 1
    fi
  done
}

start() {
  command -v redis-server >/dev/null || {
    echo "redis-cluster: redis-server is not installed" >&2
    exit 1
  }
  stop
  mkdir -p "$dir"
  for port in $ports; do
    redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$dir/nodes-$port.conf" --cluster-node-timeout "$node_timeout" \
      --save "" --appendonly no --dir "$dir" --daemonize yes --pidfile "$dir/$port.pid" \
      --logfile "$dir/$port.log" --protected-mode no
  done
  for port in $ports; do
    wait_until "redis-server on $port" answers "$port"
  done
  local nodes=()
  for port in $ports; do nodes+=("127.0.0.1:$port"); done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log"
  wait_until "cluster_state:ok" all_ok
  wait_until "replicas in sync" replicas_synced
  echo "REDIS_CLUSTER_NODES=$(
    IFS=,
    echo "${nodes[*]}"
  )"
}

case "$command_name" in
start) start ;;
stop) stop ;;
*) usage ;;
esac
