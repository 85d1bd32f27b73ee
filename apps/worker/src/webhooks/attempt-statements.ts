import {
  type ClaimResult,
  claimDeliveryAttempts,
  type DeliverySuccess,
  markDeliveriesPaced,
  markDeliveriesSucceeded,
  type SqlPool,
} from "@outcomes/db";

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

/** A delivery to claim, with the attempt whose send slot was reserved if its webhook is paced. */
export interface Claim {
  id: string;
  cleared?: number | undefined;
}

/** The two statements of every delivery attempt, grouped across the attempts in flight (see Grouped). */
export class AttemptStatements {
  private readonly claims: Grouped<Claim, ClaimResult | undefined>;
  private readonly firstClaims: Grouped<Claim, ClaimResult | undefined>;
  private readonly successes: Grouped<DeliverySuccess, undefined>;
  private readonly turns: Grouped<{ id: string; at: Date }, undefined>;

  constructor(sql: SqlPool) {
    this.claims = new Grouped(
      (claim) => claim.id,
      (claims) => claimDeliveryAttempts(sql, claims),
      undefined,
    );
    this.firstClaims = new Grouped(
      (claim) => claim.id,
      (claims) => claimDeliveryAttempts(sql, claims, true),
      undefined,
    );
    this.successes = new Grouped(
      (success) => success.id,
      async (list) => {
        await markDeliveriesSucceeded(sql, list);
        return new Map();
      },
      undefined,
    );
    this.turns = new Grouped(
      (turn) => turn.id,
      async (list) => {
        await markDeliveriesPaced(sql, list);
        return new Map();
      },
      undefined,
    );
  }

  /**
   * Counts the attempt before anything is sent, only while the delivery is open and its webhook is
   * active and not deleted: the attempt number in the header is the one recorded. A paced
   * webhook's delivery is counted only for the attempt `cleared` names; otherwise it comes back
   * paced. Undefined when it could not be claimed.
   */
  claim(claim: Claim): Promise<ClaimResult | undefined> {
    return this.claims.call(claim);
  }

  /** The same for a batch's delivery, only while it has had no attempt (see `claimDeliveryAttempts`). */
  claimFirst(claim: Claim): Promise<ClaimResult | undefined> {
    return this.firstClaims.call(claim);
  }

  /** A paced delivery's turn: its `nextAttemptAt`. */
  async paced(deliveryId: string, at: Date): Promise<void> {
    await this.turns.call({ id: deliveryId, at });
  }

  /** `succeeded`, with the receiver's status, also when its webhook was deleted during the send. */
  async succeeded(success: DeliverySuccess): Promise<void> {
    await this.successes.call(success);
  }
}
