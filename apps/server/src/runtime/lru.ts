/**
 * lru-cache sizing. With `max: n` lru-cache allocates its index arrays for n entries up front (about
 * 30 bytes per slot: an idle server held ~7 MB of empty slots for its six caches); bounded by
 * `maxSize` with every entry counting 1, the same cache grows as entries arrive and holds the same
 * maximum.
 * @param entries the most entries the cache keeps (least recently used evicted first)
 * @returns options to spread into `new LRUCache({...})`
 */
export function upTo(entries: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: entries, sizeCalculation: () => 1 };
}

/**
 * lru-cache expiry after `ms` milliseconds, with the clock read at most once per 1/30 of it (at most once a second).
 * lru-cache caches the time it reads and clears it with a timer after `ttlResolution` ms (default 1): at that default a
 * busy server armed about one timer per request for each such cache; an entry now expires up to ~3% of its life late.
 * @returns options to spread into `new LRUCache({...})`
 */
export function expiringAfter(ms: number): { ttl: number; ttlResolution: number } {
  return { ttl: ms, ttlResolution: Math.max(1, Math.min(1000, Math.floor(ms / 30))) };
}
