#!/usr/bin/env bash
# The one test command: install if needed, then typecheck, lint, unit, integration and end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
# Tests use the machine's services (testcontainers only where these are unset and Docker runs).
if [ -z "${DATABASE_URL:-}" ] && pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres"
fi
if [ -z "${REDIS_URL:-}" ] && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  export REDIS_URL="redis://127.0.0.1:6379"
fi
echo "== typecheck" && npx tsc -b
echo "== lint" && npx biome check --error-on-warnings .
echo "== tests" && npx vitest run --project unit --project integration
echo "== fault injection (real processes)" && npx vitest run --project faults
