/**
 * Run by the webhooks crash and recovery tests as a child process (`startWebhooksCrashWorker`): the `webhooks` role started by `startWorker`, as
 * `main.ts` starts it, but with a one-second job lock, so the test can SIGKILL it mid-delivery (or
 * mid-recovery) and see another worker take over. WEBHOOKS_ROLE_OPTIONS (JSON) overrides more of
 * the role's options.
 */
import { createLogger, parseEnv } from "@outcomes/runtime";
import { startWorker } from "@outcomes/worker/start-worker";
import { webhooksRole } from "@outcomes/worker/webhooks";

const env = parseEnv();
await startWorker(env, createLogger(env.LOG_LEVEL, "crash-fixture"), {
  webhooks: webhooksRole({
    pollIntervalMs: 100,
    lockDurationMs: 1000,
    stalledIntervalMs: 500,
    ...JSON.parse(process.env.WEBHOOKS_ROLE_OPTIONS ?? "{}"),
  }),
});
process.stdout.write("ready\n");
