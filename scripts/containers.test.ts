import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

/** Docker does not run where the tests run: these check the container files as documents. */
const root = new URL("../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

type Service = {
  image?: string;
  build?: unknown;
  command?: string[];
  ports?: string[];
  container_name?: string;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  environment?: Record<string, string>;
  init?: boolean;
};
const compose = parse(read("compose.yaml"), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const ROLES = ["blocks", "settlements", "webhooks", "key-expiry"];

/** The node command a package.json start script ends with ("node scripts/build.mjs && node …"). */
function productionCommand(script: string): string[] {
  const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
  return (scripts[script] ?? "").split("&&").at(-1)?.trim().split(/\s+/) ?? [];
}

describe("compose.yaml", () => {
  it("has the stores, a one-shot migrate, the API and one service per worker role", () => {
    expect(Object.keys(services).sort()).toEqual(
      ["api", "migrate", "postgres", "redis", ...ROLES.map((role) => `worker-${role}`)].sort(),
    );
    expect(services.postgres?.image).toMatch(/^postgres:17/);
    expect(services.migrate?.command).toEqual(["npm", "run", "db:migrate"]);
    // The bundle built in the image (scripts/build.mjs), with the node flags of `npm run start:api`.
    expect(services.api?.command).toEqual(productionCommand("start:api"));
  });

  it("runs Redis with AOF and without eviction", () => {
    const command = services.redis?.command?.join(" ") ?? "";
    expect(command).toContain("--appendonly yes");
    expect(command).toContain("--maxmemory-policy noeviction");
  });

  it("starts each worker role as its own scalable service after migrations and healthy stores", () => {
    for (const role of ROLES) {
      const worker = services[`worker-${role}`];
      expect(worker?.command).toEqual([...productionCommand("start:worker"), "--role", role]);
      // `--scale` needs no fixed name and no published port.
      expect(worker?.container_name).toBeUndefined();
      expect(worker?.ports).toBeUndefined();
      expect(worker?.init).toBe(true);
      expect(worker?.depends_on).toEqual({
        migrate: { condition: "service_completed_successfully" },
        postgres: { condition: "service_healthy" },
        redis: { condition: "service_healthy" },
      });
      expect(worker?.healthcheck?.test.join(" ")).toContain("9100/healthz");
      expect(worker?.environment?.WORKER_METRICS_PORT).toBe("9100");
    }
    expect(services.api?.depends_on).toEqual(services["worker-blocks"]?.depends_on);
    expect(services.migrate?.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
  });

  it("runs the workers with the API's V8 heap flags (a recover otherwise grew the webhooks worker by ~150 MB)", () => {
    const flags = ["--heap-growing-percent=25", "--min-semi-space-size=16"];
    for (const script of ["start:api", "start:worker"]) {
      expect(productionCommand(script)).toEqual(expect.arrayContaining(flags));
    }
  });

  it("health-checks every long-running service", () => {
    for (const [name, service] of Object.entries(services)) {
      if (name !== "migrate") expect(service.healthcheck, name).toBeDefined();
    }
    expect(services.api?.healthcheck?.test.join(" ")).toContain("/readyz");
  });
});

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((match) => match[2]);
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));

  it("is multi-stage on the current Node LTS and runs as a non-root user", () => {
    expect(stages).toEqual(["deps", "build", "native", "runtime"]);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:26-/m);
    expect(dockerfile).toMatch(/^ARG NODE_TOOLCHAIN_IMAGE=node:26-/m);
    expect(finalStage).toMatch(/^USER node$/m);
    expect(finalStage).not.toMatch(/^USER root$/m);
  });

  it("installs production dependencies only, tsx among them, for every workspace", () => {
    expect(dockerfile).toContain("npm ci --omit=dev");
    const manifest = JSON.parse(read("package.json")) as {
      workspaces: string[];
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.dependencies.tsx).toBeDefined();
    expect(manifest.devDependencies.tsx).toBeUndefined();
    for (const workspace of manifest.workspaces) {
      expect(dockerfile).toContain(`${workspace}/package.json`);
    }
  });

  it("bundles the API and the worker in the build stage and runs the API's bundle", () => {
    expect(dockerfile).toContain("RUN node scripts/build.mjs");
    expect(finalStage).toContain("COPY --from=build --chown=node:node /app/dist/apps ./dist/apps");
    expect(finalStage).toContain(`CMD ${JSON.stringify(productionCommand("start:api")).replaceAll(",", ", ")}`);
  });

  it("compiles the native hasher with a toolchain and copies only its module into the image", () => {
    expect(dockerfile).toMatch(/^FROM \$\{NODE_TOOLCHAIN_IMAGE\} AS native$/m);
    expect(dockerfile).toContain("RUN npm run build:native");
    expect(finalStage).toContain(
      "COPY --from=native --chown=node:node /app/packages/sha256-batch/build/Release/sha256_batch.node",
    );
    expect(read(".dockerignore").split("\n")).toContain("packages/sha256-batch/build");
  });

  it("keeps test code out of the build context, so out of the image", () => {
    const ignored = read(".dockerignore").split("\n");
    expect(ignored).toEqual(
      expect.arrayContaining(["**/*.test.ts", "tests/*", "!tests/kit", "tests/kit/*", "!tests/kit/package.json"]),
    );
  });

  it("keeps dependencies and build output of the host out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    expect(ignored).toEqual(expect.arrayContaining(["**/node_modules", "**/dist", ".git", ".env"]));
  });
});
