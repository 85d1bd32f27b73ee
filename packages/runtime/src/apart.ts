/**
 * Runs `work` on each item in turn, where one item's failure must never stop the others: scheduled
 * work over many partners (CONTRACT §9, isolation). A failure is handed to `onFailure` and counted;
 * the caller decides what the count means for its job (usually: fail it at the end, so it runs again).
 */
export async function eachApart<T>(
  items: Iterable<T>,
  work: (item: T) => Promise<void>,
  onFailure: (item: T, error: unknown) => void,
): Promise<{ failed: number }> {
  let failed = 0;
  for (const item of items) {
    try {
      await work(item);
    } catch (error) {
      failed++;
      onFailure(item, error);
    }
  }
  return { failed };
}

/** The error a job ends with when some of its items failed (each was logged on its own). */
export class PartialFailure extends Error {
  constructor(what: string, failed: number, total: number) {
    super(`${failed} of ${total} ${what} failed (each is logged); the others were done`);
    this.name = "PartialFailure";
  }
}
