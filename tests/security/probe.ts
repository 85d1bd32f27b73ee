import type { TestApi } from "@outcomes/testkit/api";
import { expect } from "vitest";
import { snapshotState } from "./snapshot.js";

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * Sends a request exactly as given. A body without a Content-Type goes as a typeless Blob, since
 * fetch would label a string `text/plain` on its own.
 */
export async function send(
  api: TestApi,
  request: { method: string; url: string; headers: Record<string, string>; body?: string | ReadableStream },
  apiKey?: string,
): Promise<Answer> {
  const headers = new Headers(request.headers);
  if (apiKey) headers.set("X-API-Key", apiKey);
  const body =
    typeof request.body === "string" && !headers.has("Content-Type") ? new Blob([request.body]) : request.body;
  const response = await fetch(api.baseUrl + request.url, {
    method: request.method,
    headers,
    body,
    ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the assertions below say so
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** The error shape every refusal has (CONTRACT §9). */
export function expectServiceError(answer: Answer, context: string) {
  expect(answer.status, `${context}: ${answer.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(answer.status, `${context}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  expect(answer.body?.errorCode, context).toMatch(/^KS-4\d{3}$/);
  expect(typeof answer.body?.message, context).toBe("string");
  expect(answer.body?.requestId, context).toBeTruthy();
  expect(answer.body?.requestId, context).toBe(answer.headers.get("x-request-id"));
}

/**
 * The hostile-input property for one request: a 2xx, or a 4xx with a KS- code and a request id
 * that left every table and outcome queue exactly as it was; never a 5xx; no prototype polluted.
 */
export async function expectHarmless(
  api: TestApi,
  request: Parameters<typeof send>[1] & { mutation?: string },
  apiKey: string,
): Promise<Answer> {
  const before = await snapshotState(api);
  const answer = await send(api, request, apiKey);
  const context = `${request.method} ${request.url.slice(0, 200)} [${request.mutation ?? "fixed"}] → ${answer.status}`;
  expect(({} as Record<string, unknown>).polluted, `${context}: Object.prototype polluted`).toBeUndefined();
  if (answer.status >= 200 && answer.status < 300) return answer;
  expectServiceError(answer, context);
  expect(await snapshotState(api), `${context}: a refused request changed state`).toEqual(before);
  return answer;
}
