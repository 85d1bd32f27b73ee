import {
  type ClaimResult,
  claimDeliveryAttempts,
  type DeliverySuccess,
  markDeliveriesPaced,
  markDeliveriesSucceeded,
  type SqlPool,
} from "@outcomes/db";
import { Batcher } from "@outcomes/runtime";
import type { EndpointLoad } from "./endpoint-load.js";

/** A delivery to claim, with the attempt whose send slot was reserved if its webhook is paced. */
export interface Claim {
  id: string;
  cleared?: number | undefined;
}

/** At most this many deliveries per statement. */
const MAX_PER_STATEMENT = 500;

/**
 * One statement for the calls made in one turn of the event loop (`Batcher`): deliveries in flight
 * together cost one round trip and one write per step, not one each. A delivery id never appears
 * twice in one statement (the second call waits for the next), so each answer belongs to exactly
 * one caller; a delivery the statement did not find is answered `undefined`.
 */
function statementOf<In extends { id: string }, Out>(
  run: (inputs: In[]) => Promise<Map<string, Out> | undefined>,
): Batcher<In, Out | undefined> {
  return new Batcher<In, Out | undefined>({
    maxSize: MAX_PER_STATEMENT,
    keyOf: (input) => input.id,
    run: async (inputs) => {
      const found = await run(inputs);
      return inputs.map((input) => found?.get(input.id));
    },
  });
}

/** The statements of every delivery attempt, each shared by the attempts in flight (see `statementOf`). */
export class AttemptStatements {
  private readonly claims: Batcher<Claim, ClaimResult | undefined>;
  private readonly firstClaims: Batcher<Claim, ClaimResult | undefined>;
  private readonly successes: Batcher<DeliverySuccess, undefined>;
  private readonly turns: Batcher<{ id: string; at: Date }, undefined>;

  constructor(sql: SqlPool, load: EndpointLoad) {
    // A slow endpoint's deliveries are claimed up to its room in this process (EndpointLoad), and
    // those claimed count as its sends from here until their answers.
    const claimWithin = async (claims: Claim[], firstOnly: boolean) => {
      const rooms = load.reserveRooms();
      try {
        const found = await claimDeliveryAttempts(sql, claims, firstOnly, rooms);
        for (const result of found.values()) if ("attempt" in result) load.claimed(result.webhookId);
        return found;
      } finally {
        load.release(rooms);
      }
    };
    this.claims = statementOf((claims) => claimWithin(claims, false));
    this.firstClaims = statementOf((claims) => claimWithin(claims, true));
    this.successes = statementOf(async (list) => {
      await markDeliveriesSucceeded(sql, list);
      return undefined;
    });
    this.turns = statementOf(async (list) => {
      await markDeliveriesPaced(sql, list);
      return undefined;
    });
  }

  /**
   * Counts the attempt before anything is sent, only while the delivery is open and its webhook is
   * active and not deleted: the attempt number in the header is the one recorded. A paced
   * webhook's delivery is counted only for the attempt `cleared` names; otherwise it comes back
   * paced. A slow endpoint's beyond its room come back held. Undefined when it could not be claimed.
   */
  claim(claim: Claim): Promise<ClaimResult | undefined> {
    return this.claims.submit(claim);
  }

  /** The same for a batch's delivery, only while it has had no attempt (see `claimDeliveryAttempts`). */
  claimFirst(claim: Claim): Promise<ClaimResult | undefined> {
    return this.firstClaims.submit(claim);
  }

  /** A paced delivery's turn: its `nextAttemptAt`. */
  async paced(deliveryId: string, at: Date): Promise<void> {
    await this.turns.submit({ id: deliveryId, at });
  }

  /** `succeeded`, with the receiver's status, also when its webhook was deleted during the send. */
  async succeeded(success: DeliverySuccess): Promise<void> {
    await this.successes.submit(success);
  }
}
