import { run } from "@outcomes/cli/program";
import { expect } from "vitest";
import type { TestApi } from "./api.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The CLI run in-process against a test API's database and Redis prefix, with its output captured.
 * `env` adds settings the API was started with (e.g. `BLOCK_SIZE`) so both see the same deployment.
 */
export function cliAgainst(api: () => TestApi, env: Record<string, string> = {}) {
  async function cli(...argv: string[]): Promise<CliResult> {
    let stdout = "";
    let stderr = "";
    const code = await run(argv, {
      env: {
        DATABASE_URL: api().database.url,
        REDIS_URL: process.env.REDIS_URL,
        REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES,
        REDIS_PREFIX: api().redisPrefix,
        ...env,
      },
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
    });
    return { code, stdout, stderr };
  }

  /** Runs with `--json`, expects success, and returns the parsed output. */
  async function cliJson(...argv: string[]) {
    const result = await cli(...argv, "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout);
  }

  return { cli, cliJson };
}

/** Exit code and the `error KS-…` prefix of stderr, to compare in one assertion. */
export const errorCode = (result: CliResult) => [result.code, result.stderr.split(":")[0]];
