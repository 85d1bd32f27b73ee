import { readFileSync } from "node:fs";
import { partnerDocument } from "@outcomes/api/openapi-documents";
import { describe, expect, it } from "vitest";
import { SDK_WIRE_TYPES_FILE, sdkWireTypes } from "./sdk-wire-types.js";

describe("the SDK's generated wire types (packages/sdk/src/openapi.ts)", () => {
  it("are what `npm run sdk:types` writes from the partner document now", async () => {
    const committed = readFileSync(SDK_WIRE_TYPES_FILE, "utf8");
    // A route or schema changed without regenerating: run `npm run sdk:types` and commit the file.
    expect(committed === (await sdkWireTypes()), "stale: run `npm run sdk:types`").toBe(true);
  });

  it("hold every operation and schema of the partner document", async () => {
    const document = partnerDocument();
    const operationIds = Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item ?? {}).flatMap((operation) => (operation as { operationId?: string }).operationId ?? []),
    );
    expect(operationIds).toContain("createSpin");
    const generated = await sdkWireTypes();
    for (const id of operationIds) expect(generated, id).toContain(`    ${id}: {\n`);
    for (const name of Object.keys(document.components?.schemas ?? {}))
      expect(generated, name).toContain(`        ${name}: `);
  });
});
