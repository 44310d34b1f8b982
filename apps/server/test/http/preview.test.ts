/**
 * Previews, categories and itemized bills over the wire: REST with the Idempotency-Key header (a
 * preview leaves the key unused), MCP with the SDK client (which checks structuredContent against
 * the tool's outputSchema), and the schema-only sandbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
let alice: { apiKey: string; handle: string };
let bob: { apiKey: string; handle: string };
let groupId: string;
let mcp: Client;
beforeAll(async () => {
  s = await startTestServer();
  alice = await s.agent('alice');
  bob = await s.agent('bob');
  const g = await s.http('/v1/tools/create_group', {
    apiKey: alice.apiKey,
    body: { name: 'Trip', currency: 'EUR', idempotency_key: randomUUID() },
  });
  groupId = g.json.data.group.group_id;
  const inv = await s.http('/v1/tools/create_invite', { apiKey: alice.apiKey, body: { group_id: groupId, idempotency_key: randomUUID() } });
  await s.http('/v1/tools/join_group', { apiKey: bob.apiKey, body: { code: inv.json.data.invite.code, idempotency_key: randomUUID() } });
  mcp = new Client({ name: 'kitty-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${alice.apiKey}` } } }),
  );
});
afterAll(async () => {
  await mcp?.close();
  await s?.close();
});

const count = async () => s.kitty.services.prisma.expense.count();

describe('dry_run over REST and MCP', () => {
  it('REST: a preview with the Idempotency-Key header leaves the key unused; the real call then runs with the same id', async () => {
    const key = `hdr-${randomUUID()}`;
    const body = {
      group_id: groupId,
      description: 'Dinner',
      category_id: 'food/dining_out',
      items: [
        { description: 'Wine', amount_minor: 3001 },
        { description: 'Pasta', amount_minor: 1200, split: { participants: [{ handle: bob.handle }] } },
      ],
      tip_minor: 420,
    };
    const before = await count();
    const p = await s.http('/v1/tools/add_expense', {
      apiKey: alice.apiKey,
      headers: { 'idempotency-key': key },
      body: { ...body, dry_run: true },
    });
    expect(p.status).toBe(200);
    expect(p.json.data).toMatchObject({
      dry_run: true,
      expense: { amount_minor: 4621, split_method: 'itemized', category_id: 'food/dining_out' },
    });
    expect(p.json.data.balance_changes.map((c: any) => c.handle).sort()).toEqual([alice.handle, bob.handle].sort());
    expect(await count()).toBe(before);
    const real = await s.http('/v1/tools/add_expense', { apiKey: alice.apiKey, headers: { 'idempotency-key': key }, body });
    expect(real.headers.get('idempotent-replayed')).toBeNull();
    expect(real.json.data.expense.expense_id).toBe(p.json.data.expense.expense_id);
    expect(real.json.data.expense.shares).toEqual(p.json.data.expense.shares);
    expect(await count()).toBe(before + 1);
  });

  it('MCP: the preview validates against the published outputSchema and writes nothing', async () => {
    const before = await count();
    const r = await mcp.callTool({
      name: 'add_expense',
      arguments: {
        group_id: groupId,
        description: 'Bar',
        amount_minor: 3000,
        split: {
          method: 'adjustment',
          participants: [
            { handle: alice.handle, adjustment_minor: 500 },
            { handle: bob.handle, adjustment_minor: 0 },
          ],
        },
        dry_run: true,
        idempotency_key: randomUUID(),
      },
    });
    expect(r.isError).toBeFalsy();
    const data = r.structuredContent as any;
    expect(data.dry_run).toBe(true);
    expect(data.expense.shares.map((x: any) => x.owed_minor).sort()).toEqual([1250, 1750]);
    expect(await count()).toBe(before);
    const list = await mcp.callTool({ name: 'list_categories', arguments: {} });
    expect((list.structuredContent as any).categories.length).toBeGreaterThanOrEqual(30);
  });

  it('the sandbox checks dry_run, items and category_id against the schema only', async () => {
    const ok = await s.http('/v1/sandbox/tools/add_expense', {
      body: {
        group_id: groupId,
        description: 'X',
        items: [{ description: 'Y', amount_minor: 1 }],
        dry_run: true,
        idempotency_key: randomUUID(),
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.json.data.valid).toBe(true);
    const bad = await s.http('/v1/sandbox/tools/add_expense', {
      body: {
        group_id: groupId,
        description: 'X',
        amount_minor: 1,
        category_id: 'food/caviar',
        dry_run: 'yes',
        idempotency_key: randomUUID(),
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.issues.map((i: any) => i.path).sort()).toEqual(['category_id', 'dry_run']);
  });
});
