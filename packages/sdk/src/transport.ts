import { type ErrorDetail, PartnerApiError, PartnerNetworkError } from "./errors.js";

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface RetryPolicy {
  /** Retries after the first attempt (default 3). */
  maxRetries: number;
  /** First backoff step for 5xx and network errors (default 250 ms); doubles per retry, full jitter. */
  baseDelayMs: number;
  /** Ceiling of one backoff wait (default 8 s). */
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown instead (default 60 s). */
  maxRetryAfterMs: number;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  fetch: FetchLike;
  sleep: (ms: number) => Promise<void>;
  retry: RetryPolicy;
  timeoutMs: number;
  userAgent: string;
}

export interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined> | undefined;
  body?: unknown;
  headers?: Record<string, string> | undefined;
  /**
   * What may be repeated after a failure, as the error reference's rule says (docs/errors.md): any
   * request after a 429 or a code saying nothing was done (`PartnerApiError.retryable`); besides,
   * - `idempotent` (reads, deletes, voids, cancels, requests with an `Idempotency-Key`): any 5xx and lost answers;
   * - `write` (other writes) and `unsafe` (a spin or grant without a key): nothing else, since it may have happened.
   */
  safety: "idempotent" | "write" | "unsafe";
}

/** Full-jitter exponential backoff (AWS's "full jitter"): uniform in [0, min(cap, base·2^n)). */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number = secureRandom): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** Uniform in [0, 1) from the platform CSPRNG (Web Crypto: Node 20+, browsers, Deno, Bun). */
function secureRandom(): number {
  const [value = 0] = globalThis.crypto.getRandomValues(new Uint32Array(1));
  return value / 2 ** 32;
}

/** `Retry-After` as delta-seconds or an HTTP date, in milliseconds. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class Transport {
  constructor(private readonly options: TransportOptions) {}

  async request<T>(spec: RequestSpec): Promise<T> {
    const { retry } = this.options;
    for (let attempt = 0; ; attempt++) {
      let error: PartnerApiError | PartnerNetworkError;
      let waitMs: number | undefined;
      try {
        const response = await this.send(spec);
        if (response.ok) return (await readJson(response)) as T;
        error = await toApiError(response);
        waitMs = retryAfterMs(response.headers.get("retry-after"));
      } catch (caught) {
        if (!(caught instanceof PartnerNetworkError)) throw caught;
        error = caught;
      }
      if (attempt >= retry.maxRetries || !this.mayRetry(error, spec)) throw error;
      const wait = waitMs ?? backoffDelay(attempt, retry);
      if (wait > retry.maxRetryAfterMs) throw error;
      await this.options.sleep(wait);
    }
  }

  private mayRetry(error: PartnerApiError | PartnerNetworkError, spec: RequestSpec): boolean {
    if (error instanceof PartnerNetworkError) return spec.safety === "idempotent";
    if (error.retryable) return true;
    return error.status >= 500 && spec.safety === "idempotent";
  }

  private async send(spec: RequestSpec): Promise<Response> {
    const url = new URL(spec.path.replace(/^\//, ""), this.options.baseUrl.replace(/\/?$/, "/"));
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      Accept: "application/json",
      "X-API-Key": this.options.apiKey,
      "User-Agent": this.options.userAgent,
      ...spec.headers,
    };
    if (spec.body !== undefined) headers["Content-Type"] = "application/json";
    try {
      return await this.options.fetch(url.toString(), {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw new PartnerNetworkError(`${spec.method} ${url.pathname} got no answer: ${describe(error)}`, {
        cause: error,
      });
    }
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  return text === "" ? undefined : JSON.parse(text);
}

async function toApiError(response: Response): Promise<PartnerApiError> {
  let body: { message?: unknown; errorCode?: unknown; requestId?: unknown; details?: unknown } = {};
  try {
    body = ((await readJson(response)) ?? {}) as typeof body;
  } catch {
    // Not JSON (a proxy's error page): the status still classifies it.
  }
  const retryAfter = retryAfterMs(response.headers.get("retry-after"));
  return new PartnerApiError({
    status: response.status,
    errorCode: typeof body.errorCode === "string" ? body.errorCode : `HTTP-${response.status}`,
    message: typeof body.message === "string" ? body.message : response.statusText || "Request failed",
    requestId:
      typeof body.requestId === "string" ? body.requestId : (response.headers.get("x-request-id") ?? undefined),
    details: Array.isArray(body.details) ? (body.details as ErrorDetail[]) : undefined,
    retryAfterSeconds: retryAfter === undefined ? undefined : Math.ceil(retryAfter / 1000),
  });
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.name === "TimeoutError" ? "timed out" : error.message;
  return String(error);
}
