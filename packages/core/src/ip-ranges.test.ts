import { describe, expect, it } from "vitest";
import { classifyAddress, parseIPv6 } from "./ip-ranges.js";

describe("classifyAddress", () => {
  it.each([
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["0.0.0.0", "this-network"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
  ])("refuses IPv4 %s as %s", (address, label) => {
    expect(classifyAddress(address)).toBe(label);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "93.184.216.34", "11.0.0.1"])(
    "allows the public IPv4 address %s",
    (address) => {
      expect(classifyAddress(address)).toBeNull();
    },
  );

  it.each([
    ["::1", "loopback"],
    ["::", "unspecified or IPv4-compatible"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["fd00::1", "unique local (private)"],
    ["fc12:3456::1", "unique local (private)"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "documentation"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["64:ff9b::a00:1", "private"],
    ["2002:0a00:0001::1", "private"],
    ["100::1", "discard-only"],
    ["4000::1", "reserved"],
  ])("refuses IPv6 %s as %s", (address, label) => {
    expect(classifyAddress(address)).toBe(label);
  });

  it.each(["2606:4700:4700::1111", "2a00:1450:4001:81b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808"])(
    "allows the public IPv6 address %s",
    (address) => {
      expect(classifyAddress(address)).toBeNull();
    },
  );

  it("refuses text that is not an address", () => {
    expect(classifyAddress("example.com")).toBe("not an IP address");
  });
});

describe("parseIPv6", () => {
  it("expands compressed forms and embedded IPv4", () => {
    expect(parseIPv6("::1")).toEqual([...new Array(15).fill(0), 1]);
    expect(parseIPv6("::ffff:1.2.3.4")?.slice(10)).toEqual([0xff, 0xff, 1, 2, 3, 4]);
    expect(parseIPv6("2001:db8:0:0:0:0:0:1")).toEqual(parseIPv6("2001:db8::1"));
    expect(parseIPv6("1::")?.slice(0, 2)).toEqual([0, 1]);
    expect(parseIPv6("not-an-address")).toBeNull();
  });
});
