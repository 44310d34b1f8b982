import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { requestHash } from '../../src/kernel/trpc.ts';
import { callEntityId } from '../../src/kernel/write-batch.ts';

describe('requestHash and callEntityId', () => {
  it('requestHash is SHA-256 (hex) of the canonical JSON of the arguments without idempotency_key', () => {
    const args = { b: [1, 'x €'], a: { d: null, c: true }, idempotency_key: 'k-1' };
    const canonical = '{"a":{"c":true,"d":null},"b":[1,"x €"]}';
    expect(requestHash(args)).toBe(createHash('sha256').update(canonical).digest('hex'));
    expect(requestHash({ ...args, idempotency_key: 'other' })).toBe(requestHash(args));
    expect(args.idempotency_key).toBe('k-1');
  });

  it('callEntityId is a version-8 UUID from SHA-256 of agent, tool, key and request hash', () => {
    const h = createHash('sha256').update('agent\u0000add_expense\u0000key-€\u0000hash').digest();
    h[6] = (h[6]! & 0x0f) | 0x80;
    h[8] = (h[8]! & 0x3f) | 0x80;
    const x = h.subarray(0, 16).toString('hex');
    const id = callEntityId('agent', 'add_expense', 'key-€', 'hash');
    expect(id).toBe(`${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
