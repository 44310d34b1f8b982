/**
 * The account router (src/account): session and CSRF rules, two people who never see or change each
 * other's data, agents/keys/apps/passkeys changes with their security-log entries.
 * Callers are built with tRPC's createCaller over a real PostgreSQL database.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountRouter,
  createAccountCallerFactory,
  createSession,
  digestApiKey,
  toToolError,
  type ToolError,
  type AccountContext,
} from '../../src/index.ts';
import { createHarness, type Harness } from '../harness.ts';

let h: Harness;
const changed: string[] = [];
const createCaller = createAccountCallerFactory(accountRouter);

interface Person {
  humanId: string;
  sessionId: string;
  /** A caller as this person from the service's own page (Origin = base URL). */
  api: ReturnType<typeof createCaller>;
  /** A caller as this person with other headers (CSRF tests). */
  as(headers: AccountContext['headers']): ReturnType<typeof createCaller>;
}

function ctxFor(
  session: AccountContext['session'],
  headers: AccountContext['headers'] = { origin: 'http://kitty.test', host: 'kitty.test' },
): AccountContext {
  return { services: h.services, session, origin: { ip: '203.0.113.7', userAgent: 'vitest' }, headers, requestId: `req_${randomUUID()}` };
}

async function person(name: string, passkeys = 1): Promise<Person> {
  const human = await h.services.prisma.human.create({ data: { displayName: name } });
  for (let i = 0; i < passkeys; i++) {
    await h.services.prisma.passkey.create({
      data: {
        id: randomBytes(16).toString('base64url'),
        humanId: human.id,
        publicKey: new Uint8Array([1, 2, 3]),
        deviceType: 'singleDevice',
        name: `${name} key ${i + 1}`,
      },
    });
  }
  const s = await createSession(h.services.prisma, human.id, { ip: '203.0.113.7' });
  const session = { humanId: human.id, sessionId: s.sessionId };
  return {
    humanId: human.id,
    sessionId: s.sessionId,
    api: createCaller(ctxFor(session)),
    as: (headers) => createCaller(ctxFor(session, headers)),
  };
}

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    // What the router's error formatter sends to the page: the same normalisation as the tools.
    const te = toToolError(e);
    if (te.kittyCode === 'INTERNAL') throw e;
    return te;
  }
  throw new Error('expected a failure');
}

const handle = (p: string) => `${p}-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  h = await createHarness();
  h.services.onCredentialsChanged = (agentId) => changed.push(agentId);
});
afterAll(async () => {
  await h.close();
});

describe('session and CSRF', () => {
  it('without a session: session() says signed out, everything else is UNAUTHENTICATED', async () => {
    const anon = createCaller(ctxFor(null));
    expect(await anon.session()).toEqual({ signed_in: false, human: null });
    const e = await failure(anon.agents.list());
    expect(e.kittyCode).toBe('UNAUTHENTICATED');
    expect(e.suggestedAction).toContain('/signin');
  });

  it('a mutation without Origin, or from another site, is FORBIDDEN and changes nothing; reads need no Origin', async () => {
    const alice = await person('Alice');
    for (const headers of [
      { host: 'kitty.test' },
      { origin: 'https://evil.example', host: 'kitty.test' },
      { origin: 'null', host: 'kitty.test' },
    ]) {
      const e = await failure(alice.as(headers).agents.create({ handle: handle('csrf'), display_name: 'x' }));
      expect(e.kittyCode).toBe('FORBIDDEN');
      expect(e.details).toEqual({ reason: 'csrf_origin' });
    }
    expect((await alice.api.agents.list()).agents).toEqual([]);
    expect((await alice.as({}).agents.list()).agents).toEqual([]);
    // The request's own Host counts as this service too (a deployment reached under another name).
    const ok = await alice
      .as({ origin: 'http://localhost:5173', host: 'localhost:5173' })
      .agents.create({ handle: handle('viahost'), display_name: 'Via host' });
    expect(ok.api_key).toMatch(/^kitty_/);
  });
});

describe('agents and keys', () => {
  it('creates an agent with a read+write key shown once, logged in the security log', async () => {
    const alice = await person('Alice');
    const r = await alice.api.agents.create({ handle: handle('alice-bot'), display_name: 'Alice bot' });
    const row = await h.services.prisma.apiKey.findUnique({ where: { digest: digestApiKey(r.api_key) }, include: { agent: true } });
    expect(row?.scopes).toEqual(['svc:read', 'svc:write']);
    expect(row?.agent.humanId).toBe(alice.humanId);
    const list = await alice.api.agents.list();
    expect(list.agents.map((a) => a.handle)).toEqual([r.agent.handle]);
    const keys = await alice.api.keys.list({ agent_id: r.agent.agent_id });
    expect(keys.keys).toHaveLength(1);
    expect(JSON.stringify(keys)).not.toContain(r.api_key);
    const log = await alice.api.securityLog({});
    expect(log.events[0]).toMatchObject({ type: 'agent_created', agent_handle: r.agent.handle, ip: '203.0.113.7' });
    const dup = await failure(alice.api.agents.create({ handle: r.agent.handle, display_name: 'again' }));
    expect(dup.kittyCode).toBe('HANDLE_TAKEN');
    const bad = await failure(alice.api.agents.create({ handle: 'X', display_name: '' }));
    expect(bad.kittyCode).toBe('VALIDATION_ERROR');
    expect((bad.details?.issues as Array<{ path: string }>).map((i) => i.path).sort()).toEqual(['display_name', 'handle']);
  });

  it('extra keys: read-only or read+write with expiry; rotate keeps the old key 10 minutes; revoke deletes at once', async () => {
    const alice = await person('Alice');
    const { agent } = await alice.api.agents.create({ handle: handle('keys'), display_name: 'Keys' });
    const ro = await alice.api.keys.create({ agent_id: agent.agent_id, access: 'read', label: 'dashboard', expires_in_days: 30 });
    expect(ro.key).toMatchObject({ access: 'read', scopes: ['svc:read'], label: 'dashboard', status: 'active' });
    const expires = new Date(ro.key.expires_at!).getTime() - h.services.now().getTime();
    expect(Math.abs(expires - 30 * 86_400_000)).toBeLessThan(60_000);
    const rw = await alice.api.keys.create({ agent_id: agent.agent_id, access: 'read_write' });
    expect(rw.key.scopes).toEqual(['svc:read', 'svc:write']);
    expect(rw.key.expires_at).toBeNull();
    const tooLong = await failure(alice.api.keys.create({ agent_id: agent.agent_id, access: 'read', expires_in_days: 100_000 }));
    expect(tooLong.kittyCode).toBe('VALIDATION_ERROR');

    changed.length = 0;
    const before = h.services.now().getTime();
    const rot = await alice.api.keys.rotate({ key_id: ro.key.key_id });
    expect(rot.key).toMatchObject({ access: 'read', label: 'dashboard', expires_at: ro.key.expires_at, status: 'active' });
    const old = await h.services.prisma.apiKey.findUniqueOrThrow({ where: { id: ro.key.key_id } });
    expect(old.rotatedAt).not.toBeNull();
    expect(old.expiresAt!.getTime() - before).toBeGreaterThanOrEqual(600_000 - 1000);
    expect(old.expiresAt!.getTime() - before).toBeLessThanOrEqual(600_000 + 5000);
    expect(changed).toEqual([agent.agent_id]);
    // The other key is untouched by rotating this one.
    expect((await h.services.prisma.apiKey.findUniqueOrThrow({ where: { id: rw.key.key_id } })).rotatedAt).toBeNull();
    const listed = await alice.api.keys.list({ agent_id: agent.agent_id });
    expect(listed.keys.find((k) => k.key_id === ro.key.key_id)?.status).toBe('rotated');
    const again = await failure(alice.api.keys.rotate({ key_id: ro.key.key_id }));
    expect(again.kittyCode).toBe('INVALID_STATE');

    changed.length = 0;
    await alice.api.keys.revoke({ key_id: rw.key.key_id });
    expect(await h.services.prisma.apiKey.findUnique({ where: { id: rw.key.key_id } })).toBeNull();
    expect(changed).toEqual([agent.agent_id]);
    const events = (await alice.api.securityLog({})).events;
    expect(events.slice(0, 4).map((e) => e.type)).toEqual(['key_revoked', 'key_rotated', 'key_created', 'key_created']);
    // Keys are named in the log by their label when they have one, always by prefix.
    expect(events[1]!.details).toMatchObject({ key_label: 'dashboard', key_prefix: ro.key.prefix });
    expect(events[3]!.details).toMatchObject({ key_label: 'dashboard', key_prefix: ro.key.prefix });
    expect(events[0]!.details).not.toHaveProperty('key_label');
  });

  it('claims a headless agent with its current key; refuses malformed, rotated, foreign-owned and own agents', async () => {
    const alice = await person('Alice');
    const bob = await person('Bob');
    const headless = await h.agent('headless');
    const bad = await failure(alice.api.agents.claim({ api_key: 'kitty_nope' }));
    expect(bad.kittyCode).toBe('VALIDATION_ERROR');
    expect((bad.details?.issues as Array<{ path: string }>)[0]!.path).toBe('api_key');

    const claimed = await alice.api.agents.claim({ api_key: headless.apiKey });
    expect(claimed.agent.agent_id).toBe(headless.agentId);
    expect((await alice.api.agents.list()).agents.map((a) => a.agent_id)).toContain(headless.agentId);
    expect((await alice.api.securityLog({})).events[0]).toMatchObject({ type: 'agent_claimed', agent_handle: headless.handle });
    // The key is never stored in the log.
    expect(JSON.stringify(await alice.api.securityLog({}))).not.toContain(headless.apiKey);

    expect((await failure(alice.api.agents.claim({ api_key: headless.apiKey }))).kittyCode).toBe('ALREADY_EXISTS');
    const foreign = await failure(bob.api.agents.claim({ api_key: headless.apiKey }));
    expect(foreign.kittyCode).toBe('FORBIDDEN');
    expect(foreign.details).toEqual({ reason: 'owned_by_another_person' });
    expect((await h.services.prisma.agent.findUniqueOrThrow({ where: { id: headless.agentId } })).humanId).toBe(alice.humanId);

    // A rotated-out key does not prove control (it is only in its grace period).
    const other = await h.agent('headless2');
    await h.call(other, 'rotate_api_key', {});
    expect((await failure(bob.api.agents.claim({ api_key: other.apiKey }))).kittyCode).toBe('NOT_FOUND');
  });
});

describe('two people', () => {
  it("never see or change each other's agents, keys, apps, passkeys or log", async () => {
    const alice = await person('Alice', 2);
    const bob = await person('Bob', 2);
    const a = await alice.api.agents.create({ handle: handle('a'), display_name: 'A' });
    const aKey = (await alice.api.keys.list({ agent_id: a.agent.agent_id })).keys[0]!;
    const grant = `grant_${randomUUID()}`;
    await h.services.prisma.oAuthConnection.create({
      data: {
        id: grant,
        humanId: alice.humanId,
        agentId: a.agent.agent_id,
        clientId: 'https://client.example/meta.json',
        clientName: 'Client',
        clientHost: 'client.example',
        scopes: ['svc:read'],
      },
    });
    const alicePasskey = (await alice.api.passkeys.list()).passkeys[0]!;

    expect((await bob.api.agents.list()).agents).toEqual([]);
    expect((await bob.api.apps.list()).apps).toEqual([]);
    expect((await bob.api.overview()).agents).toEqual([]);
    expect((await bob.api.passkeys.list()).passkeys.map((p) => p.name)).toEqual(['Bob key 1', 'Bob key 2']);
    expect((await bob.api.securityLog({})).events).toEqual([]);

    const attempts: Array<() => Promise<unknown>> = [
      () => bob.api.keys.list({ agent_id: a.agent.agent_id }),
      () => bob.api.keys.create({ agent_id: a.agent.agent_id, access: 'read_write' }),
      () => bob.api.keys.rotate({ key_id: aKey.key_id }),
      () => bob.api.keys.revoke({ key_id: aKey.key_id }),
      () => bob.api.apps.disconnect({ connection_id: grant }),
      () => bob.api.passkeys.remove({ passkey_id: alicePasskey.passkey_id }),
      () => bob.api.passkeys.rename({ passkey_id: alicePasskey.passkey_id, name: 'mine now' }),
    ];
    for (const attempt of attempts) expect((await failure(attempt())).kittyCode).toBe('NOT_FOUND');

    // Nothing of Alice's changed.
    expect((await alice.api.keys.list({ agent_id: a.agent.agent_id })).keys).toEqual([aKey]);
    expect((await alice.api.apps.list()).apps.map((c) => c.connection_id)).toEqual([grant]);
    expect((await alice.api.passkeys.list()).passkeys).toHaveLength(2);
    expect((await bob.api.securityLog({})).events).toEqual([]);
  });
});

describe('security log paging', () => {
  it('pages newest first with next_cursor (the shape tRPC infinite queries send, direction included)', async () => {
    const alice = await person('Alice');
    for (let i = 0; i < 3; i++) await alice.api.agents.create({ handle: handle(`page${i}`), display_name: `P${i}` });
    const first = await alice.api.securityLog({ limit: 2, direction: 'forward' });
    expect(first.events).toHaveLength(2);
    expect(first.next_cursor).toBeTruthy();
    const second = await alice.api.securityLog({ limit: 2, cursor: first.next_cursor, direction: 'forward' });
    expect(second.events).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    expect(new Set([...first.events, ...second.events].map((e) => e.event_id)).size).toBe(3);
    expect((await failure(alice.api.securityLog({ cursor: 'garbage' }))).kittyCode).toBe('VALIDATION_ERROR');
  });
});

describe('connected apps, passkeys, overview', () => {
  it('disconnect marks the grant revoked and deletes its tokens in one go, leaving other grants alone', async () => {
    const alice = await person('Alice');
    const { agent } = await alice.api.agents.create({ handle: handle('oauth'), display_name: 'OAuth' });
    const [g1, g2] = [`g1_${randomUUID()}`, `g2_${randomUUID()}`];
    for (const id of [g1, g2]) {
      await h.services.prisma.oAuthConnection.create({
        data: { id, humanId: alice.humanId, agentId: agent.agent_id, clientId: `client-${id}`, scopes: ['svc:read', 'svc:write'] },
      });
      await h.services.prisma.oAuthPayload.createMany({
        data: [
          { type: 'AccessToken', id: `at-${id}`, payload: {}, grantId: id },
          { type: 'RefreshToken', id: `rt-${id}`, payload: {}, grantId: id },
        ],
      });
    }
    changed.length = 0;
    const revokedGrants: string[] = [];
    h.services.onGrantRevoked = (grantId) => revokedGrants.push(grantId);
    await alice.api.apps.disconnect({ connection_id: g1 });
    expect(revokedGrants).toEqual([g1]);
    expect((await h.services.prisma.oAuthConnection.findUniqueOrThrow({ where: { id: g1 } })).revokedAt).not.toBeNull();
    expect(await h.services.prisma.oAuthPayload.count({ where: { grantId: g1 } })).toBe(0);
    expect(await h.services.prisma.oAuthPayload.count({ where: { grantId: g2 } })).toBe(2);
    expect((await alice.api.apps.list()).apps.map((c) => c.connection_id)).toEqual([g2]);
    expect(changed).toEqual([agent.agent_id]);
    expect((await alice.api.securityLog({})).events[0]).toMatchObject({ type: 'app_disconnected' });
    expect((await failure(alice.api.apps.disconnect({ connection_id: g1 }))).kittyCode).toBe('NOT_FOUND');
  });

  it('renames a passkey (trimmed, 1-60 characters, no control characters), logged with the old name', async () => {
    const alice = await person('Alice');
    const [p] = (await alice.api.passkeys.list()).passkeys;
    expect(await alice.api.passkeys.rename({ passkey_id: p!.passkey_id, name: '  Work laptop ' })).toEqual({
      passkey_id: p!.passkey_id,
      name: 'Work laptop',
    });
    expect((await alice.api.passkeys.list()).passkeys[0]!.name).toBe('Work laptop');
    for (const name of ['', '   ', 'x'.repeat(61), 'tab\there', 'nul\u0000']) {
      const bad = await failure(alice.api.passkeys.rename({ passkey_id: p!.passkey_id, name }));
      expect(bad.kittyCode, JSON.stringify(name)).toBe('VALIDATION_ERROR');
    }
    const [event] = (await alice.api.securityLog({})).events;
    expect(event).toMatchObject({ type: 'passkey_renamed', details: { passkey_name: 'Work laptop', previous_name: p!.name } });
  });

  it('removes a passkey but never the last way to sign in', async () => {
    const alice = await person('Alice', 2);
    const [p1, p2] = (await alice.api.passkeys.list()).passkeys;
    await alice.api.passkeys.remove({ passkey_id: p1!.passkey_id });
    const last = await failure(alice.api.passkeys.remove({ passkey_id: p2!.passkey_id }));
    expect(last.kittyCode).toBe('INVALID_STATE');
    expect(last.suggestedAction).toMatch(/Add another passkey/);
    expect((await alice.api.passkeys.list()).passkeys).toHaveLength(1);
    // With a linked OpenID identity the last passkey can go.
    await h.services.prisma.externalIdentity.create({ data: { humanId: alice.humanId, issuer: 'https://idp.example', subject: 'alice' } });
    await alice.api.passkeys.remove({ passkey_id: p2!.passkey_id });
    expect((await alice.api.securityLog({})).events.map((e) => e.type)).toEqual(['passkey_removed', 'passkey_removed']);
  });

  it("overview: each agent's groups with balances, pending payments and inbox counts", async () => {
    const alice = await person('Alice');
    const mine = await h.agent('mine');
    const friend = await h.agent('friend');
    await alice.api.agents.claim({ api_key: mine.apiKey });
    const g = await h.call(mine, 'create_group', { name: 'Trip', currency: 'EUR' });
    const inv = await h.call(mine, 'create_invite', { group_id: g.group.group_id });
    await h.call(friend, 'join_group', { code: inv.invite.code });
    await h.call(mine, 'add_expense', { group_id: g.group.group_id, description: 'Dinner', amount_minor: 6000 });
    await h.call(friend, 'record_payment', { group_id: g.group.group_id, to_handle: mine.handle, amount_minor: 1000 });
    const o = await alice.api.overview();
    expect(o.agents).toHaveLength(1);
    expect(o.agents[0]!.groups[0]).toMatchObject({ name: 'Trip', currency: 'EUR', my_balance_minor: 3000, pending_payments: 1 });
    expect(o.agents[0]!.inbox.requires_action).toBeGreaterThanOrEqual(1);
  });

  it("groupStats: one group's spending by month and category, only for the person's own agent and its groups", async () => {
    const alice = await person('Alice');
    const bob = await person('Bob');
    const mine = await h.agent('mine');
    const other = await h.agent('other');
    await alice.api.agents.claim({ api_key: mine.apiKey });
    const g = (await h.call(mine, 'create_group', { name: 'Flat', currency: 'JPY' })).group.group_id;
    await h.call(mine, 'add_expense', { group_id: g, description: 'Rent', amount_minor: 80_000, date: '2026-05-01', category: 'rent' });
    await h.call(mine, 'add_expense', { group_id: g, description: 'Rice', amount_minor: 1_200, date: '2026-06-03' });
    const s = await alice.api.groupStats({ agent_id: mine.agentId, group_id: g });
    expect(s).toMatchObject({ currency: 'JPY', minor_unit_exponent: 0, total_minor: 81_200 });
    expect(s.by_month).toEqual([
      { key: '2026-05', total_minor: 80_000 },
      { key: '2026-06', total_minor: 1_200 },
    ]);
    expect(s.by_category).toEqual([
      { key: 'home/rent', total_minor: 80_000 },
      { key: 'general', total_minor: 1_200 },
    ]);
    // Another person asking about Alice's agent: NOT_FOUND, as for an agent that does not exist.
    expect((await failure(bob.api.groupStats({ agent_id: mine.agentId, group_id: g }))).kittyCode).toBe('NOT_FOUND');
    // Alice's agent asking about a group it is not in: FORBIDDEN.
    const foreign = (await h.call(other, 'create_group', { name: 'Not hers', currency: 'EUR' })).group.group_id;
    expect((await failure(alice.api.groupStats({ agent_id: mine.agentId, group_id: foreign }))).kittyCode).toBe('FORBIDDEN');
  });
});
