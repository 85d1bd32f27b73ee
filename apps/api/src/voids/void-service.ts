import { ErrorCode, formatScaledDecimal, type Owner, ServiceError } from "@outcomes/core";
import { exceededPlayerBound, type RecalledSpin, type SpinForVoid, type SpinVoidFacts } from "@outcomes/db";

// Voids (CONTRACT §13, docs/spins.md "Voids and recall"): the rules of a void; its SQL is
// packages/db's (spin-voids.ts), its HTTP the route's (routes/partner/spin-recall.ts).

/** The statements of one void, on one transaction. */
export interface VoidStore {
  /** The owner's spin locked for its void, with the database's clock and any earlier void (404 KS-4215 when not the owner's). */
  lockForVoid(owner: Owner, spinId: string): Promise<SpinForVoid>;
  /** The void's row, the player's figures moved back, the round given back, the `spin.voided` event. */
  recordVoid(found: RecalledSpin, reason: string): Promise<SpinVoidFacts>;
}

export interface VoidServiceDeps {
  /** Runs `work` in one transaction, with the store's statements on it. */
  inTransaction<T>(work: (store: VoidStore) => Promise<T>): Promise<T>;
  /** How long after its `createdAt` a spin can be voided (VOID_WINDOW_HOURS). */
  windowHours: number;
  /** Sent after the commit, never inside it: it only shortens the webhooks worker's wait. */
  eventsWritten(): void;
}

export interface VoidAnswer {
  spin: RecalledSpin;
  /** False when the spin had been voided before: the first void is answered and nothing changed. */
  voidedNow: boolean;
}

const HOUR_MS = 3_600_000;

/**
 * A void, in one transaction: a spin voided before answers its first void whenever asked (so a void
 * is safe to retry, and of concurrent voids exactly one takes effect); otherwise, within the window
 * of its `createdAt` on the database's clock (else 409 KS-4217), it is voided. 400 KS-4103 when
 * reversing it would take a figure of the player past 2^53 − 1 micro-USD; nothing is written then.
 */
export class VoidService {
  constructor(private readonly deps: VoidServiceDeps) {}

  async void(owner: Owner, spinId: string, reason: string): Promise<VoidAnswer> {
    let answer: VoidAnswer;
    try {
      answer = await this.deps.inTransaction(async (store) => {
        const { found, now, earlier } = await store.lockForVoid(owner, spinId);
        if (earlier) return { spin: { ...found, voided: earlier }, voidedNow: false };
        this.assertWithinWindow(found, now);
        const voided = await store.recordVoid(found, reason);
        return { spin: { ...found, voided }, voidedNow: true };
      });
    } catch (error) {
      throw boundError(error) ?? error;
    }
    if (answer.voidedNow) this.deps.eventsWritten();
    return answer;
  }

  private assertWithinWindow(found: RecalledSpin, now: Date): void {
    const { windowHours } = this.deps;
    if (now.getTime() < found.spin.createdAt.getTime() + windowHours * HOUR_MS) return;
    throw new ServiceError(ErrorCode.SpinNotVoidable, {
      message: `Spin can no longer be voided: spins can be voided within ${windowHours} hours of their createdAt`,
    });
  }
}

/** The database refused a figure of the player past its bound (CONTRACT §9): KS-4103, nothing written. */
function boundError(error: unknown): ServiceError | null {
  const figure = exceededPlayerBound(error);
  if (figure === null) return null;
  const bound = `${formatScaledDecimal(Number.MAX_SAFE_INTEGER)} USD`;
  return new ServiceError(ErrorCode.WagerOutOfRange, {
    message: `Void refused: reversing the spin would take the player's ${figure} past ${bound}, the most it can show exactly; nothing was written`,
  });
}
