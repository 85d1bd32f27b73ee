/**
 * The release this code is, as numbered in RELEASES.md. Raised when main opens the next release:
 * from then on, features the running previous release cannot read wait for `release finish`
 * (docs/upgrades.md, "Features the previous release cannot read").
 */
export const CURRENT_RELEASE = 3;

/** A release gate: a feature the previous release would refuse or misread, off until its rollout finished. */
export interface ReleaseGate {
  /** The release the feature arrived in: the gate opens once that release's rollout has finished. */
  addedIn: number;
  /** The release that deletes the gate (the next one: the previous release then runs nowhere). */
  deleteIn: number;
  /** What stays off meanwhile, and why, for RELEASES.md and the reader of a call site. */
  why: string;
}

/**
 * Every release gate, by name (trigger.dev's `FeatureFlagCatalog` is the model). Code asks
 * `rollout.on("name")`, never compares release numbers; `release-gates.test.ts` fails when a gate
 * outlives its `deleteIn`, so none rots.
 */
export const RELEASE_GATES = {
  "provisional-settlements": {
    addedIn: 3,
    deleteIn: 4,
    why:
      "acknowledging or disputing a provisional settlement report (its UTC day not ended) is 409 KS-4305; " +
      "release 2 accepts both, so until then release 3 does too (the run after the day ends makes such a report final)",
  },
  "partner-spin-ceiling": {
    addedIn: 3,
    deleteIn: 4,
    why: "PATCH /api/admin/v1/partners/{partnerId} (spinCeilingUsd): release 2 has no such route",
  },
  "webhook-endpoint-health": {
    addedIn: 3,
    deleteIn: 4,
    why:
      "Release 2 refuses `webhook.disabled` subscriptions (KS-4107) and `rateLimitPerSecond` (KS-4101), lists " +
      "no such event type, has no enable or update route and would not pace a webhook: until then no endpoint " +
      "is disabled, no `webhook.disabled` event is written, and both fields and both routes answer as release 2",
  },
  "keyed-creates": {
    addedIn: 3,
    deleteIn: 4,
    why:
      "Idempotency-Key on POST /games, /par-sheets, /webhooks and /spins/{spinId}/replay-link: release 2 ignores " +
      "the header (a retry it answers registers a second sheet or webhook, or KS-4108 for a game), so until then " +
      "release 3 ignores it too",
  },
  "replay-pages": {
    addedIn: 3,
    deleteIn: 4,
    why:
      "Replay links and pages (POST /spins/{spinId}/replay-link, GET /replay/…) and the `?replayLinks=true` and " +
      "`?include=proof` views: release 2 has none of them (404 for the routes, the parameters ignored), so the routes " +
      "answer 404 KS-4215 and the parameters are ignored on every process until the rollout has finished",
  },
  jurisdictions: {
    addedIn: 3,
    deleteIn: 4,
    why:
      "Jurisdiction profiles and player protection (GET /jurisdictions, PUT /api/admin/v1/jurisdictions/{code}, " +
      "PUT and GET /players/{playerId}/protection, a partner's defaultJurisdiction) and the spin checks they drive: " +
      "release 2 has none of them and would spin a protected player unchecked, so the routes answer 404 KS-4215 " +
      "and no spin is checked until the rollout has finished",
  },
  "queue-pause": {
    addedIn: 3,
    deleteIn: 4,
    why:
      "Pausing, resuming, emptying or obliterating a queue from the dashboard: release 3's BullMQ 6 keeps a paused " +
      "queue's jobs in its wait list, release 2's BullMQ 5 moves them to a paused list and back with a RENAME that " +
      "would overwrite the jobs the other release added meanwhile, so until then these dashboard actions answer " +
      "404 KS-4215 (and release 2's dashboard must not be used for them)",
  },
} as const satisfies Record<string, ReleaseGate>;

export type GateName = keyof typeof RELEASE_GATES;

/** The gates of `catalog` that release `current` must have deleted (it is their `deleteIn` or later). */
export function overdueGates(catalog: Record<string, ReleaseGate>, current: number): string[] {
  return Object.entries(catalog)
    .filter(([, gate]) => current >= gate.deleteIn)
    .map(([name]) => name);
}
