import { newId } from "@outcomes/core";
import { insertEvent, webhookDeliveries } from "@outcomes/db";
import { eq } from "drizzle-orm";
import type { TestApi } from "./api.js";

export type TestDeliveryStatus = "pending" | "retrying" | "succeeded" | "failed";

/**
 * The shared fixture of delivery tests that run no webhooks worker: a partner with a webhook
 * registered over HTTP, and one `block.low_reserve` event per status given with its delivery as the
 * worker's fan-out writes it and the attempts leave it, oldest first, a minute apart (the last one a
 * minute ago). A finished delivery has made all 5 attempts.
 */
export async function webhookWithDeliveries(api: TestApi, statuses: TestDeliveryStatus[]) {
  const { partnerId, apiKey } = await api.createPartner();
  const registered = await api.request("/api/partner/v1/webhooks", {
    method: "POST",
    apiKey,
    json: { url: "https://hooks.partner.test/", events: ["block.low_reserve"] },
  });
  const webhookId = registered.body.id as string;
  const deliveryIds: string[] = [];
  for (const [i, status] of statuses.entries()) {
    const event = await insertEvent(api.database.db, {
      partnerId,
      environment: "sandbox",
      type: "block.low_reserve",
      data: { gameId: i + 1, readyBlocks: 1, minReadyBlocks: 2, remainingOutcomes: 10 },
    });
    const id = newId("dlv");
    const done = status === "failed" || status === "succeeded";
    const at = new Date(Date.now() - (statuses.length - i) * 60_000);
    await api.database.db.insert(webhookDeliveries).values({
      id,
      webhookId,
      eventId: event.id,
      eventCreatedAt: new Date(event.createdAt),
      eventType: event.type,
      body: JSON.stringify(event),
      status,
      attempts: status === "pending" ? 0 : done ? 5 : 1,
      lastResponseStatus: status === "pending" ? null : status === "succeeded" ? 200 : 500,
      completedAt: done ? at : null,
      createdAt: at,
    });
    deliveryIds.push(id);
  }
  return { partnerId, apiKey, webhookId, deliveryIds };
}

/** A delivery row as stored. */
export async function deliveryRow(api: TestApi, id: string) {
  const [found] = await api.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return found;
}
