import { request } from "node:http";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
let apiKey: string;
beforeAll(async () => {
  api = await startTestApi();
  apiKey = (await api.createPartner()).apiKey;
});
afterAll(async () => {
  await api.close();
});

/** POST /spins with the body written in `chunks` (chunked transfer encoding: no Content-Length). */
function postChunked(chunks: Array<string | Buffer>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${api.baseUrl}/api/partner/v1/spins`,
      { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": apiKey } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (part: string) => {
          text += part;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    // The server may answer and close before the whole oversize body was sent.
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe("JSON bodies read from the Node stream", () => {
  it("refuses a chunked body over 1 MiB (no Content-Length) with KS-4101", async () => {
    const answer = await postChunked([`{"padding":"`, "a".repeat(700_000), "a".repeat(400_000), `"}`]);
    expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(answer.body.message).toMatch(/too large/i);
  });

  it("parses chunked and BOM-prefixed bodies like Request.text(), and refuses malformed JSON", async () => {
    const body = JSON.stringify({ gameId: 2_000_000_000, playerId: "p", wagerUsd: 1 });
    // Parsed (the game is unknown), whether sent in pieces or after a UTF-8 byte order mark.
    const pieces = await postChunked([body.slice(0, 7), body.slice(7)]);
    expect([pieces.status, pieces.body.errorCode]).toEqual([403, "KS-4006"]);
    const bom = await postChunked([Buffer.from([0xef, 0xbb, 0xbf]), body]);
    expect([bom.status, bom.body.errorCode]).toEqual([403, "KS-4006"]);
    const malformed = await postChunked([body.slice(0, -1)]);
    expect([malformed.status, malformed.body.errorCode]).toEqual([400, "KS-4101"]);
  });

  it("refuses a body that is not valid UTF-8 with KS-4101", async () => {
    const head = Buffer.from('{"gameId":1,"playerId":"p');
    const invalid = await postChunked([head, Buffer.from([0xc3, 0x28]), Buffer.from('","wagerUsd":1}')]);
    expect([invalid.status, invalid.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(invalid.body.message).toMatch(/UTF-8/);
  });
});
