import { readFileSync } from "node:fs";
import { parseEnv } from "@outcomes/runtime";
import { describe, expect, it } from "vitest";
import { UNKNOWN_KEYS_PER_WINDOW } from "../../apps/api/src/auth/failed-auth-throttle.js";

const page = readFileSync(new URL("../../docs/limits.md", import.meta.url), "utf8");

/** docs/limits.md states the deployment defaults the code has (a changed default fails here). */
describe("docs/limits.md", () => {
  const env = parseEnv({});

  it("gives the rate buckets' defaults and their burst", () => {
    expect(page).toContain(`${env.RATE_LIMIT_SPINS_PER_SECOND} a second per partner and environment`);
    expect(page).toContain(`${env.RATE_LIMIT_REQUESTS_PER_SECOND} a second per partner and environment`);
    expect(page).toContain(
      `(${env.RATE_LIMIT_SPINS_PER_SECOND} spins, ${env.RATE_LIMIT_REQUESTS_PER_SECOND} requests)`,
    );
    expect(page).toContain(`${UNKNOWN_KEYS_PER_WINDOW} a minute`);
  });

  it("gives the void window, the webhook schedule and the settlement time", () => {
    expect(page).toContain(`${env.VOID_WINDOW_HOURS} hours after the spin's \`createdAt\``);
    const minutes = env.WEBHOOK_RETRY_DELAYS_MS.map((ms) => ms / 60_000);
    expect(page).toContain(
      `${minutes.length + 1} attempts, waits of ${minutes.slice(0, -1).join(", ")} and ${minutes.at(-1)} minutes`,
    );
    expect(page).toContain(`within ${env.WEBHOOK_TIMEOUT_MS / 1000} s`);
    expect(env.SETTLEMENT_CRON).toBe("0 2 * * *");
    expect(page).toContain("at 02:00 UTC");
  });
});
