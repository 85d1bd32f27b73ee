import type { Env } from "@outcomes/runtime";

/**
 * BullMQ lock settings shared by every role: a job whose worker died is moved back to waiting by
 * the next stalled check once its lock lapses, and another worker takes it (WORKER_JOB_LOCK_MS).
 */
export function jobLockOptions(env: Pick<Env, "WORKER_JOB_LOCK_MS">) {
  return { lockDuration: env.WORKER_JOB_LOCK_MS, stalledInterval: env.WORKER_JOB_LOCK_MS };
}
