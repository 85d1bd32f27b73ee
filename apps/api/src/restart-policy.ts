/** The first replacement of an API process that died waits this long; each quick death doubles it. */
export const RESTART_DELAY_MIN_MS = 100;
export const RESTART_DELAY_MAX_MS = 5_000;
/** A process that served this long before it died was healthy: the next replacement waits the minimum again. */
export const HEALTHY_UPTIME_MS = 30_000;
/** This many deaths within the window are a crash loop: the primary stops (exit 1) instead of replacing. */
export const MAX_DEATHS = 5;
export const DEATH_WINDOW_MS = 60_000;

/**
 * When the WEB_CONCURRENCY primary replaces an API process that died after it listened (api-cluster.ts):
 * after a delay growing from 100 ms to 5 s while processes keep dying soon after they start, so a
 * crash loop does not spin a core on restarts, and not at all once MAX_DEATHS died within
 * DEATH_WINDOW_MS, which a supervisor (systemd, Kubernetes) should see as the primary's exit 1.
 */
export class RestartPolicy {
  private deaths: number[] = [];
  private quickDeaths = 0;

  /** A process died at `now` after serving `uptimeMs`: the delay before its replacement, or null to stop. */
  afterDeath(now: number, uptimeMs: number): number | null {
    this.deaths = this.deaths.filter((at) => now - at < DEATH_WINDOW_MS);
    this.deaths.push(now);
    if (this.deaths.length >= MAX_DEATHS) return null;
    if (uptimeMs >= HEALTHY_UPTIME_MS) this.quickDeaths = 0;
    const delay = Math.min(RESTART_DELAY_MAX_MS, RESTART_DELAY_MIN_MS * 2 ** this.quickDeaths);
    this.quickDeaths += 1;
    return delay;
  }
}
