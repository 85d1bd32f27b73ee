import { type CreateOptions, type PartnerRequests, pageQuery, segment } from "./requests.js";
import type {
  CreatedWebhook,
  Delivery,
  PageInfo,
  PageRequest,
  RecoverWebhookInput,
  RegisterWebhookInput,
  RotatedWebhookSecret,
  RotateWebhookSecretInput,
  UpdateWebhookInput,
  Webhook,
  WebhookRecovery,
} from "./types.js";

/** `client.webhooks`: signed event notifications, their deliveries and the endpoint's health. */
export function webhookRequests(api: PartnerRequests) {
  return {
    /** The answer holds the signing `secret`, shown only here. */
    register: (input: RegisterWebhookInput, options: CreateOptions = {}) =>
      api.create<CreatedWebhook>("/webhooks", input, options),
    /** Changes `rateLimitPerSecond` (null: no pacing). Available once release 3's rollout finished. */
    update: (webhookId: string, input: UpdateWebhookInput) =>
      api.write<Webhook>("PATCH", `/webhooks/${segment(webhookId)}`, input),
    /**
     * Turns a webhook the service disabled (failing too long, or a 410 Gone) back on; `recover` then
     * delivers what it missed. An enabled one is answered as it is.
     */
    enable: (webhookId: string) => api.write<Webhook>("POST", `/webhooks/${segment(webhookId)}/enable`),
    list: (page?: PageRequest) => api.get<{ webhooks: Webhook[] } & PageInfo>("/webhooks", pageQuery(page)),
    /** Soft delete; repeating it is harmless. */
    delete: (webhookId: string) => api.write<Webhook>("DELETE", `/webhooks/${segment(webhookId)}`),
    deliveries: (webhookId: string, page?: PageRequest) =>
      api.get<{ deliveries: Delivery[] } & PageInfo>(`/webhooks/${segment(webhookId)}/deliveries`, pageQuery(page)),
    /** A new delivery (new id) of the same event, same body. */
    redeliver: (webhookId: string, deliveryId: string) =>
      api.write<Delivery>("POST", `/webhooks/${segment(webhookId)}/deliveries/${segment(deliveryId)}/redeliver`),
    /**
     * After an outage: delivers again each event whose delivery failed since `since` (at most 30
     * days back), once; calling it again sends nothing twice. Answers at once with the count; the
     * service then makes the new deliveries in the background (a large backlog takes a while).
     */
    recover: (webhookId: string, input: RecoverWebhookInput) =>
      api.write<WebhookRecovery>("POST", `/webhooks/${segment(webhookId)}/recover`, {
        since: input.since instanceof Date ? input.since.toISOString() : input.since,
      }),
    /**
     * A new signing secret, shown only here. Until `previousSecretExpiresAt` deliveries carry a
     * signature with each; verify with `[secret, oldSecret]` meanwhile.
     */
    rotateSecret: (webhookId: string, input: RotateWebhookSecretInput = {}) =>
      api.write<RotatedWebhookSecret>("POST", `/webhooks/${segment(webhookId)}/rotate-secret`, input),
  };
}

export type WebhookRequests = ReturnType<typeof webhookRequests>;
