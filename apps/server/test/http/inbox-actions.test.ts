/**
 * The inbox summary's top_items over the real transports: the call a top item carries is sent as is over
 * REST and over MCP (official SDK client), it resolves the item, and the next answer's summary (served
 * through the NOTIFY-invalidated inbox cache) no longer lists it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const rest = async (tool: string, args: Record<string, unknown>, apiKey: string) => {
  const r = await s.http(`/v1/tools/${tool}`, { body: args, apiKey });
  expect(r.status, r.text).toBe(200);
  return r.json.data;
};

it('a pending payment: the suggested call confirms it over REST, another over MCP; both stop being listed', async () => {
  const ana = await s.agent('ana');
  const bob = await s.agent('bob');
  const g = (await rest('create_group', { name: 'Flat', currency: 'EUR', idempotency_key: 'group-flat-1' }, ana.apiKey)).group.group_id;
  const inv = (await rest('create_invite', { group_id: g, idempotency_key: 'invite-flat-1' }, ana.apiKey)).invite;
  await rest('join_group', { code: inv.code, idempotency_key: 'join-flat-1' }, bob.apiKey);
  await rest('add_expense', { group_id: g, description: 'Rent', amount_minor: 100_000, idempotency_key: 'rent-0001' }, ana.apiKey);
  await rest('mark_inbox_read', { all: true, idempotency_key: 'mark-all-1' }, ana.apiKey);
  const p1 = (
    await rest('record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 100, idempotency_key: 'pay-one-0001' }, bob.apiKey)
  ).payment;
  const p2 = (
    await rest('record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 200, idempotency_key: 'pay-two-0002' }, bob.apiKey)
  ).payment;

  const before = (await rest('get_me', {}, ana.apiKey)).inbox;
  expect(before).toMatchObject({ unread: 2, requires_action: 2 });
  const calls = before.top_items.map((i: any) => i.call);
  expect(calls.map((c: any) => [c.tool, c.arguments.payment_id]).sort()).toEqual(
    [
      ['confirm_payment', p1.payment_id],
      ['confirm_payment', p2.payment_id],
    ].sort(),
  );

  // The first over REST, exactly as given.
  const first = await rest(calls[0].tool, calls[0].arguments, ana.apiKey);
  expect(first.payment.status).toBe('confirmed');
  expect(first.inbox).toMatchObject({ unread: 1, requires_action: 1 });
  expect(first.inbox.top_items).toHaveLength(1);

  // The second over MCP, as given by the MCP answer's own summary.
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${ana.apiKey}` } },
  });
  const client = new Client({ name: 'inbox-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const me = (await client.callTool({ name: 'get_me', arguments: {} })).structuredContent as any;
    const [item] = me.inbox.top_items;
    expect(item).toMatchObject({
      kind: 'payment_to_confirm',
      requires_action: true,
      entity: { type: 'payment', id: calls[1].arguments.payment_id },
    });
    const done = await client.callTool({ name: item.call.tool, arguments: item.call.arguments });
    expect(done.isError).toBeFalsy();
    expect((done.structuredContent as any).inbox).toBeUndefined();
  } finally {
    await client.close();
  }
  // A read after the writes (cached summary, invalidated by the counters' NOTIFY) agrees.
  expect((await rest('get_me', {}, ana.apiKey)).inbox).toBeUndefined();
  const items = (await rest('get_inbox', {}, ana.apiKey)).items.filter((i: any) => i.kind === 'payment_to_confirm');
  expect(items.map((i: any) => i.resolution)).toEqual([`confirmed by @${ana.handle}`, `confirmed by @${ana.handle}`]);
});
