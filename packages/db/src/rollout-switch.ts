import { type GateName, RELEASE_GATES, type ReleaseGate } from "@outcomes/core";
import type { Database } from "./client.js";
import { newestFinishedRelease } from "./repositories/release-rollouts.js";

const REFRESH_MS = 1000;

/**
 * Whether a release's rollout has finished, as one process follows it: read from Postgres at most
 * once a second (the API also re-reads at once on a pub/sub notice, `forget`). A finished rollout
 * stays finished, so once seen it is not read again. Before the first read succeeds, and while
 * Postgres cannot be read, the last known answer stands (at first: not finished), so a gated
 * feature stays off rather than comes on.
 */
export class RolloutSwitch {
  private finishedThrough = 0;
  private readAt = 0;
  private reading: Promise<void> | undefined;

  constructor(private readonly db: Database) {}

  /**
   * True once the rollout of `release` (or of a later one) has finished: no process of the release
   * before it runs any more. A feature passes the release it arrived in (RELEASES.md).
   */
  async finished(release: number, now = Date.now()): Promise<boolean> {
    if (this.finishedThrough >= release) return true;
    if (now - this.readAt >= REFRESH_MS) {
      this.readAt = now;
      this.reading ??= newestFinishedRelease(this.db)
        .then(
          (newest) => {
            this.finishedThrough = Math.max(this.finishedThrough, newest);
          },
          () => {},
        )
        .finally(() => {
          this.reading = undefined;
        });
    }
    if (this.reading) await this.reading;
    return this.finishedThrough >= release;
  }

  /** Whether the feature behind a release gate is on (its release's rollout has finished). */
  on(gate: GateName): Promise<boolean> {
    const gates: Record<string, ReleaseGate> = RELEASE_GATES;
    return this.finished(gates[gate]!.addedIn);
  }

  /** Forces a read on the next call (a pub/sub notice that a rollout finished). */
  forget(): void {
    this.readAt = 0;
  }
}
