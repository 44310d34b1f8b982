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
