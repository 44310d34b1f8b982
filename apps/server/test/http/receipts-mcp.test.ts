/**
 * Receipts over MCP with the official clients (v1 1.32.2 on 2025-11-25, v2 pinned to 2026-07-28):
 * resources/read of kitty://receipts/{receipt_id} gives a member the attached bytes (base64 blob
 * and mimeType) and refuses everyone else without bytes; the template is listed; attach_receipt
 * over /mcp takes a ~3 MB file (its own body allowance, as on REST) while every other message
 * keeps the 1 MiB default (413, JSON-RPC -32600).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
type Agent = Awaited<ReturnType<TestServer['agent']>>;
let owner: Agent, member: Agent, outsider: Agent, groupId: string, expenseId: string;
const closers: Array<() => Promise<void>> = [];
const MIB = 1024 * 1024;

async function v1(apiKey?: string): Promise<V1Client> {
  const headers: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  const c = new V1Client({ name: 'kitty-v1', version: '1.0.0' });
  await c.connect(new V1Transport(new URL(`${s.url}/mcp`), { requestInit: { headers } }));
  closers.push(() => c.close());
  return c;
}
async function v2(apiKey: string): Promise<V2Client> {
  const c = new V2Client({ name: 'kitty-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await c.connect(new V2Transport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
  closers.push(() => c.close());
  return c;
}
async function ok(a: Agent, tool: string, args: Record<string, unknown>) {
  const r = await s.http(`/v1/tools/${tool}`, { body: { ...args, idempotency_key: `k-${randomUUID()}` }, apiKey: a.apiKey });
  if (r.status !== 200) throw new Error(`${tool}: ${r.status} ${r.text}`);
  return r.json.data;
}
/** A PNG of random pixels: it does not compress, so `side`² × 3 bytes is about its size. */
const noisePng = (side: number) =>
  sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
const rawMcp = (body: string, apiKey?: string) =>
  s.http('/mcp', {
    rawBody: body,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    ...(apiKey ? { apiKey } : {}),
  });

let png: Buffer, receiptId: string, uri: string;
beforeAll(async () => {
  s = await startTestServer({ bodyLimit: MIB, receiptMaxBytes: 5 * MIB });
  [owner, member, outsider] = [await s.agent('owner'), await s.agent('member'), await s.agent('outsider')];
  groupId = (await ok(owner, 'create_group', { name: 'Receipts', currency: 'EUR' })).group.group_id;
  await ok(member, 'join_group', { code: (await ok(owner, 'create_invite', { group_id: groupId })).invite.code });
  expenseId = (await ok(owner, 'add_expense', { group_id: groupId, description: 'Dinner', amount_minor: 4200 })).expense.expense_id;
  png = await noisePng(16);
  const attached = await ok(owner, 'attach_receipt', { expense_id: expenseId, content_base64: png.toString('base64'), filename: 'a.png' });
  receiptId = attached.receipt.receipt_id;
  uri = `kitty://receipts/${receiptId}`;
});
afterAll(async () => {
  await Promise.all(closers.map((c) => c().catch(() => {})));
  await s?.close();
});

describe('receipts as MCP resources', () => {
  it('lists the receipt template and no enumerated receipts', async () => {
    const c = await v1(member.apiKey);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['kitty://receipts/{receipt_id}']);
    // The one listed resource is the caller's event feed (mcp-events.test.ts).
    expect((await c.listResources()).resources.map((r) => r.uri)).toEqual(['kitty://events']);
  });

  it('a member reads the attached bytes with their type (v1 client, 2025-11-25)', async () => {
    const c = await v1(member.apiKey);
    const { contents } = await c.readResource({ uri });
    expect(contents).toHaveLength(1);
    const item = contents[0] as { uri: string; mimeType: string; blob: string };
    expect(item).toMatchObject({ uri, mimeType: 'image/png' });
    expect(Buffer.from(item.blob, 'base64').equals(png)).toBe(true);
  });

  it('a member reads the same bytes with the v2 client on 2026-07-28', async () => {
    const c = await v2(owner.apiKey);
    const { contents } = await c.readResource({ uri });
    const item = contents[0] as { mimeType: string; blob: string };
    expect(item.mimeType).toBe('image/png');
    expect(Buffer.from(item.blob, 'base64').equals(png)).toBe(true);
  });

  it('an outsider is refused (both clients) and gets no bytes; so is an unknown or malformed id', async () => {
    const c = await v1(outsider.apiKey);
    const err = await c.readResource({ uri }).then(
      () => null,
      (e: unknown) => e as { code: number; message: string; data?: any },
    );
    expect(err?.code).toBe(-32602);
    expect(err?.message).toMatch(/not a member/i);
    expect(err?.data?.error?.code).toBe('FORBIDDEN');
    expect(JSON.stringify(err)).not.toContain(png.toString('base64').slice(0, 40));
    await expect((await v2(outsider.apiKey)).readResource({ uri })).rejects.toThrow(/not a member/i);
    await expect(c.readResource({ uri: `kitty://receipts/${randomUUID()}` })).rejects.toMatchObject({ code: -32602 });
    await expect(c.readResource({ uri: 'kitty://receipts/not-a-uuid%00' })).rejects.toMatchObject({ code: -32602 });
    await expect(c.readResource({ uri: 'kitty://elsewhere/x' })).rejects.toMatchObject({ code: -32602 });
  });

  it('without a credential resources/read answers 401 with the challenge; a key without svc:read gets 403 insufficient_scope', async () => {
    const body = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri } });
    const anon = await rawMcp(body(1));
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toMatch(/resource_metadata=.*\/mcp"/);
    expect(anon.text).not.toContain('"blob"');
    // A member whose key lost svc:read (only svc:write left; not a shape create_api_key makes, but the check must hold).
    const writer = await s.agent('writer');
    await ok(writer, 'join_group', { code: (await ok(owner, 'create_invite', { group_id: groupId })).invite.code });
    await s.kitty.services.prisma.apiKey.updateMany({ where: { agentId: writer.agentId }, data: { scopes: ['svc:write'] } });
    s.kitty.services.onCredentialsChanged?.(writer.agentId);
    const r = await rawMcp(body(2), writer.apiKey);
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toMatch(/insufficient_scope.*svc:read|svc:read.*insufficient_scope/);
    expect(r.json.error.data.error.details.required_scope).toBe('svc:read');
    expect(r.text).not.toContain('"blob"');
  });
});

describe('attach_receipt over MCP has its own body allowance', () => {
  it('a ~3 MB receipt attaches over /mcp and reads back byte for byte', async () => {
    const big = await noisePng(1000);
    expect(big.length).toBeGreaterThan(2.9 * 1e6);
    const c = await v1(member.apiKey);
    const args = { expense_id: expenseId, content_base64: big.toString('base64'), filename: 'big.png', idempotency_key: randomUUID() };
    const res = (await c.callTool({ name: 'attach_receipt', arguments: args })) as { isError?: boolean; structuredContent?: any };
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent.receipt).toMatchObject({ content_type: 'image/png', size_bytes: big.length });
    const read = await c.readResource({ uri: `kitty://receipts/${res.structuredContent.receipt.receipt_id}` });
    expect(Buffer.from((read.contents[0] as { blob: string }).blob, 'base64').equals(big)).toBe(true);
  });

  it('the v2 client on 2026-07-28 attaches a ~2 MB receipt too', async () => {
    const big = await noisePng(820);
    expect(big.length).toBeGreaterThan(2 * 1e6);
    const c = await v2(member.apiKey);
    const args = { expense_id: expenseId, content_base64: big.toString('base64'), filename: 'v2.png', idempotency_key: randomUUID() };
    const res = (await c.callTool({ name: 'attach_receipt', arguments: args })) as { isError?: boolean; structuredContent?: any };
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent.receipt.size_bytes).toBe(big.length);
  });

  it('any other message above the 1 MiB default is refused 413 / -32600, with or without Content-Length', async () => {
    const pad = 'x'.repeat(1.5 * MIB);
    const other = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'add_expense', arguments: { group_id: groupId, description: pad, amount_minor: 1 } },
    });
    const r = await rawMcp(other, member.apiKey);
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe(-32600);
    expect(r.json.error.data.error.code).toBe('PAYLOAD_TOO_LARGE');
    // Chunked (no Content-Length): the bytes are counted as they arrive.
    const chunked = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${member.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: new Blob([other]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    // A body naming attach_receipt but without a credential keeps the default limit (no tool with an allowance runs anonymously).
    const anon = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'attach_receipt', arguments: { pad } } });
    expect((await rawMcp(anon)).status).toBe(413);
    // attach_receipt itself stops at its allowance (5 MiB file in base64 + room).
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'attach_receipt', arguments: { content_base64: 'A'.repeat(7.1 * MIB) } },
    });
    const h = await rawMcp(huge, member.apiKey);
    expect(h.status).toBe(413);
    // The default still serves ordinary calls.
    const small = JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' });
    expect((await rawMcp(small, member.apiKey)).status).toBe(200);
  });
});
