import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["packages/core/src/**/*.test.ts", "packages/sdk/src/**/*.test.ts"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["apps/**/src/**/*.test.ts", "packages/{db,queue,runtime}/src/**/*.test.ts", "scripts/**/*.test.ts"],
          globalSetup: ["scripts/test-global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
