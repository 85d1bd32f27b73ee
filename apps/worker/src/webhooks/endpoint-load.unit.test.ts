import { createLogger } from "@outcomes/runtime";
import { describe, expect, it } from "vitest";
import { EndpointLoad } from "./endpoint-load.js";

const newLoad = () =>
  new EndpointLoad({ slowSendMs: 1000, slowInFlight: 3, timeoutMs: 5000 }, createLogger("silent", "endpoint-load"));

/** The rooms a claim would get now (released again). */
function roomsNow(load: EndpointLoad) {
  const rooms = load.reserveRooms();
  load.release(rooms);
  return rooms;
}

/** `count` sends of the endpoint, each answered after `tookMs`. */
function answers(load: EndpointLoad, webhookId: string, count: number, tookMs: number) {
  for (let i = 0; i < count; i++) {
    load.claimed(webhookId);
    load.answered(webhookId, tookMs);
  }
}

describe("EndpointLoad", () => {
  it("leaves fast endpoints unlimited however many sends they have in flight", () => {
    const load = newLoad();
    for (let i = 0; i < 100; i++) load.claimed("whk_fast");
    expect(roomsNow(load)).toEqual(new Map());
    for (let i = 0; i < 100; i++) load.answered("whk_fast", 40);
    expect(roomsNow(load)).toEqual(new Map());
  });

  it("caps an endpoint at its first timeout, rooms reserved for the claim running", () => {
    const load = newLoad();
    for (let i = 0; i < 10; i++) load.claimed("whk_hangs");
    load.answered("whk_hangs", 5000);
    // Nine of its sends still out: no room until it has fewer than three.
    expect(load.reserveRooms()).toEqual(new Map([["whk_hangs", 0]]));
    for (let i = 0; i < 8; i++) load.answered("whk_hangs", 5000);
    const rooms = load.reserveRooms();
    expect(rooms).toEqual(new Map([["whk_hangs", 2]]));
    expect(load.reserveRooms()).toEqual(new Map([["whk_hangs", 0]]));
    load.release(rooms);
    load.claimed("whk_hangs");
    expect(load.reserveRooms()).toEqual(new Map([["whk_hangs", 1]]));
    // Turns for its waiting deliveries come as fast as its sends free up: 3 per 5 s.
    expect(load.turnsPerSecond("whk_hangs")).toBeCloseTo(0.6, 1);
  });

  it("caps an endpoint whose answers take slowSendMs and four times the others' on average, and lifts the cap when they are quick again", () => {
    const load = newLoad();
    answers(load, "whk_fast", 10, 50);
    answers(load, "whk_slow", 1, 2000);
    expect(roomsNow(load)).toEqual(new Map([["whk_slow", 3]]));
    expect(load.turnsPerSecond("whk_slow")).toBe(1.5);
    // Still slow at 900 ms (over half of slowSendMs): no flapping.
    answers(load, "whk_slow", 3, 900);
    expect(roomsNow(load)).toEqual(new Map([["whk_slow", 3]]));
    answers(load, "whk_slow", 20, 50);
    expect(roomsNow(load)).toEqual(new Map());
  });

  it("blames no endpoint when every answer is late because this process is overloaded", () => {
    const load = newLoad();
    for (let i = 0; i < 160; i++) load.claimed("whk_busy");
    for (let i = 0; i < 400; i++) {
      load.answered("whk_busy", 2400);
      load.claimed("whk_busy");
      expect(roomsNow(load)).toEqual(new Map());
    }
  });
});
