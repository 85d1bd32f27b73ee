import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { fillTestGameQueue, registerTestGame } from "@outcomes/testkit/games";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_BASE, PARTNER_BASE } from "./router.js";

/** The partner flow written against the generated types (kept outside the build: it imports them). */
const FLOW = new URL("../typed-client/partner-flow.ts", import.meta.url);

let api: TestApi;
let documents: { partner: any; operator: any };
beforeAll(async () => {
  api = await startTestApi();
  documents = {
    partner: (await api.request(`${PARTNER_BASE}/openapi.json`)).body,
    operator: (await api.request(`${ADMIN_BASE}/openapi.json`, { admin: true })).body,
  };
});
afterAll(async () => {
  await api.close();
});

/** The compiler's complaints about `file` and what it imports, with the repository's strictness. */
function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], {
    noEmit: true,
    strict: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2023,
    lib: ["lib.es2023.d.ts"],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file
      ? `${diagnostic.file.fileName.split("/").pop()}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
      : "";
    return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
  });
}

describe("a client generated from the partner document with openapi-typescript", () => {
  it("compiles the partner flow against the generated `paths`, and the flow runs against the service", async () => {
    const dir = await mkdtemp(join(tmpdir(), "typed-client-"));
    try {
      await writeFile(join(dir, "partner-api.ts"), astToString(await openapiTS(documents.partner)));
      await copyFile(FLOW, join(dir, "partner-flow.ts"));
      expect(typeErrors(join(dir, "partner-flow.ts"))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    // What compiles also works: the same calls over HTTP (no blocks worker here: the test fills the queue).
    const flow = await import(FLOW.href);
    const { apiKey } = await api.createPartner();
    const call = flow.partnerClient(`${api.baseUrl}${documents.partner.servers[0].url}`, apiKey, fetch);
    const gameId = await flow.registerGame(call, SAMPLE_PAR_SHEET);
    await fillTestGameQueue(api, gameId);
    const audit = await flow.spinAndAudit(call, gameId);
    expect(audit.listed).toEqual([audit.spinId]);
    expect(audit.balanceUsd).toBeTypeOf("number");
    expect(audit.proof.blockId).toBe(audit.blockId);
    expect(audit.blockIds).toContain(audit.blockId);
  });
});

type DocumentName = keyof typeof documents;
type Answers = Record<string, any>;
interface Step {
  document: DocumentName;
  operationId: string;
  path?: (answers: Answers) => Record<string, string | number>;
  references?: Record<string, unknown>;
}

/**
 * Every operation with a request body, in an order where each finds what it needs: its path
 * parameters (from the setup or an earlier step's answer) and `references`, the body fields naming a
 * resource of this test's own (the example's ids name nothing here). Everything else is sent as shown.
 */
function steps(setup: {
  partnerId: string;
  parSheetId: string;
  gameId: number;
  webhookId: string;
  keyId: string;
}): Step[] {
  const { partnerId, parSheetId, gameId, webhookId, keyId } = setup;
  const report = (answers: Answers) => ({ partnerId, reportDate: answers.generateSettlement.reportDate });
  return [
    { document: "operator", operationId: "createPartner" },
    { document: "operator", operationId: "issueApiKey", path: () => ({ partnerId }) },
    { document: "operator", operationId: "rotateApiKey", path: () => ({ partnerId, keyId }) },
    { document: "operator", operationId: "updatePartner", path: () => ({ partnerId }) },
    { document: "partner", operationId: "uploadParSheet" },
    { document: "partner", operationId: "registerGame", references: { parSheetId } },
    { document: "partner", operationId: "updateGame", path: () => ({ gameId }) },
    { document: "partner", operationId: "createSpin", references: { gameId } },
    { document: "partner", operationId: "voidSpin", path: (answers) => ({ spinId: answers.createSpin.spinId }) },
    {
      document: "partner",
      operationId: "createReplayLink",
      path: (answers) => ({ spinId: answers.createSpin.spinId }),
    },
    { document: "partner", operationId: "grantFreeRounds", references: { gameId } },
    { document: "partner", operationId: "registerWebhook" },
    { document: "partner", operationId: "updateWebhook", path: () => ({ webhookId }) },
    { document: "partner", operationId: "recoverWebhookDeliveries", path: () => ({ webhookId }) },
    { document: "partner", operationId: "rotateWebhookSecret", path: () => ({ webhookId }) },
    { document: "operator", operationId: "generateSettlement", path: () => ({ partnerId }) },
    { document: "partner", operationId: "disputeSettlement", path: report },
    { document: "operator", operationId: "reissueSettlement", path: report },
    { document: "operator", operationId: "runSettlementJob" },
    { document: "operator", operationId: "putJurisdiction", path: () => ({ code: "MT-MGA" }) },
    // After the spins: the example's limits bind the example's player.
    { document: "partner", operationId: "putPlayerProtection", path: () => ({ playerId: "protected-player" }) },
    // Last: every partner call after it would be 503 KS-5002.
    { document: "operator", operationId: "setMaintenance" },
  ];
}

function operationsWithBodies(name: DocumentName) {
  // Paths are relative to the document's server URL (the API's base).
  const base = documents[name].servers[0].url;
  return Object.entries(documents[name].paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, any>)
      .filter(([, operation]) => operation.requestBody)
      .map(([method, operation]) => ({ path: `${base}${path}`, method, operation })),
  );
}

describe("the example request bodies of both documents", () => {
  it("are each accepted (2xx) when sent as the document shows them", async () => {
    const game = await registerTestGame(api);
    const { apiKey, partnerId } = game;
    const webhook = await api.request(`${PARTNER_BASE}/webhooks`, {
      method: "POST",
      apiKey,
      json: { url: "http://127.0.0.1:9/outcomes", events: ["spin.large_win"] },
    });
    const key = await api.request(`${ADMIN_BASE}/partners/${partnerId}/api-keys`, {
      method: "POST",
      admin: true,
      json: { environment: "sandbox" },
    });
    const plan = steps({ ...game, webhookId: webhook.body.id, keyId: key.body.id });

    const withBodies = (["partner", "operator"] as const).flatMap((name) =>
      operationsWithBodies(name).map(({ operation }) => `${name} ${operation.operationId}`),
    );
    expect(plan.map((step) => `${step.document} ${step.operationId}`).sort()).toEqual(withBodies.sort());

    const answers: Answers = {};
    for (const step of plan) {
      const found = operationsWithBodies(step.document).find(
        ({ operation }) => operation.operationId === step.operationId,
      );
      const { path, method, operation } = found!;
      const example = operation.requestBody.content["application/json"].example;
      expect(example, `${step.operationId} has no example body`).toBeTypeOf("object");
      const references = step.references ?? {};
      for (const field of Object.keys(references)) expect(example, step.operationId).toHaveProperty(field);
      const params = step.path?.(answers) ?? {};
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
      const response = await api.request(url, {
        method: method.toUpperCase(),
        json: { ...example, ...references },
        ...(step.document === "partner" ? { apiKey } : { admin: true }),
      });
      expect(response.status, `${step.operationId}: ${JSON.stringify(response.body)}`).toBeGreaterThanOrEqual(200);
      expect(response.status, `${step.operationId}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
      answers[step.operationId] = response.body;
    }
  });
});
