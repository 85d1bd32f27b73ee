import type { z } from "@hono/zod-openapi";
import type {
  DeliveryStatus,
  Environment,
  EventEnvelope,
  EventType,
  FreeRoundStatus,
  ParSheetDocument,
  ParSheetStatus,
  SettlementStatus,
} from "@outcomes/core";
import type * as sdk from "@outcomes/sdk";
import { describe, expectTypeOf, it } from "vitest";
import type {
  BlockSchema,
  DeliverySchema,
  FreeRoundGrantSchema,
  FreeRoundPlayerSchema,
  GameSchema,
  ListedSpinSchema,
  ParSheetSchema,
  ParSheetWithDocumentSchema,
  PlayerSchema,
  RegisteredWebhookSchema,
  ReplayLinkSchema,
  ReplaySchema,
  RevealedEntriesPageSchema,
  SettlementGameFiguresSchema,
  SettlementReportSchema,
  SpinProofSchema,
  SpinResultSchema,
  VerifiableSpinSchema,
  WebhookSchema,
} from "./index.js";

// The SDK is published without internal dependencies: it names its types from the wire types
// generated from the partner OpenAPI document (`npm run sdk:types`), refining some by hand. Each one
// must still be exactly the shape its record's schema (the one the API answers with) infers, so a
// refinement cannot drift either. `tsc -b` (npm run typecheck) checks these; at run time the
// assertions do nothing.

/**
 * Both sides as plain object types, so that an interface that extends another, or an intersection,
 * equals the object literal of the same fields (`toEqualTypeOf` alone tells those apart, and its
 * `.branded` form misses differences three levels deep). Optional and readonly marks are kept.
 */
type Plain<T> = T extends (infer U)[] ? Plain<U>[] : T extends object ? { [K in keyof T]: Plain<T[K]> } : T;
type Inferred<S extends z.ZodType> = Plain<z.infer<S>>;

/** The SDK's animation hints admit hints a later service version adds; the schema lists today's. */
type WithoutIndexSignature<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
type SdkSpinResult = Omit<sdk.SpinResult, "presentation"> & {
  presentation: Omit<sdk.SpinResult["presentation"], "animationHints"> & {
    animationHints: WithoutIndexSignature<sdk.SpinResult["presentation"]["animationHints"]>;
  };
};

/** The SDK hands documents around as read-only; the service's type of them is mutable. */
type Writable<T> = T extends ReadonlyArray<infer U> ? Writable<U>[] : { -readonly [K in keyof T]: Writable<T[K]> };

describe("the SDK's types are the records' shapes", () => {
  it("games, PAR sheets and players", () => {
    expectTypeOf<Plain<sdk.Game>>().toEqualTypeOf<Inferred<typeof GameSchema>>();
    expectTypeOf<Plain<sdk.ParSheet>>().toEqualTypeOf<Inferred<typeof ParSheetSchema>>();
    expectTypeOf<sdk.ParSheetStatus>().toEqualTypeOf<ParSheetStatus>();
    // The schema says only "an object" of the document: the SDK types it as uploaded, checked
    // against the upload schema.
    expectTypeOf<Plain<Omit<sdk.ParSheetWithDocument, "document">>>().toEqualTypeOf<
      Plain<Omit<z.infer<typeof ParSheetWithDocumentSchema>, "document">>
    >();
    expectTypeOf<sdk.ParSheetWithDocument["document"]>().toExtend<
      z.infer<typeof ParSheetWithDocumentSchema>["document"]
    >();
    expectTypeOf<Plain<Writable<sdk.ParSheetDocument>>>().toEqualTypeOf<Plain<ParSheetDocument>>();
    expectTypeOf<Plain<sdk.Player>>().toEqualTypeOf<Inferred<typeof PlayerSchema>>();
  });

  it("spins", () => {
    expectTypeOf<Plain<SdkSpinResult>>().toEqualTypeOf<Inferred<typeof SpinResultSchema>>();
    expectTypeOf<z.infer<typeof SpinResultSchema>>().toExtend<sdk.SpinResult>();
  });

  it("spins with their proofs, replay links and replays", () => {
    type WithSdkHints<T extends sdk.SpinResult> = Omit<T, "presentation"> & Pick<SdkSpinResult, "presentation">;
    expectTypeOf<Plain<WithSdkHints<sdk.VerifiableSpin>>>().toEqualTypeOf<Inferred<typeof VerifiableSpinSchema>>();
    expectTypeOf<Plain<WithSdkHints<sdk.ListedSpin>>>().toEqualTypeOf<Inferred<typeof ListedSpinSchema>>();
    expectTypeOf<Plain<sdk.ReplayLink>>().toEqualTypeOf<Inferred<typeof ReplayLinkSchema>>();
    type SdkReplay = Omit<sdk.Replay, "presentation"> & Pick<SdkSpinResult, "presentation">;
    expectTypeOf<Plain<SdkReplay>>().toEqualTypeOf<Inferred<typeof ReplaySchema>>();
  });

  it("blocks, revealed entries and spin proofs", () => {
    expectTypeOf<Plain<sdk.Block>>().toEqualTypeOf<Inferred<typeof BlockSchema>>();
    expectTypeOf<Plain<sdk.RevealedEntriesPage>>().toEqualTypeOf<Inferred<typeof RevealedEntriesPageSchema>>();
    expectTypeOf<Plain<sdk.SpinProof>>().toEqualTypeOf<Inferred<typeof SpinProofSchema>>();
  });

  it("webhooks, deliveries and events", () => {
    expectTypeOf<Plain<sdk.Webhook>>().toEqualTypeOf<Inferred<typeof WebhookSchema>>();
    expectTypeOf<Plain<sdk.CreatedWebhook>>().toEqualTypeOf<Inferred<typeof RegisteredWebhookSchema>>();
    expectTypeOf<Plain<sdk.Delivery>>().toEqualTypeOf<Inferred<typeof DeliverySchema>>();
    expectTypeOf<sdk.DeliveryStatus>().toEqualTypeOf<DeliveryStatus>();
    expectTypeOf<sdk.WebhookEventType>().toEqualTypeOf<EventType>();
    expectTypeOf<Plain<sdk.WebhookEvent>>().toEqualTypeOf<Plain<EventEnvelope>>();
    expectTypeOf<Plain<sdk.WebhookEvent<{ gameId: number }>>>().toEqualTypeOf<
      Plain<EventEnvelope<{ gameId: number }>>
    >();
    expectTypeOf<sdk.Environment>().toEqualTypeOf<Environment>();
  });

  it("free rounds", () => {
    expectTypeOf<Plain<sdk.FreeRoundGrant>>().toEqualTypeOf<Inferred<typeof FreeRoundGrantSchema>>();
    expectTypeOf<Plain<sdk.FreeRoundPlayer>>().toEqualTypeOf<Inferred<typeof FreeRoundPlayerSchema>>();
    expectTypeOf<sdk.FreeRoundStatus>().toEqualTypeOf<FreeRoundStatus>();
  });

  it("settlement reports", () => {
    expectTypeOf<Plain<sdk.SettlementReport>>().toEqualTypeOf<Inferred<typeof SettlementReportSchema>>();
    expectTypeOf<Plain<sdk.SettlementFigures & { gameId: number }>>().toEqualTypeOf<
      Inferred<typeof SettlementGameFiguresSchema>
    >();
    expectTypeOf<sdk.SettlementStatus>().toEqualTypeOf<SettlementStatus>();
  });
});
