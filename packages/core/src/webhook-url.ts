import type { Environment } from "./api-key.js";
import { classifyAddress, LOOPBACK } from "./ip-ranges.js";

/**
 * The one reason for every URL refused for where it points (an IP literal, a localhost name, a
 * name resolving to a private, loopback or reserved address, or to none): saying which range a
 * name resolved to would map a deployment's internal names for anyone registering webhooks.
 */
export const NOT_PUBLIC = "must resolve to a public address";

const MAX_WEBHOOK_URL_LENGTH = 2048;

/** The hosts a sandbox webhook may use over plain http (and which may reach loopback). */
const SANDBOX_LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export type WebhookUrlCheck =
  | {
      ok: true;
      url: URL;
      /** Host without IPv6 brackets, as given to DNS or the socket. */
      host: string;
      /** The host is an IP literal: no resolution, it was judged here. */
      literal: boolean;
      /** A sandbox localhost form: loopback is its purpose, so loopback addresses are allowed. */
      allowLoopback: boolean;
    }
  | { ok: false; reason: string };

const refuse = (reason: string): WebhookUrlCheck => ({ ok: false, reason });

function hasWhitespaceOrControl(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code <= 0x20 || (code >= 0x7f && code <= 0x9f) || /\s/u.test(char)) return true;
  }
  return false;
}

/**
 * The URL rules that need no DNS (CONTRACT §7): https; http only for the sandbox localhost forms;
 * no credentials, control characters or other schemes; an IP literal must be public.
 */
export function checkWebhookUrl(raw: string, environment: Environment): WebhookUrlCheck {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return refuse(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // The URL parser silently drops tabs and newlines; a header-injection attempt must not pass as a URL.
  if (hasWhitespaceOrControl(raw)) return refuse("must not contain whitespace or control characters");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("must be an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return refuse("must use https");
  if (url.username || url.password) return refuse("must not contain credentials");
  if (!url.hostname) return refuse("must name a host");
  const localForm = environment === "sandbox" && SANDBOX_LOCAL_HOSTS.has(url.hostname);
  if (url.protocol === "http:" && !localForm) {
    return refuse(
      environment === "sandbox"
        ? "must use https (plain http only for localhost, 127.0.0.1 or [::1] in sandbox)"
        : "must use https",
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const literal = classifyAddress(host) !== "not an IP address";
  if (!localForm && (literal ? classifyAddress(host) !== null : /(^|\.)localhost\.?$/i.test(host))) {
    return refuse(NOT_PUBLIC);
  }
  return { ok: true, url, host, literal, allowLoopback: localForm };
}

/**
 * Whether a sandbox loopback URL may use its port (SANDBOX_LOOPBACK_PORTS): any when the deployment
 * lists none (CONTRACT §7, for local development), else only a listed one (an empty list: none).
 */
export function loopbackPortAllowed(url: URL, ports: readonly number[] | undefined): boolean {
  if (ports === undefined) return true;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return ports.includes(port);
}

export interface ResolvedAddress {
  address: string;
  family: number;
}
/** Name → addresses (`dns.promises.lookup(host, {all: true})` in production; injected in tests). */
export type HostResolver = (host: string) => Promise<ResolvedAddress[]>;

/**
 * Judges every address a host resolves to: all must be public (or loopback for a sandbox
 * localhost form). Returns the refusal (NOT_PUBLIC, whatever the address), or null when every
 * address may be used.
 */
export function vetAddresses(addresses: ResolvedAddress[], allowLoopback: boolean): string | null {
  if (addresses.length === 0) return NOT_PUBLIC;
  for (const { address } of addresses) {
    const range = classifyAddress(address);
    if (range && !(allowLoopback && range === LOOPBACK)) return NOT_PUBLIC;
  }
  return null;
}
