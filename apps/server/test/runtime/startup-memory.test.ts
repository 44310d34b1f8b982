import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { releaseStartupMemory } from '../../src/runtime/startup-memory.ts';

/** The young generation's committed size in bytes. */
const youngGeneration = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;

describe('releaseStartupMemory', () => {
  it('shrinks a young generation that start-up grew, and leaves no global gc behind', async () => {
    // What start-up does to the young generation: much allocated, much of it kept across scavenges.
    const kept: object[] = [];
    for (let i = 0; i < 2_000_000; i++) {
      kept.push({ i, text: `row ${i}` });
      if (kept.length > 150_000) kept.splice(0, 75_000);
    }
    const grown = youngGeneration();
    kept.length = 0;
    await releaseStartupMemory();
    const after = youngGeneration();
    expect(after).toBeLessThan(grown);
    expect(after).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
