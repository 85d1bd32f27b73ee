import { type Environment, type EventEnvelope, type EventType, newEventEnvelope } from "@outcomes/core";
import type { Executor } from "../client.js";
import { events } from "../schema/events.js";

/**
 * Writes an event to the outbox. Call it inside the transaction of the event's cause (a spin, a
 * report, a notice) so the event exists exactly when its cause does; the `webhooks` worker fans it
 * out to deliveries. `notifyEvents(producers)` after commit only shortens the wait.
 */
export async function insertEvent<D>(
  executor: Executor,
  input: { partnerId: string; environment: Environment; type: EventType; data: D; now?: Date },
): Promise<EventEnvelope<D>> {
  const envelope = newEventEnvelope(input.type, input.environment, input.data, input.now);
  await executor.insert(events).values({
    id: envelope.id,
    partnerId: input.partnerId,
    environment: input.environment,
    type: input.type,
    payload: envelope,
    createdAt: new Date(envelope.createdAt),
  });
  return envelope;
}
