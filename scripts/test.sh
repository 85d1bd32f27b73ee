#!/usr/bin/env bash
# The one test command: install if needed, then typecheck, lint, unit, integration, whole-system,
# fault and upgrade tests; the Redis-touching integration and fault tests also on a local Redis Cluster
# (scripts/redis-cluster.sh, from the machine's redis-server, as the Redis fault tests need anyway).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
# The machine's Postgres and Redis, started when down; where only Docker runs, the tests' global
# setup starts them in testcontainers (scripts/ensure-services.sh).
exports=$(bash scripts/ensure-services.sh --tests)
eval "$exports"
# Pages (/docs, the dashboard) are tested in Debian's Chromium; installed here where it is missing
# and apt can (as root). Elsewhere the browser tests say they were skipped, except on CI.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
echo "== typecheck" && npx tsc -b
echo "== lint" && npx biome check --error-on-warnings .
echo "== tests" && npx vitest run --project unit --project integration --project own-modules --project system --project integration-cluster --project own-modules-cluster
echo "== fault injection (real processes)" && npx vitest run --project faults --project faults-cluster
# The previous release's processes beside this tree's under load, on one Redis and on a Redis Cluster
# (docs/upgrades.md); its install is made once per lockfile under ~/.cache/outcomes-upgrade and reused.
echo "== rolling upgrade from the previous release" && npx vitest run --project upgrade && npx vitest run --project upgrade-cluster
