import type { Environment } from "@outcomes/core";
import type { SqlPool } from "@outcomes/db";

/** A delivery's attempt as counted in Postgres, with what sending it needs. */
export interface ClaimedAttempt {
  attempt: number;
  maxAttempts: number;
  body: string;
  eventType: string;
  url: string;
  secret: string;
  /** A rotated secret until it expires: attempts are signed with it too. */
  previousSecret: string | null;
  environment: Environment;
}

/**
 * Counts one attempt of each delivery that is open, has attempts left and whose webhook is active
 * and not deleted, and returns them. The secrets are read here, at every attempt, so a retry after
 * a rotation is signed as a new delivery would be.
 */
const CLAIM_ATTEMPTS = `
  update webhook_deliveries d set attempts = d.attempts + 1
  from webhooks w
  where d.id = any($1::text[]) and w.id = d.webhook_id and d.status in ('pending', 'retrying')
    and d.attempts < d.max_attempts and w.is_active and w.deleted_at is null
  returning d.id, d.attempts, d.max_attempts, d.body, d.event_type, w.url, w.secret,
    case when w.previous_secret_expires_at > now() then w.previous_secret end as previous_secret, w.environment`;

/** Closes deliveries as succeeded, each with its answer's status and time, if they are still open. */
const MARK_SUCCEEDED = `
  update webhook_deliveries d set status = 'succeeded', last_response_status = x.status, last_error = null,
    next_attempt_at = null, completed_at = x.at
  from unnest($1::text[], $2::int[], $3::text[]::timestamptz[]) as x(id, status, at)
  where d.id = x.id and d.status in ('pending', 'retrying')`;

interface Waiting<In, Out> {
  input: In;
  resolve: (output: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Calls made at about the same time (within one turn of the event loop, up to `maxSize`) run as one
 * statement: deliveries in flight together cost one round trip and one write per step, not one
 * each. Two calls with the same key never share a statement (the second waits for the next one),
 * so a statement's answer for a key belongs to exactly one caller.
 */
class Grouped<In, Out> {
  private gathering = new Map<string, Waiting<In, Out>>();
  private later: Array<Waiting<In, Out>> = [];
  private scheduled = false;

  constructor(
    private readonly key: (input: In) => string,
    private readonly run: (inputs: In[]) => Promise<Map<string, Out>>,
    private readonly missing: Out,
    private readonly maxSize = 500,
  ) {}

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.add({ input, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private add(waiting: Waiting<In, Out>): void {
    const key = this.key(waiting.input);
    if (this.gathering.has(key) || this.gathering.size >= this.maxSize) this.later.push(waiting);
    else this.gathering.set(key, waiting);
  }

  private flush(): void {
    const batch = this.gathering;
    const later = this.later;
    this.gathering = new Map();
    this.later = [];
    this.scheduled = false;
    for (const waiting of later) this.add(waiting);
    if (this.gathering.size > 0 || this.later.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    void this.run([...batch.values()].map((waiting) => waiting.input)).then(
      (outputs) => {
        for (const [key, waiting] of batch) waiting.resolve(outputs.get(key) ?? this.missing);
      },
      (error: unknown) => {
        for (const waiting of batch.values()) waiting.reject(error);
      },
    );
  }
}

/** The two statements of every delivery attempt, grouped across the attempts in flight (see Grouped). */
export class AttemptStatements {
  private readonly claims: Grouped<string, ClaimedAttempt | undefined>;
  private readonly successes: Grouped<{ id: string; status: number; at: Date }, undefined>;

  constructor(sql: SqlPool) {
    this.claims = new Grouped(
      (id) => id,
      async (ids) => {
        const rows = await sql.unsafe<
          Array<{
            id: string;
            attempts: number;
            max_attempts: number;
            body: string;
            event_type: string;
            url: string;
            secret: string;
            previous_secret: string | null;
            environment: Environment;
          }>
        >(CLAIM_ATTEMPTS, [ids], { prepare: true });
        return new Map(
          rows.map((row) => [
            row.id,
            {
              attempt: row.attempts,
              maxAttempts: row.max_attempts,
              body: row.body,
              eventType: row.event_type,
              url: row.url,
              secret: row.secret,
              previousSecret: row.previous_secret,
              environment: row.environment,
            },
          ]),
        );
      },
      undefined,
    );
    this.successes = new Grouped(
      (success) => success.id,
      async (list) => {
        await sql.unsafe(
          MARK_SUCCEEDED,
          [list.map((each) => each.id), list.map((each) => each.status), list.map((each) => each.at.toISOString())],
          { prepare: true },
        );
        return new Map();
      },
      undefined,
    );
  }

  /**
   * Counts the attempt before anything is sent, only while the delivery is open and its webhook is
   * active and not deleted: the attempt number in the header is the one recorded. Undefined when
   * it could not be claimed.
   */
  claim(deliveryId: string): Promise<ClaimedAttempt | undefined> {
    return this.claims.call(deliveryId);
  }

  /** `succeeded`, with the receiver's status, unless the delivery was closed meanwhile. */
  async succeeded(deliveryId: string, status: number, at: Date): Promise<void> {
    await this.successes.call({ id: deliveryId, status, at });
  }
}
