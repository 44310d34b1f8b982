import { LRUCache } from 'lru-cache';
import { describe, expect, it } from 'vitest';
import { expiringAfter, upTo } from '../../src/runtime/lru.ts';

describe('lru-cache options', () => {
  it('upTo bounds the entry count without allocating it up front', () => {
    const cache = new LRUCache<string, number>(upTo(2));
    for (const k of ['a', 'b', 'c']) cache.set(k, 1);
    expect([...cache.keys()].sort()).toEqual(['b', 'c']);
  });

  it('expiringAfter expires entries on time, reading the clock at most once per 1/30 of the life (once a second at most)', async () => {
    expect(expiringAfter(30_000)).toEqual({ ttl: 30_000, ttlResolution: 1000 });
    expect(expiringAfter(5 * 60_000).ttlResolution).toBe(1000);
    expect(expiringAfter(10)).toEqual({ ttl: 10, ttlResolution: 1 });
    const cache = new LRUCache<string, number>({ ...upTo(10), ...expiringAfter(90) });
    cache.set('k', 1);
    expect(cache.get('k')).toBe(1);
    await new Promise((r) => setTimeout(r, 130));
    expect(cache.get('k')).toBeUndefined();
  });
});
