/**
 * `npm run sdk:types`: writes packages/sdk/src/openapi.ts, the SDK's wire types, from the partner
 * OpenAPI document. `--check` writes nothing and exits 1 when the committed file differs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SDK_WIRE_TYPES_FILE, sdkWireTypes } from "./sdk-wire-types.js";

const file = fileURLToPath(SDK_WIRE_TYPES_FILE);
const generated = await sdkWireTypes();
if (process.argv.includes("--check")) {
  if (readFileSync(file, "utf8") !== generated) {
    console.error(`${file} differs from the partner OpenAPI document: run \`npm run sdk:types\``);
    process.exit(1);
  }
} else {
  writeFileSync(file, generated);
  console.log(`wrote ${file}`);
}
