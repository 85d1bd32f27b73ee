# syntax=docker/dockerfile:1.20
# One image for every process (API, each worker role, migrate); compose picks the command.
# Needs BuildKit (Docker 23+): `COPY --parents` keeps each workspace's package.json in its folder.
# Node 26, the current LTS (README, "Supported Node versions": every package runs on 20.18.1 or later).

ARG NODE_IMAGE=node:26-bookworm-slim
# The same Node with a C toolchain, for the one native module (the native stage).
ARG NODE_TOOLCHAIN_IMAGE=node:26-bookworm

# Production dependencies only. The API and the workers run the bundles of the build stage on plain
# node; tsx stays a dependency for the one-off commands (db:migrate, the operator CLI).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --parents package.json package-lock.json apps/*/package.json packages/*/package.json tests/kit/package.json patches ./
# patch-package applies patches/ (a postgres.js fix, see README) since scripts are off here.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npx patch-package && npm cache clean --force

# The SDK is consumed as compiled JavaScript (the webhooks worker signs with it); then the API and
# the worker are bundled (scripts/build.mjs, esbuild: workspace packages inlined, node_modules
# external, source maps) into dist/apps/{api,worker}/main.js, with the /docs viewer's browser bundle (a
# dev dependency) and the replay page's script and style sheet copied beside the API's. Running them on plain node instead of tsx keeps the API's
# resident memory ~45 MB lower (docs/performance.md).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --parents package.json package-lock.json apps/*/package.json packages/*/package.json tests/kit/package.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY packages/sdk ./packages/sdk
RUN npm run build -w @outcomes/sdk
COPY scripts/build.mjs ./scripts/build.mjs
COPY packages ./packages
COPY apps ./apps
RUN node scripts/build.mjs

# The blocks worker's native batch SHA-256 (packages/sha256-batch), compiled in the full Debian image,
# which has python3, make and g++ (node-gyp fetches the Node headers). Without it the worker would hash
# its Merkle trees with node:crypto: the same trees for about 3 times the CPU.
FROM ${NODE_TOOLCHAIN_IMAGE} AS native
WORKDIR /app/packages/sha256-batch
COPY packages/sha256-batch ./
RUN npm run build:native

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    API_METRICS_PORT=9464 \
    WORKER_METRICS_PORT=9100
WORKDIR /app
COPY --from=deps --chown=node:node /app ./
COPY --chown=node:node package.json tsconfig.base.json tsconfig.json ./
COPY --chown=node:node drizzle ./drizzle
COPY --chown=node:node scripts ./scripts
COPY --chown=node:node packages ./packages
COPY --chown=node:node apps ./apps
COPY --from=build --chown=node:node /app/packages/sdk/dist ./packages/sdk/dist
COPY --from=build --chown=node:node /app/dist/apps ./dist/apps
COPY --from=native --chown=node:node /app/packages/sha256-batch/build/Release/sha256_batch.node ./packages/sha256-batch/build/Release/
# The official image's unprivileged user (uid 1000); nothing in /app needs root.
USER node
EXPOSE 3000 9464 9100
# Health checks are per service in compose.yaml: the API answers on PORT, workers on WORKER_METRICS_PORT.
# The bundle directly, with the same node flags as `npm run start:api` (which bundles first and needs
# the dev dependencies). --heap-growing-percent=25: the API's heap grows by 25% over its live data
# between full collections instead of V8's default factor (up to 4×), which keeps peak RSS under
# load below 150 MB for a few % of CPU (docs/performance.md); --min-semi-space-size=16 keeps the young generation at its
# full size, so a busy API scavenges less often (~5% less CPU per spin, same peak RSS: docs/performance.md).
CMD ["node", "--enable-source-maps", "--heap-growing-percent=25", "--min-semi-space-size=16", "dist/apps/api/main.js"]
