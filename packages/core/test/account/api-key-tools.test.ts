/**
 * The key tools (create_api_key, list_api_keys, revoke_api_key) through the registry, as the adapters call them:
 * - a read-only or read+write key, label and expiry in the invite format; the secret in the answer only: not in
 *   the database, not in the idempotency record, and a retry with the same key says so (never replayed);
 * - who may manage keys: a current API key; an OAuth token and a key in its rotation grace are FORBIDDEN
 *   naming why (also for list_api_keys), a read-only key cannot create or revoke (FORBIDDEN, svc:write);
 * - revoke: only one's own other keys (another agent's key is NOT_FOUND, the calling key INVALID_STATE);
 * - bad scopes and expiries are VALIDATION_ERROR naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestApiKey } from '../../src/index.ts';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/** An agent calling with another of its keys (the row must exist for the database checks). */
async function withKey(a: TestAgent, scopes: string[]): Promise<TestAgent> {
  const created = await h.call(a, 'create_api_key', { scopes });
  return { ...a, apiKey: created.api_key, auth: { ...a.auth, scopes, keyId: created.key.key_id } };
}

describe('create_api_key', () => {
  it('makes a read-only key with label and expiry; the secret is shown once and stored nowhere', async () => {
    const ann = await h.agent('ann');
    const before = Date.now();
    const r = await h.call(ann, 'create_api_key', {
      scopes: ['svc:read'],
      label: 'reporting helper',
      expires_in: '90d',
      idempotency_key: 'key-create-0001',
    });
    expect(r.api_key).toMatch(/^kitty_/);
    expect(r.key).toMatchObject({ access: 'read', scopes: ['svc:read'], label: 'reporting helper', status: 'active', rotated_at: null });
    expect(Date.parse(r.key.expires_at) - before).toBeGreaterThanOrEqual(90 * 86_400_000 - 1000);
    expect(r.key.prefix).toBe(r.api_key.slice(0, r.key.prefix.length));
    const row = await h.services.prisma.apiKey.findUniqueOrThrow({ where: { id: r.key.key_id } });
    expect(Buffer.from(row.digest).equals(Buffer.from(digestApiKey(r.api_key)))).toBe(true);
    const rec = await h.services.prisma.idempotencyRecord.findMany({ where: { agentId: ann.agentId, tool: 'create_api_key' } });
    expect(JSON.stringify(rec.map((x) => x.response))).not.toContain(r.api_key);
    // The same call again: refused, nothing minted, the secret not shown again.
    const again = await h.fail(ann, 'create_api_key', {
      scopes: ['svc:read'],
      label: 'reporting helper',
      expires_in: '90d',
      idempotency_key: 'key-create-0001',
    });
    expect(again.kittyCode).toBe('IDEMPOTENCY_REPLAY_UNAVAILABLE');
    expect(JSON.stringify(again.toBody())).not.toContain(r.api_key);
    expect(await h.services.prisma.apiKey.count({ where: { agentId: ann.agentId } })).toBe(2);
    const rw = await h.call(ann, 'create_api_key', { scopes: ['svc:read', 'svc:write'] });
    expect(rw.key).toMatchObject({ access: 'read_write', expires_at: null, label: null });
  });

  it('refuses bad scopes and expiries, naming the field', async () => {
    const ann = await h.agent('ann');
    for (const [args, path] of [
      [{ scopes: ['svc:write'] }, 'scopes'],
      [{ scopes: [] }, 'scopes'],
      [{ scopes: ['svc:read', 'svc:read'] }, 'scopes'],
      [{ scopes: ['admin'] }, 'scopes.0'],
      [{ scopes: ['svc:read'], expires_in: '7w' }, 'expires_in'],
      [{ scopes: ['svc:read'], expires_in: '3651d' }, 'expires_in'],
      [{ scopes: ['svc:read'], label: '' }, 'label'],
    ] as const) {
      const e = await h.fail(ann, 'create_api_key', args as Record<string, unknown>);
      expect(e.kittyCode, JSON.stringify(args)).toBe('VALIDATION_ERROR');
      expect(
        (e.details?.issues as Array<{ path: string }>).map((i) => i.path),
        JSON.stringify(args),
      ).toContain(path);
    }
    expect(await h.services.prisma.apiKey.count({ where: { agentId: ann.agentId } })).toBe(1);
  });
});

describe('who may manage keys', () => {
  it('not a read-only key (create, revoke), not an OAuth token, not a key in its rotation grace', async () => {
    const ann = await h.agent('ann');
    const ro = await withKey(ann, ['svc:read']);
    const other = await withKey(ann, ['svc:read', 'svc:write']);
    for (const [tool, args] of [
      ['create_api_key', { scopes: ['svc:read'] }],
      ['revoke_api_key', { key_id: other.auth.keyId }],
      ['rotate_api_key', {}],
    ] as const) {
      const e = await h.fail(ro, tool, args);
      expect([tool, e.kittyCode, e.details?.required_scope]).toEqual([tool, 'FORBIDDEN', 'svc:write']);
    }
    // A read-only key may list (it is a read), without any secret.
    const listed = await h.call(ro, 'list_api_keys');
    expect(listed.keys.filter((k: { current: boolean }) => k.current).map((k: { key_id: string }) => k.key_id)).toEqual([ro.auth.keyId]);
    expect(JSON.stringify(listed)).not.toMatch(/kitty_[0-9A-Za-z]{20}/);

    const oauth: TestAgent = { ...ann, auth: { ...ann.auth, credential: 'oauth', keyId: undefined } };
    for (const [tool, args] of [
      ['create_api_key', { scopes: ['svc:read'] }],
      ['list_api_keys', {}],
      ['revoke_api_key', { key_id: other.auth.keyId }],
    ] as const) {
      const e = await h.fail(oauth, tool, args);
      expect([tool, e.kittyCode, e.details?.credential]).toEqual([tool, 'FORBIDDEN', 'oauth']);
      expect(e.message).toMatch(/OAuth/);
    }

    // ann rotates: her first key is now in its grace period.
    await h.call(other, 'rotate_api_key', {});
    const stale = ann; // the cache may not know yet (retired false): the database says so
    for (const [tool, args] of [
      ['create_api_key', { scopes: ['svc:read'] }],
      ['revoke_api_key', { key_id: ro.auth.keyId }],
    ] as const) {
      const e = await h.fail(stale, tool, args);
      expect([tool, e.kittyCode, e.details?.key_state]).toEqual([tool, 'FORBIDDEN', 'in_grace']);
    }
    const e = await h.fail({ ...ann, auth: { ...ann.auth, retired: true } }, 'list_api_keys', {});
    expect([e.kittyCode, e.details?.key_state]).toEqual(['FORBIDDEN', 'in_grace']);
  });
});

describe('revoke_api_key', () => {
  it("revokes one's other key at once; not the calling key, not another agent's", async () => {
    const ann = await h.agent('ann');
    const bob = await h.agent('bob');
    const helper = await withKey(ann, ['svc:read']);
    const self = await h.fail(ann, 'revoke_api_key', { key_id: ann.auth.keyId });
    expect(self.kittyCode).toBe('INVALID_STATE');
    const foreign = await h.fail(ann, 'revoke_api_key', { key_id: bob.auth.keyId });
    expect(foreign.kittyCode).toBe('NOT_FOUND');
    expect(await h.services.prisma.apiKey.count({ where: { id: bob.auth.keyId } })).toBe(1);
    const r = await h.call(ann, 'revoke_api_key', { key_id: helper.auth.keyId, idempotency_key: 'revoke-helper-01' });
    expect(r).toMatchObject({ key_id: helper.auth.keyId, revoked: true });
    expect(await h.services.prisma.apiKey.count({ where: { id: helper.auth.keyId } })).toBe(0);
    // A retry with the same key replays the answer; a new key for the same (gone) key is NOT_FOUND.
    expect(await h.call(ann, 'revoke_api_key', { key_id: helper.auth.keyId, idempotency_key: 'revoke-helper-01' })).toMatchObject({
      revoked: true,
      replayed: true,
    });
    expect((await h.fail(ann, 'revoke_api_key', { key_id: helper.auth.keyId })).kittyCode).toBe('NOT_FOUND');
    const listed = await h.call(ann, 'list_api_keys');
    expect(listed.keys.map((k: { key_id: string }) => k.key_id)).toEqual([ann.auth.keyId]);
  });
});
