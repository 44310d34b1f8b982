import { describe, expect, it } from 'vitest';
import { EndpointSlots } from '../../src/runtime/webhook-attempt.ts';

describe('EndpointSlots (this instance’s attempts in flight per endpoint)', () => {
  it('gives maxInFlight slots per endpoint at once; the next waits and gets the first slot given back', async () => {
    const slots = new EndpointSlots(2, 1000);
    const a = await slots.enter('w1');
    const b = await slots.enter('w1');
    expect(a).toBeTypeOf('function');
    expect(b).toBeTypeOf('function');
    // Another endpoint has its own slots.
    const other = await slots.enter('w2');
    expect(other).toBeTypeOf('function');
    let third: (() => void) | null | undefined;
    const waiting = slots.enter('w1').then((r) => (third = r));
    await new Promise((r) => setTimeout(r, 20));
    expect(third).toBeUndefined();
    const t0 = performance.now();
    a!();
    await waiting;
    expect(third).toBeTypeOf('function');
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it('a job that waits longer than waitMs gets null (it goes back to the queue), and the slot it missed is not lost', async () => {
    const slots = new EndpointSlots(1, 50);
    const held = await slots.enter('w');
    expect(await slots.enter('w')).toBeNull();
    held!();
    // The timed-out waiter took nothing: the one slot is free again.
    const again = await slots.enter('w');
    expect(again).toBeTypeOf('function');
  });

  it('cancel answers null to every job waiting (shutdown)', async () => {
    const slots = new EndpointSlots(1, 10_000);
    await slots.enter('w');
    const waiters = [slots.enter('w'), slots.enter('w')];
    slots.cancel();
    expect(await Promise.all(waiters)).toEqual([null, null]);
  });
});
