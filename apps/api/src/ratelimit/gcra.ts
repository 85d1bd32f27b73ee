/**
 * GCRA (generic cell rate algorithm) as a Lua function, on Redis's clock so every API process
 * agrees. A bucket of `limit` requests refills evenly over its window (`window` µs, one second when
 * nil), so the whole allowance can be used at once and then one request per window / limit; unlike
 * fixed windows it never lets twice the limit through at a window edge. Returns allowed (1/0),
 * remaining, resetMs and retryAfterMs; `now` is Redis's TIME in µs, read once per script.
 */
export const GCRA_FUNCTION = `
local function gcra(key, limit, now, window)
  local burst = window or 1000000
  local interval = burst / limit
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local newTat = tat + interval
  local allowAt = newTat - burst
  if now < allowAt then
    return 0, 0, math.ceil((tat - now) / 1000), math.ceil((allowAt - now) / 1000)
  end
  redis.call('SET', key, string.format('%d', newTat), 'PX', math.ceil((newTat - now) / 1000) + 1)
  return 1, math.floor((now - allowAt) / interval), math.ceil((newTat - now) / 1000), 0
end
`;

/** One draw from a bucket. */
export interface Draw {
  allowed: boolean;
  remaining: number;
  resetMs: number;
  retryAfterMs: number;
}

/** A draw from four numbers of a script's reply, from `at`. */
export function drawAt(reply: readonly unknown[], at: number): Draw {
  return {
    allowed: reply[at] === 1,
    remaining: (reply[at + 1] as number | undefined) ?? 0,
    resetMs: (reply[at + 2] as number | undefined) ?? 0,
    retryAfterMs: (reply[at + 3] as number | undefined) ?? 0,
  };
}
