import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@outcomes/runtime";

export interface Loop {
  /** Runs the next iteration now instead of after the interval. */
  wake: () => void;
  /** Stops after the running iteration; resolves when it has finished. */
  stop: () => Promise<void>;
}

/**
 * Runs `iteration` every `intervalMs`, and again at once while it reports more work. Errors are
 * logged and the loop carries on (Postgres or Redis being away for a moment must not end it).
 */
export function startLoop(name: string, intervalMs: number, iteration: () => Promise<boolean>, logger: Logger): Loop {
  let stopped = false;
  let waker = new AbortController();
  const running = (async () => {
    while (!stopped) {
      let more = false;
      try {
        more = await iteration();
      } catch (error) {
        logger.warn({ err: error, loop: name }, "loop iteration failed");
      }
      if (more || stopped) continue;
      await sleep(intervalMs, undefined, { signal: waker.signal }).catch(() => {});
      waker = new AbortController();
    }
  })();
  return {
    wake: () => waker.abort(),
    stop: async () => {
      stopped = true;
      waker.abort();
      await running;
    },
  };
}
