import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { type ApiClient, createPartnerWithKey, registerGame, waitForReserve } from "../../faults/harness/http.js";
import { eventually, type ServiceProcess, sleep } from "../../faults/harness/processes.js";
import { Receiver } from "../../faults/harness/receiver.js";
import { Balancer } from "./balancer.js";
import {
  checkAnswers,
  checkFailedJobs,
  checkLogs,
  checkQueue,
  checkReplays,
  checkSpins,
  checkWebhooks,
  type Finding,
} from "./checks.js";
import { type ApiInstance, Deployment, WORKER_ROLES } from "./deployment.js";
import { RollingLoad } from "./load.js";
import type { Release } from "./release.js";

/** The event types of release 2 (3d88f15): a webhook of the previous release can subscribe to these. */
const PREVIOUS_EVENT_TYPES = [
  "spin.large_win",
  "settlement.report_ready",
  "block.low_reserve",
  "api_key.expiring",
  "spin.voided",
];
/** Keys of each release replayed by the other while both run (all of them are, once one is stopped). */
const MIXED_REPLAYS = 100;
/** A graceful stop that takes longer than this counts as hung. */
const STOP_BOUND_MS = 20_000;

export interface RolloutOptions {
  /** The release deployed first (the previous one). */
  from: Release;
  /** The release rolled out over it. */
  to: Release;
  /** Then roll back: `from` started again beside `to` on the migrated database, `to` stopped. */
  rollback: boolean;
  /** How long each stage of load runs (old alone, both, new alone). */
  stageMs: number;
  /** Concurrent spin clients. */
  clients: number;
  /**
   * How long what should happen soon may take before it counts as not happening (default 10 s):
   * a stopping release's API serving an outcome the other sealed, keyed retries getting their 200,
   * generation and webhook delivery catching up once the load stops. A test that expects breaches
   * waits less.
   */
  patienceMs?: number;
  log?: (line: string) => void;
}

export interface RolloutReport {
  /** What went wrong, each prefixed by the step that saw it ("upgrade", "rollback"); empty: nothing. */
  violations: string[];
  /** One line of figures per step. */
  summary: string[];
  figures: Record<string, unknown>;
}

interface ReleaseProcesses {
  api: ApiInstance;
  workers: ServiceProcess[];
}

interface WorldOfRollout {
  partnerId: string;
  apiKey: string;
  gameId: number;
  webhookId: string;
}

/**
 * A rolling upgrade under spin load, as an operator runs it (docs/upgrades.md): `from` migrates an
 * empty database and serves; `to` migrates it further and starts beside it; `from`'s processes
 * stop one at a time (workers role by role, then the API); `to` serves alone. Then, when asked,
 * the same backwards. After each direction every invariant is checked and any breach reported.
 */
export async function rollingUpgrade(options: RolloutOptions): Promise<RolloutReport> {
  const rollout = new Rollout(options, await Deployment.create(), await Receiver.start());
  try {
    await rollout.run();
  } finally {
    await rollout.close();
  }
  return rollout.report;
}

class Rollout {
  readonly report: RolloutReport = { violations: [], summary: [], figures: {} };
  private readonly balancer = new Balancer();
  private readonly running = new Map<Release, ReleaseProcesses>();
  private load!: RollingLoad;
  private world!: WorldOfRollout;
  private readonly log: (line: string) => void;
  private readonly patienceMs: number;

  constructor(
    private readonly options: RolloutOptions,
    private readonly deployment: Deployment,
    private readonly receiver: Receiver,
  ) {
    this.log = options.log ?? (() => {});
    this.patienceMs = options.patienceMs ?? 10_000;
  }

  async run(): Promise<void> {
    const { from, to, stageMs } = this.options;
    const started = Date.now();
    await this.timed("migrate-from", () => from.migrate(this.deployment.env.DATABASE_URL!));
    await this.timed("start-from", () => this.start(from));
    this.world = await createWorld(this.running.get(from)!.api.client, this.receiver.url);
    await waitForReserve(this.running.get(from)!.api.client, this.world.gameId, 2);
    this.load = new RollingLoad(this.balancer, this.world, {
      clients: this.options.clients,
      keyedEvery: 2,
      forceEvery: 40,
      timeoutMs: 15_000,
    });

    this.load.start();
    await sleep(stageMs);
    await this.timed("upgrade-migrate", () => to.migrate(this.deployment.env.DATABASE_URL!));
    await this.roll("upgrade", from, to);
    if (this.options.rollback) {
      this.load.start();
      await sleep(stageMs / 2);
      // The previous release's migrator on a database migrated further: nothing to apply.
      const before = await this.appliedMigrations();
      await this.timed("rollback-migrate", () => from.migrate(this.deployment.env.DATABASE_URL!));
      const after = await this.appliedMigrations();
      if (after !== before) this.violate("rollback", `the previous release's migrator applied ${after - before} more`);
      await this.roll("rollback", to, from);
    }
    this.report.figures.totalMs = Date.now() - started;
  }

  /**
   * Under the running load, on the database as `next` needs it: `next` starts beside `previous`,
   * then `previous` stops one process at a time; `next` serves alone for a stage; the load stops
   * and everything is checked.
   */
  private async roll(step: string, previous: Release, next: Release): Promise<void> {
    const { stageMs } = this.options;
    const stepStarted = Date.now();
    await this.timed(`${step}-start`, () => this.start(next));
    await sleep(stageMs);
    // While both run: the latest keys each release answered, replayed by the other.
    for (const [first, other] of [
      [previous, next],
      [next, previous],
    ] as const) {
      const sample = this.load.keyedAnsweredBy(first.label).slice(-MIXED_REPLAYS);
      const replays = await this.load.replayKeyed(sample, this.running.get(other)!.api);
      this.add(step, checkReplays("while both run", replays));
    }
    const generationFrom = await this.timed(`${step}-stop-previous`, () => this.stop(step, previous));
    await sleep(stageMs);
    await this.load.stop();
    this.report.figures[`${step}-load-ms`] = Date.now() - stepStarted;
    await this.verify(step, next, previous, generationFrom);
  }

  /** The release's API and every worker role, each a process; the API joins the balancer. */
  private async start(release: Release): Promise<void> {
    const [api, workers] = await Promise.all([
      this.deployment.startApi(release),
      this.deployment.startWorkers(release),
    ]);
    this.running.set(release, { api, workers });
    this.balancer.add(api);
  }

  /**
   * Stops the release the way a rollout does: each worker role, then the API (out of the balancer
   * as its SIGTERM is sent), each given a moment under load before the next. Returns when the
   * blocks worker had stopped: generation since then is the other release's.
   */
  private async stop(step: string, release: Release): Promise<number> {
    const { api, workers } = this.running.get(release)!;
    let blocksStoppedAt = 0;
    for (const [index, worker] of workers.entries()) {
      await this.stopProcess(step, worker);
      if (WORKER_ROLES[index] === "blocks") {
        blocksStoppedAt = Date.now();
        await this.servedAcross(step, release, blocksStoppedAt);
      }
      await sleep(this.options.stageMs / 8);
    }
    this.balancer.retire(api);
    await this.stopProcess(step, api.process);
    this.running.delete(release);
    return blocksStoppedAt;
  }

  /**
   * The stopping release's API still serves until it has answered with an outcome of a block
   * sealed since its own blocks worker stopped, so by the other release's: it reads the queue items
   * the other writes. (The other way round needs no wait: a starting release first serves the
   * reserve the running one filled, and an item it could not read would be stranded: checkQueue.)
   */
  private async servedAcross(step: string, reader: Release, since: number): Promise<void> {
    const served = await eventually(async () => {
      const sealed = await this.deployment.sql<{ id: string }[]>`
          select id::text from blocks where game_id = ${this.world.gameId} and created_at > ${new Date(since)}`;
      const ids = new Set(sealed.map((row) => Number(row.id)));
      return this.load
        .results()
        .some(({ result, servedBy }) => servedBy === reader.label && ids.has(result.fairness?.blockId));
    }, this.patienceMs).catch(() => false);
    if (!served) {
      this.violate(
        step,
        `${reader.label} served no outcome of a block sealed by the other release within ${this.patienceMs} ms`,
      );
    }
  }

  private async stopProcess(step: string, service: ServiceProcess): Promise<void> {
    const stopped = service.kill("SIGTERM");
    const inTime = await Promise.race([stopped.then(() => true), sleep(STOP_BOUND_MS).then(() => false)]);
    if (!inTime) {
      this.violate(step, `${service.name} did not stop within ${STOP_BOUND_MS} ms of SIGTERM`);
      await service.kill("SIGKILL");
    } else if (service.exitCode !== 0) {
      this.violate(step, `${service.name} exited with ${service.exitCode} on SIGTERM`);
    }
  }

  /** Everything, once the load has stopped, on `release` alone (`previous` stopped). */
  private async verify(step: string, release: Release, previous: Release, generationFrom: number): Promise<void> {
    const api = this.running.get(release)!.api;
    const sql = this.deployment.sql;
    const keyed = await this.timed(`${step}-keyed-retries`, () => this.load.settleKeyed(this.patienceMs));
    this.report.figures[`${step}-keyed-retries`] = keyed;
    if (keyed.unsettled > 0) this.violate(step, `${keyed.unsettled} keyed spins never answered 200 when retried`);
    // Every key the stopped release answered, replayed by this one (the rest were, or will be, the other way).
    const unreplayed = this.load.keyedAnsweredBy(previous.label, true);
    const replays = await this.timed(`${step}-replays`, () => this.load.replayKeyed(unreplayed, api));
    this.add(step, checkReplays(`of every key ${previous.label} answered`, replays));

    // Generation by this release: blocks sealed since the other's blocks worker stopped, and served.
    const [generated] = await sql<{ blocks: number; served: number }[]>`
      select count(distinct b.id)::int as blocks, count(o.block_id)::int as served
      from blocks b left join spin_outcomes o on o.block_id = b.id
      where b.game_id = ${this.world.gameId} and b.created_at > ${new Date(generationFrom)}`;
    this.report.figures[`${step}-generation-by-${release.label}`] = generated;
    if (!generated || generated.blocks === 0 || generated.served === 0) {
      this.violate(step, `no block sealed and served by ${release.label} after the other blocks worker stopped`);
    }

    this.add(step, await this.timed(`${step}-settlement`, () => this.settle(api.client)));
    // Quiet: generation has loaded what it sealed, and every event is delivered.
    await this.timed(`${step}-quiet`, () =>
      Promise.all([
        eventually(
          async () => (await checkQueue(this.deployment, this.world.gameId)).violations.length === 0,
          this.patienceMs,
        ),
        eventually(
          async () =>
            (await checkWebhooks(sql, this.world.partnerId, this.world.webhookId, this.receiver.received)).violations
              .length === 0,
          this.patienceMs,
        ),
      ]).catch(() => {}),
    );

    this.add(step, checkAnswers(this.load));
    this.add(step, await checkSpins(sql, this.world.partnerId, this.load));
    this.add(step, await checkQueue(this.deployment, this.world.gameId));
    this.add(step, await checkWebhooks(sql, this.world.partnerId, this.world.webhookId, this.receiver.received));
    this.add(step, await checkFailedJobs(this.deployment));
    this.add(step, checkLogs(this.deployment));
    this.report.summary.push(this.summary(step, release));
  }

  /** The step's figures in one line: requests and answers, outcomes, replays, deliveries, generation. */
  private summary(step: string, release: Release): string {
    const f = this.report.figures[step] as Record<string, any>;
    const generation = this.report.figures[`${step}-generation-by-${release.label}`] as Record<string, number>;
    return (
      `${step} (so far): ${f.requests} spin requests (slowest answer ${f.slowestMs} ms), ` +
      `answers ${JSON.stringify(f.answers)}, resent by the balancer ${JSON.stringify(f.resent)}; ` +
      `${f.outcomesCheckedAgainstAnswers} outcomes checked against the answers ` +
      `(${f.spinsStored} spins stored, ${f.playersChecked} balances); replays ${JSON.stringify(f.replays)}; ` +
      `${f.received} webhook deliveries received for ${f.events} events ${JSON.stringify(f.byType)}; ` +
      `generation by ${release.label} after the other's blocks worker stopped: ${generation?.blocks} blocks, ` +
      `${generation?.served} outcomes served; settlement ${JSON.stringify(f.settlement)}`
    );
  }

  /**
   * The operator runs today's settlement on the release now serving: the report is generated
   * (again) and its figures are the day's spins.
   */
  private async settle(api: ApiClient): Promise<Finding> {
    const reportDate = new Date().toISOString().slice(0, 10);
    const askedAt = new Date();
    await api.expect(202, "POST", "/api/admin/v1/jobs/settlements/run", { admin: true, json: { reportDate } });
    const sql = this.deployment.sql;
    const report = await eventually(
      async () => {
        const [row] = await sql<{ spins: string; wagered: string; paid: string }[]>`
          select total_spins::text as spins, total_wagered_micros::text as wagered, total_paid_micros::text as paid
          from settlement_reports
          where partner_id = ${this.world.partnerId} and environment = 'sandbox' and report_date = ${reportDate}
            and generated_at >= ${askedAt}`;
        return row;
      },
      20_000,
      "the settlement report",
    ).catch(() => undefined);
    if (!report) return { violations: [`no settlement report of ${reportDate} generated on request`], figures: {} };
    const [day] = await sql<{ spins: string; wagered: string; paid: string }[]>`
      select count(*)::text as spins, coalesce(sum(wager_micros), 0)::text as wagered,
        coalesce(sum(payout_micros), 0)::text as paid
      from spins where partner_id = ${this.world.partnerId} and environment = 'sandbox'
        and (created_at at time zone 'UTC')::date = ${reportDate}::date`;
    const same = report.spins === day!.spins && report.wagered === day!.wagered && report.paid === day!.paid;
    return {
      violations: same ? [] : [`settlement ${JSON.stringify(report)} is not the day's spins ${JSON.stringify(day)}`],
      figures: { settlement: report },
    };
  }

  private async appliedMigrations(): Promise<number> {
    const [row] = await this.deployment.sql<{ count: number }[]>`
      select count(*)::int as count from drizzle.__drizzle_migrations`;
    return row!.count;
  }

  private add(step: string, finding: Finding): void {
    for (const violation of finding.violations) this.violate(step, violation);
    const figures = (this.report.figures[step] ?? {}) as Record<string, unknown>;
    const { replays, ...rest } = finding.figures;
    figures.replays = { ...(figures.replays as object), ...(replays as object) };
    this.report.figures[step] = { ...figures, ...rest };
  }

  private violate(step: string, violation: string): void {
    this.report.violations.push(`${step}: ${violation}`);
    this.log(`VIOLATION ${step}: ${violation}`);
  }

  private async timed<T>(name: string, action: () => Promise<T>): Promise<T> {
    const started = Date.now();
    const result = await action();
    this.report.figures[`${name}-ms`] = Date.now() - started;
    this.log(`${name}: ${Date.now() - started} ms`);
    return result;
  }

  async close(): Promise<void> {
    await this.load?.stop();
    await this.receiver.close();
    await this.deployment.close();
  }
}

/** A partner with a sandbox key, a webhook to the receiver (registered first), a sheet and a game. */
async function createWorld(api: ApiClient, webhookUrl: string): Promise<WorldOfRollout> {
  const { partnerId, apiKey } = await createPartnerWithKey(api, "upgrade");
  const webhook = await api.expect(201, "POST", "/api/partner/v1/webhooks", {
    apiKey,
    json: { url: webhookUrl, events: PREVIOUS_EVENT_TYPES },
  });
  const sheet = await api.expect(201, "POST", "/api/partner/v1/par-sheets", { apiKey, json: SAMPLE_PAR_SHEET });
  const gameId = await registerGame(api, apiKey, sheet.id);
  return { partnerId, apiKey, gameId, webhookId: webhook.id };
}
