import { ErrorCode, ServiceError } from "@outcomes/core";
import { type RedisClient, type RedisKeys, readMaintenanceFlag, writeMaintenanceFlag } from "@outcomes/queue";

const REFRESH_MS = 1000;

/**
 * The maintenance flag lives in Redis so every API process sees it; each process re-reads it at
 * most once a second (and at once on a pub/sub notice), so partner requests pay no round trip.
 */
export class MaintenanceSwitch {
  private enabled = false;
  private readAt = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async isEnabled(now = Date.now()): Promise<boolean> {
    if (now - this.readAt >= REFRESH_MS) {
      this.readAt = now;
      try {
        this.enabled = await readMaintenanceFlag(this.redis, this.keys);
      } catch {
        // Redis unreachable: keep the last known state rather than failing every request here.
      }
    }
    return this.enabled;
  }

  /** The flag as stored now, uncached (for operators); a Redis failure is raised, not hidden. */
  async read(): Promise<boolean> {
    return readMaintenanceFlag(this.redis, this.keys);
  }

  async set(enabled: boolean): Promise<void> {
    await writeMaintenanceFlag(this.redis, this.keys, enabled);
    this.forget();
  }

  /** Forces a re-read on the next request (called on a pub/sub notice). */
  forget(): void {
    this.readAt = 0;
  }

  async assertOff(): Promise<void> {
    if (await this.isEnabled()) throw new ServiceError(ErrorCode.Maintenance, { retryAfterSeconds: 60 });
  }
}
