import { isIP } from "node:net";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import ipaddr from "ipaddr.js";

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** `1.2.3.4` or `::ffff:1.2.3.4` as IPv4, anything else as IPv6 (zone dropped). */
function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.split("%")[0] ?? "";
  return isIP(bare) === 0 ? undefined : ipaddr.process(bare);
}

function rangeOf(entry: string): Range {
  if (entry.includes("/")) return ipaddr.parseCIDR(entry);
  const address = ipaddr.process(entry);
  return [address, address.kind() === "ipv4" ? 32 : 128];
}

/**
 * The client a request is counted against (auth/failed-auth-throttle.ts): the socket's peer, or,
 * when the peer is one of `trustedProxies` (TRUSTED_PROXIES), the nearest `X-Forwarded-For` hop
 * that is not a trusted proxy: hops further left were written by the client and prove nothing.
 * An IPv6 client counts as its /64, the block one host gets, so it cannot step to a fresh address.
 */
export function clientAddresses(trustedProxies: readonly string[] = []): (c: Context) => string {
  const trusted = trustedProxies.map(rangeOf);
  const isTrusted = (address: ipaddr.IPv4 | ipaddr.IPv6) =>
    trusted.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
  return (c) => {
    let address = parse(getConnInfo(c).remote.address ?? "");
    if (!address) return "unknown";
    if (trusted.length > 0) {
      const hops = (c.req.header("X-Forwarded-For") ?? "").split(",").map((hop) => hop.trim());
      for (let i = hops.length - 1; i >= 0 && isTrusted(address); i--) {
        const hop = parse(hops[i] ?? "");
        if (!hop) break;
        address = hop;
      }
    }
    if (address.kind() === "ipv4") return address.toString();
    return `${(address as ipaddr.IPv6).parts
      .slice(0, 4)
      .map((part) => part.toString(16))
      .join(":")}::/64`;
  };
}
