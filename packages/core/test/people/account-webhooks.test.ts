/**
 * The account page's webhooks (account router `webhooks.*`): a person sees every endpoint of their
 * agents with the latest deliveries exactly as list_webhooks shows them to the agent, pauses,
 * resumes (also a disabled endpoint) and deletes one, each logged in the security log; another
 * person's endpoint is NOT_FOUND for every action and changes nothing; mutations keep the CSRF rule.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountRouter, createAccountCallerFactory, createSession, disableWebhook, toToolError, type ToolError } from '../../src/index.ts';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';

let h: Harness;
const createCaller = createAccountCallerFactory(accountRouter);

async function person(name: string) {
  const human = await h.services.prisma.human.create({ data: { displayName: name } });
  const s = await createSession(h.services.prisma, human.id, { ip: '203.0.113.7' });
  const as = (origin?: string) =>
    createCaller({
      services: h.services,
      session: { humanId: human.id, sessionId: s.sessionId },
      origin: { ip: '203.0.113.7', userAgent: 'vitest' },
      headers: { origin, host: 'kitty.test' },
      requestId: `req_${randomUUID()}`,
    });
  return { humanId: human.id, api: as('http://kitty.test'), as };
}

/** A headless agent claimed by the person (it acts with its key; the person manages it on the page). */
async function ownedAgent(p: Awaited<ReturnType<typeof person>>, prefix: string): Promise<TestAgent> {
  const agent = await h.agent(prefix);
  await p.api.agents.claim({ api_key: agent.apiKey });
  return agent;
}

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    const te = toToolError(e);
    if (te.kittyCode === 'INTERNAL') throw e;
    return te;
  }
  throw new Error('expected a failure');
}

const webhookRow = (id: string) => h.services.prisma.webhook.findUnique({ where: { id }, select: { paused: true, disabledAt: true } });

beforeAll(async () => {
  h = await createHarness();
  h.services.resolveHost = async () => [{ address: '93.184.216.34', family: 4 }];
});
afterAll(async () => {
  await h.close();
});

describe('webhooks on the account page', () => {
  it("lists each agent's endpoints with the deliveries list_webhooks shows the agent", async () => {
    const alice = await person('Alice');
    const a = await ownedAgent(alice, 'wa');
    const b = await ownedAgent(alice, 'wb');
    const first = (await h.call(a, 'create_webhook', { url: 'https://hooks.example/one', description: 'books' })).webhook;
    const second = (await h.call(a, 'create_webhook', { url: 'https://hooks.example/two', event_types: ['expense.created'] })).webhook;
    const ping = (await h.call(a, 'test_webhook', { webhook_id: first.webhook_id })).event_id;
    // A delivery the dispatcher finished after two attempts (the core harness runs no dispatcher).
    await h.services.prisma.$executeRaw`
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, payload, status, status_code, attempts, created_at, last_attempt_at)
      VALUES (${first.webhook_id}::uuid, 'evt_x', 'expense.created', '{}', 'delivered', 204, 2, now(), now())`;

    const list = await alice.api.webhooks.list();
    expect(list.agents.map((x) => x.agent.handle)).toEqual([a.handle, b.handle]);
    const [ofA, ofB] = list.agents;
    expect(ofB!.webhooks).toEqual([]);
    expect(ofA!.webhooks.map((w) => [w.webhook_id, w.url, w.paused])).toEqual([
      [first.webhook_id, 'https://hooks.example/one', false],
      [second.webhook_id, 'https://hooks.example/two', false],
    ]);
    expect(ofA!.webhooks[0]!.recent_deliveries.map((d) => [d.event_id, d.event_type, d.status, d.attempts, d.status_code])).toEqual([
      ['evt_x', 'expense.created', 'delivered', 2, 204],
      [ping, 'ping', 'pending', 0, null],
    ]);
    // The same view as the agent's own tool: one rule for both.
    expect(ofA!.webhooks).toEqual((await h.call(a, 'list_webhooks')).webhooks);
    expect(JSON.stringify(list)).not.toContain('whsec_');
  });

  it('pauses, resumes (also a disabled endpoint) and deletes, each logged', async () => {
    const alice = await person('Alice');
    const a = await ownedAgent(alice, 'wp');
    const { webhook_id } = (await h.call(a, 'create_webhook', { url: 'https://hooks.example/p' })).webhook;

    const paused = await alice.api.webhooks.pause({ webhook_id });
    expect(paused.webhook).toMatchObject({ webhook_id, paused: true, disabled_at: null });
    // Pausing a paused endpoint changes nothing and logs nothing (one webhook_paused below).
    expect((await alice.api.webhooks.pause({ webhook_id })).webhook.paused).toBe(true);
    expect(await webhookRow(webhook_id)).toEqual({ paused: true, disabledAt: null });
    expect((await h.call(a, 'list_webhooks')).webhooks[0].paused).toBe(true);

    const resumed = await alice.api.webhooks.resume({ webhook_id });
    expect(resumed.webhook.paused).toBe(false);
    expect(await webhookRow(webhook_id)).toEqual({ paused: false, disabledAt: null });

    // Disabled after failing deliveries: resume clears it, as update_webhook paused=false does.
    expect(await disableWebhook(h.services.prisma, webhook_id, 'HTTP 500', h.services.now())).toBe(true);
    expect((await alice.api.webhooks.list()).agents[0]!.webhooks[0]!.disabled_at).not.toBeNull();
    expect((await alice.api.webhooks.resume({ webhook_id })).webhook.disabled_at).toBeNull();
    expect(await webhookRow(webhook_id)).toEqual({ paused: false, disabledAt: null });

    expect(await alice.api.webhooks.remove({ webhook_id })).toEqual({ deleted: true });
    expect(await webhookRow(webhook_id)).toBeNull();
    expect((await alice.api.webhooks.list()).agents[0]!.webhooks).toEqual([]);
    expect((await failure(alice.api.webhooks.remove({ webhook_id }))).kittyCode).toBe('NOT_FOUND');
    expect((await h.fail(a, 'update_webhook', { webhook_id, paused: true })).kittyCode).toBe('NOT_FOUND');

    const log = (await alice.api.securityLog({})).events.filter((e) => e.type.startsWith('webhook_'));
    expect(log.map((e) => [e.type, e.agent_handle, e.details.webhook_url, e.ip])).toEqual([
      ['webhook_deleted', a.handle, 'https://hooks.example/p', '203.0.113.7'],
      ['webhook_resumed', a.handle, 'https://hooks.example/p', '203.0.113.7'],
      ['webhook_resumed', a.handle, 'https://hooks.example/p', '203.0.113.7'],
      ['webhook_paused', a.handle, 'https://hooks.example/p', '203.0.113.7'],
    ]);
  });

  it("another person's endpoint is NOT_FOUND for every action, like a missing one, and stays as it was", async () => {
    const alice = await person('Alice');
    const bob = await person('Bob');
    await ownedAgent(bob, 'wbob');
    const a = await ownedAgent(alice, 'wx');
    const { webhook_id } = (await h.call(a, 'create_webhook', { url: 'https://hooks.example/x' })).webhook;
    await alice.api.webhooks.pause({ webhook_id });

    expect((await bob.api.webhooks.list()).agents.flatMap((x) => x.webhooks)).toEqual([]);
    for (const id of [webhook_id, randomUUID()]) {
      for (const attempt of [bob.api.webhooks.pause, bob.api.webhooks.resume, bob.api.webhooks.remove]) {
        const e = await failure(attempt({ webhook_id: id }));
        expect(e.kittyCode).toBe('NOT_FOUND');
        expect(e.message).toBe('No webhook endpoint of your agents has this id.');
      }
    }
    expect(await webhookRow(webhook_id)).toEqual({ paused: true, disabledAt: null });
    expect((await bob.api.securityLog({})).events.filter((e) => e.type.startsWith('webhook_'))).toEqual([]);

    // Mutations keep the CSRF rule: no Origin, or another site's, changes nothing.
    for (const origin of [undefined, 'https://evil.example']) {
      const e = await failure(alice.as(origin).webhooks.resume({ webhook_id }));
      expect(e.kittyCode).toBe('FORBIDDEN');
      expect(e.details).toEqual({ reason: 'csrf_origin' });
    }
    expect(await webhookRow(webhook_id)).toEqual({ paused: true, disabledAt: null });
    expect((await failure(alice.api.webhooks.pause({ webhook_id: 'nope' }))).kittyCode).toBe('VALIDATION_ERROR');
  });
});
