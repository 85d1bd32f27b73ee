/**
 * Map.set that drops the oldest entry past `max`: the bound of every in-process cache of the API.
 * Insertion order is enough (no LRU library): entries in use are reloaded, and so re-inserted,
 * often, so the oldest insertion is the entry least recently in use.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}
