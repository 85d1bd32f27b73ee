import { configDefaults, defineConfig } from "vitest/config";

/**
 * The Redis-touching subset that runs a second time against a local Redis Cluster (docs/redis-cluster.md):
 * spins (the rate-limit + pop script, idempotency, give-back), rate limits, blocks fill and
 * recovery, pub/sub invalidations and the maintenance flag, the unknown-key throttle and the
 * issued-key set, BullMQ (webhook delivery, the
 * dashboard, workers), the CLI.
 */
const CLUSTER_INTEGRATION = [
  "apps/api/src/spins/{concurrency,failure,forced,game-changes,idempotency,spin-gate}.test.ts",
  "apps/api/src/routes/partner/spins{,-rate-limit}.test.ts",
  "apps/api/src/{dashboard,metrics,redis-scripts}.test.ts",
  "apps/api/src/auth/{propagation,unknown-keys}.test.ts",
  "apps/api/src/routes/admin/maintenance.test.ts",
  "apps/api/src/replay/replay.test.ts",
  "apps/worker/src/blocks/*.test.ts",
  "apps/worker/src/key-expiry/issued-keys.test.ts",
  "apps/worker/src/webhooks/delivery.test.ts",
  "apps/worker/src/queue-worker.test.ts",
  "apps/cli/src/cli-operations.test.ts",
  "packages/queue/src/redis.test.ts",
];
const CLUSTER_SETUP = ["tests/kit/src/global-setup.ts", "tests/kit/src/cluster-setup.ts"];

/**
 * Files that need a module graph of their own: the process-wide metrics registry counts what every
 * earlier file of the worker did, and `vi.mock` of a module does not reach one an earlier file loaded.
 * Every other integration and system file shares its worker's modules (`isolate: false`): importing
 * the service anew for each of ~170 files was half the suite's CPU (import 311 s of 584 s, measured).
 */
const OWN_MODULES = [
  "apps/api/src/metrics.test.ts",
  "packages/runtime/src/metrics.test.ts",
  "tests/security/timing-safe.test.ts",
];

export default defineConfig({
  test: {
    // Two files at a time even on a 2-core machine (vitest's default there is one): the files mostly
    // wait on Postgres, Redis and their own servers. Measured on CI's machine, the unit, integration,
    // system and cluster projects took 401 s with one, 257 s with two, 253 s with three.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: "unit",
          // Pure logic; in the apps, a service's branches with fakes (`*.unit.test.ts`).
          include: ["packages/{core,records,sdk}/src/**/*.test.ts", "apps/*/src/**/*.unit.test.ts"],
        },
      },
      {
        test: {
          name: "integration",
          include: [
            "apps/**/src/**/*.test.ts",
            "packages/{blocks,db,queue,runtime}/src/**/*.test.ts",
            "scripts/**/*.test.ts",
          ],
          exclude: [...configDefaults.exclude, "**/*.unit.test.ts", ...OWN_MODULES],
          globalSetup: ["tests/kit/src/global-setup.ts"],
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "own-modules",
          include: OWN_MODULES,
          globalSetup: ["tests/kit/src/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The same files on a local Redis Cluster (scripts/redis-cluster.sh), started for the run,
        // sharing their worker's modules as the integration files do (import was 50 of 78 s here).
        test: {
          name: "integration-cluster",
          include: CLUSTER_INTEGRATION,
          exclude: [...configDefaults.exclude, ...OWN_MODULES],
          isolate: false,
          globalSetup: CLUSTER_SETUP,
          setupFiles: ["tests/kit/src/cluster-env.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The one cluster file that needs a module graph of its own (OWN_MODULES).
        test: {
          name: "own-modules-cluster",
          include: ["apps/api/src/metrics.test.ts"],
          globalSetup: CLUSTER_SETUP,
          setupFiles: ["tests/kit/src/cluster-env.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Whole-system tests under tests/ (the security suite, the production-sources check): `npm run test:system`.
        test: {
          name: "system",
          include: ["tests/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "tests/faults/**", "tests/upgrade/**", ...OWN_MODULES],
          globalSetup: ["tests/kit/src/global-setup.ts"],
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Fault injection on the real processes (tests/faults/README in docs/guarantees.md): `npm run test:faults`.
        test: {
          name: "faults",
          include: ["tests/faults/**/*.test.ts"],
          // Cluster-only: in faults-cluster.
          exclude: [...configDefaults.exclude, "tests/faults/redis-failover.test.ts"],
          globalSetup: ["tests/kit/src/global-setup.ts", "tests/faults/harness/bundles-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // Fault injection on a Redis Cluster: masters killed and failed over under spin load (the
        // file starts a cluster of its own, as it kills its nodes).
        test: {
          name: "faults-cluster",
          include: ["tests/faults/redis-failover.test.ts"],
          globalSetup: ["tests/kit/src/global-setup.ts", "tests/faults/harness/bundles-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // The previous release and this tree side by side under load (docs/upgrades.md): `npm run
        // test:upgrade`. The first run installs the previous release (minutes); later runs reuse it.
        test: {
          name: "upgrade",
          include: ["tests/upgrade/**/*.test.ts"],
          globalSetup: ["tests/kit/src/global-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 900_000,
          fileParallelism: false,
        },
      },
      {
        // The same rolling upgrade with both releases on a Redis Cluster (`npm run test:upgrade`).
        test: {
          name: "upgrade-cluster",
          include: ["tests/upgrade/upgrade.test.ts"],
          globalSetup: CLUSTER_SETUP,
          setupFiles: ["tests/kit/src/cluster-env.ts"],
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
