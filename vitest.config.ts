import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["packages/{core,records,sdk}/src/**/*.test.ts"],
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
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Whole-system tests under tests/ (the security suite, the production-sources check): `npm run test:system`.
        test: {
          name: "system",
          include: ["tests/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "tests/faults/**"],
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Fault injection on the real processes (tests/faults/README in docs/guarantees.md): `npm run test:faults`.
        test: {
          name: "faults",
          include: ["tests/faults/**/*.test.ts"],
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
