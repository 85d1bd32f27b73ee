import { lookup } from "node:dns";

export interface ResolvedHostAddress {
  address: string;
  family: number;
}

/**
 * The OS resolver (`getaddrinfo`, so /etc/hosts too), every IPv4 and IPv6 address in its own
 * order. Webhook URLs are vetted against what it returns (packages/core `vetAddresses`).
 */
export function systemResolver(host: string): Promise<ResolvedHostAddress[]> {
  return new Promise((resolve, reject) => {
    lookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/** The resolver's answer, or null when it fails or takes longer than `timeoutMs`. */
export async function resolveWithin(
  resolver: (host: string) => Promise<ResolvedHostAddress[]>,
  host: string,
  timeoutMs: number,
): Promise<ResolvedHostAddress[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  try {
    return await Promise.race([resolver(host).catch(() => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
