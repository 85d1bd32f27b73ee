#!/usr/bin/env bash
# The one test command: install if needed, then typecheck, lint, unit, integration and end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
# The machine's Postgres and Redis, started when down; where only Docker runs, the tests' global
# setup starts them in testcontainers (scripts/ensure-services.sh).
exports=$(bash scripts/ensure-services.sh --tests)
eval "$exports"
echo "== typecheck" && npx tsc -b
echo "== lint" && npx biome check --error-on-warnings .
echo "== tests" && npx vitest run --project unit --project integration
echo "== fault injection (real processes)" && npx vitest run --project faults
