#!/usr/bin/env bash
# One command for a laptop: install if needed, migrate, then the API and every worker role.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
if [ -z "${ADMIN_TOKEN:-}" ]; then
  # The contract's default: no token, so the operator API and dashboard answer 503 KS-5002.
  echo "ADMIN_TOKEN is not set: the operator API and /admin/queues stay disabled (503 KS-5002)." >&2
fi
npm run --silent db:migrate
# The compiled bundles (scripts/build.mjs, ~0.2 s), as the Docker image runs them: plain node, no tsx.
npm run --silent build
node --enable-source-maps dist/apps/worker/main.js --role all &
worker=$!
node --enable-source-maps --heap-growing-percent=25 dist/apps/api/main.js &
api=$!
trap 'kill -TERM $api $worker 2>/dev/null; wait' INT TERM
wait -n $api $worker
kill -TERM $api $worker 2>/dev/null || true
wait
