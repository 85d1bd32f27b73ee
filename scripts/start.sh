#!/usr/bin/env bash
# One command for a laptop: services, install if needed, migrate, then the API and every worker role.
# It runs while all of them run: when one stops, it stops the others and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
if [ -z "${ADMIN_TOKEN:-}" ]; then
  # The contract's default: no token, so the operator API and dashboard answer 503 KS-5002.
  echo "ADMIN_TOKEN is not set: the operator API and /admin/queues stay disabled (503 KS-5002)." >&2
fi
npm run --silent db:migrate
# The compiled bundles (scripts/build.mjs, ~0.2 s), as the Docker image runs them: plain node, no tsx.
npm run --silent build
# Each child in a process group of its own: a terminal's Ctrl-C reaches only this script, which
# then sends each child one SIGTERM (a second signal would make it skip its graceful drain).
set -m
node --enable-source-maps --heap-growing-percent=25 --min-semi-space-size=16 dist/apps/worker/main.js --role all &
worker=$!
node --enable-source-maps --heap-growing-percent=25 --min-semi-space-size=16 dist/apps/api/main.js &
api=$!
stop() {
  trap '' INT TERM
  kill -TERM "$api" "$worker" 2>/dev/null || true
  wait || true
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
status=0
wait -n "$api" "$worker" || status=$?
stop
echo "start.sh: a process exited (status $status), so the others were stopped." >&2
exit $((status == 0 ? 1 : status))
