#!/usr/bin/env bash
# Makes Postgres and Redis answer before `npm start` and `npm test` (fresh laptops, CI).
# For each of DATABASE_URL and REDIS_URL (default: the machine's 127.0.0.1:5432 and :6379):
#  - on another host: left alone (someone else runs that service);
#  - answering: nothing to do;
#  - installed here (Debian/Ubuntu's postgresql and redis-server packages): started;
#  - else, where Docker runs: `--tests` leaves an unset URL to the tests' testcontainers
#    (tests/kit/src/global-setup.ts); otherwise a container is started on that port;
#  - else: one line on how to get it, and exit 1.
# With `--tests`, prints `export DATABASE_URL=… REDIS_URL=…` lines for the machine's services it
# uses where the variable was unset (`eval` them).
set -euo pipefail
tests=false
[ "${1:-}" = "--tests" ] && tests=true

fail() {
  echo "ensure-services: $*" >&2
  exit 1
}

# Host and port of a URL (postgres://user:pw@host:port/db, redis://host:port, [::1] brackets kept off).
parse_url() {
  local rest=${1#*://}
  rest=${rest%%[/?]*}
  rest=${rest##*@}
  if [[ $rest =~ ^\[([^]]*)\](:([0-9]+))?$ || $rest =~ ^([^:]*)(:([0-9]+))?$ ]]; then
    host=${BASH_REMATCH[1]:-127.0.0.1}
    port=${BASH_REMATCH[3]:-$2}
  else
    fail "cannot read host and port from $1"
  fi
}

is_local() { [[ $1 == 127.0.0.1 || $1 == localhost || $1 == ::1 ]]; }

# A TCP connect, for where the client tools are not installed.
tcp_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

postgres_up() {
  if command -v pg_isready >/dev/null; then pg_isready -h "$host" -p "$port" -q; else tcp_open "$host" "$port"; fi
}
redis_up() {
  if command -v redis-cli >/dev/null; then redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1; else tcp_open "$host" "$port"; fi
}

docker_runs() { command -v docker >/dev/null && docker info >/dev/null 2>&1; }

# Polls `$@` for up to 30 s.
wait_for() {
  for _ in {1..60}; do
    "$@" && return 0
    sleep 0.5
  done
  return 1
}

# The machine's cluster on that port (pg_lsclusters: version, name, port, status, …).
start_local_postgres() {
  command -v pg_lsclusters >/dev/null && command -v pg_ctlcluster >/dev/null || return 1
  local version name cluster_port _
  while read -r version name cluster_port _; do
    if [ "$cluster_port" = "$port" ]; then
      pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start ||
        fail "could not start Postgres $version/$name (see above); start it yourself, e.g. sudo pg_ctlcluster $version $name start"
      return 0
    fi
  done < <(pg_lsclusters -h)
  return 1
}

start_local_redis() {
  command -v redis-server >/dev/null || return 1
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$port" --save "" --appendonly no ||
    fail "could not start redis-server on port $port (see above)"
}

# A named container of the version compose runs, reused (started again) on later runs.
start_container() {
  local name=$1 image=$2 container_port=$3
  shift 3
  if docker container inspect "$name" >/dev/null 2>&1; then
    docker start "$name" >/dev/null
  else
    docker run -d --name "$name" -p "127.0.0.1:$port:$container_port" "$@" "$image" >/dev/null
  fi
}

# ensure <what> <variable> <default port> <install hint>
ensure() {
  local what=$1 variable=$2 default_port=$3 hint=$4 url
  url=${!variable:-}
  parse_url "${url:-$what://127.0.0.1}" "$default_port"
  is_local "$host" || return 0
  if ! "${what}_up"; then
    if "start_local_$what"; then
      wait_for "${what}_up" || fail "${what^} did not answer on $host:$port within 30 s after it was started"
    elif docker_runs; then
      if $tests && [ -z "$url" ]; then
        echo "ensure-services: ${what^} is not running here; the tests start it in Docker (testcontainers)." >&2
        return 0
      fi
      echo "ensure-services: starting ${what^} in Docker (container outcomes-$what) on $host:$port" >&2
      if [ "$what" = postgres ]; then
        start_container outcomes-postgres postgres:17 5432 -e POSTGRES_HOST_AUTH_METHOD=trust
        wait_for docker exec outcomes-postgres pg_isready -h 127.0.0.1 -q || fail "the postgres container did not become ready within 30 s"
      else
        start_container outcomes-redis redis:7.4 6379
        wait_for docker exec outcomes-redis redis-cli ping >/dev/null || fail "the redis container did not become ready within 30 s"
      fi
    else
      fail "${what^} is not answering on $host:$port and neither a local ${what^} nor Docker is here to start it: $hint, install Docker, or set $variable to a running one."
    fi
  fi
  if $tests && [ -z "$url" ]; then
    [ "$what" = postgres ] && echo "export $variable=postgres://postgres@$host:$port/postgres"
    [ "$what" = redis ] && echo "export $variable=redis://$host:$port"
  fi
  return 0
}

ensure postgres DATABASE_URL 5432 "install and start Postgres 17 (e.g. apt-get install postgresql)"
# With REDIS_CLUSTER_NODES the processes use that Redis Cluster (the operator's to run), not REDIS_URL;
# the tests still use REDIS_URL beside the cluster they start.
if [ -z "${REDIS_CLUSTER_NODES:-}" ] || $tests; then
  ensure redis REDIS_URL 6379 "install and start Redis 7 (e.g. apt-get install redis-server)"
fi
