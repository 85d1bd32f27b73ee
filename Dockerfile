# syntax=docker/dockerfile:1.20
# One image for every process (API, each worker role, migrate); compose picks the command.
# Needs BuildKit (Docker 23+): `COPY --parents` keeps each workspace's package.json in its folder.

ARG NODE_IMAGE=node:24-bookworm-slim

# Production dependencies only. tsx is one of them: the services run their TypeScript through it
# (the workspace packages export .ts sources), so there is no separate compile step to drift.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --parents package.json package-lock.json apps/*/package.json packages/*/package.json patches ./
# patch-package applies patches/ (a postgres.js fix, see README) since scripts are off here.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npx patch-package && npm cache clean --force

# The SDK is the one package consumed as compiled JavaScript (the webhooks worker signs with it).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --parents package.json package-lock.json apps/*/package.json packages/*/package.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY packages/sdk ./packages/sdk
RUN npm run build -w @outcomes/sdk

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    WORKER_METRICS_PORT=9100
WORKDIR /app
COPY --from=deps --chown=node:node /app ./
COPY --chown=node:node package.json tsconfig.base.json tsconfig.json ./
COPY --chown=node:node drizzle ./drizzle
COPY --chown=node:node scripts ./scripts
COPY --chown=node:node packages ./packages
COPY --chown=node:node apps ./apps
COPY --from=build --chown=node:node /app/packages/sdk/dist ./packages/sdk/dist
# The official image's unprivileged user (uid 1000); nothing in /app needs root.
USER node
EXPOSE 3000 9100
# Health checks are per service in compose.yaml: the API answers on PORT, workers on WORKER_METRICS_PORT.
CMD ["npm", "run", "start:api"]
