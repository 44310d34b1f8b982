/**
 * What an agent reads when it gets something slightly wrong, on REST and MCP alike:
 * closest tool names for an unknown tool, the minor-units rule with an example in the group's
 * currency, the closest key for an unknown key, the length rule for a short idempotency key,
 * and a replayed write flagged in the result itself (`replayed: true`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
let ana: Awaited<ReturnType<TestServer['agent']>>;
let mcp: Client;
let groupId: string;

beforeAll(async () => {
  s = await startTestServer();
  ana = await s.agent('ana');
  mcp = new Client({ name: 'agent-errors-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${ana.apiKey}` } } }),
  );
  const g = await s.http('/v1/tools/create_group', {
    apiKey: ana.apiKey,
    body: { name: 'Trip', currency: 'EUR', idempotency_key: randomUUID() },
  });
  groupId = g.json.data.group.group_id;
});
afterAll(async () => {
  await mcp?.close();
  await s?.close();
});

const rest = (tool: string, body: unknown) => s.http(`/v1/tools/${tool}`, { apiKey: ana.apiKey, body });
const mcpError = async (name: string, args: Record<string, unknown>) => {
  const r = (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ text: string }> };
  expect(r.isError).toBe(true);
  return JSON.parse(r.content[0]!.text).error;
};

describe('unknown tool', () => {
  it('names the closest tools on REST', async () => {
    const r = await rest('add_expence', {});
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('NOT_FOUND');
    expect(r.json.error.message).toMatch(/did you mean "add_expense"/);
    expect(r.json.error.details.did_you_mean[0]).toBe('add_expense');
    const described = await s.http('/v1/tools/get_balance');
    expect(described.json.error.message).toMatch(/"get_balances"/);
  });

  it('names the closest tools on MCP with the same message', async () => {
    const err = await mcp.callTool({ name: 'add_expence', arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).message).toMatch(/did you mean "add_expense"/);
  });
});

describe('amounts, keys and idempotency keys', () => {
  it('a float or string amount says: an integer in minor units, with an example in the group currency', async () => {
    for (const amount_minor of [14.5, '14.50']) {
      const r = await rest('add_expense', { group_id: groupId, description: 'Lunch', amount_minor, idempotency_key: randomUUID() });
      expect(r.status).toBe(400);
      const issue = r.json.error.details.issues.find((i: { path: string }) => i.path === 'amount_minor');
      expect(issue.message).toContain('integer in minor units');
      expect(issue.message).toContain('send 1450 for €14.50');
    }
    const viaMcp = await mcpError('record_payment', {
      group_id: groupId,
      to_handle: ana.handle,
      amount_minor: 3.2,
      idempotency_key: randomUUID(),
    });
    expect(viaMcp.message).toContain('send 1450 for €14.50');
  });

  it('an unknown key names the closest allowed key', async () => {
    const r = await rest('add_expense', { group_id: groupId, description: 'Lunch', amount: 1450, idempotency_key: randomUUID() });
    expect(r.status).toBe(400);
    const issue = r.json.error.details.issues.find((i: { path: string }) => i.path === 'amount');
    expect(issue).toMatchObject({ code: 'unrecognized_keys' });
    expect(issue.message).toContain('did you mean "amount_minor"');
    const nested = await rest('add_expense', {
      group_id: groupId,
      description: 'x',
      amount_minor: 100,
      payers: [{ handle: ana.handle, amount: 100 }],
      idempotency_key: randomUUID(),
    });
    expect(nested.json.error.details.issues.find((i: { path: string }) => i.path === 'payers.0.amount').message).toContain(
      '"amount_minor"',
    );
  });

  it('a too-short idempotency key states the length rule; a missing one says required', async () => {
    const short = await rest('create_group', { name: 'X', currency: 'EUR', idempotency_key: 'abc' });
    const issue = short.json.error.details.issues.find((i: { path: string }) => i.path === 'idempotency_key');
    expect(issue.message).toMatch(/too short \(3 characters\).*8-128 characters/);
    expect(issue.message).not.toMatch(/required/);
    const missing = await rest('create_group', { name: 'X', currency: 'EUR' });
    expect(missing.json.error.details.issues.find((i: { path: string }) => i.path === 'idempotency_key').message).toMatch(/^required/);
  });
});

describe('replayed writes', () => {
  it('are flagged in the result on REST (and the header) and on MCP', async () => {
    const key = randomUUID();
    const body = { group_id: groupId, description: 'Taxi', amount_minor: 2000, idempotency_key: key };
    const first = await rest('add_expense', body);
    expect(first.json.data.replayed).toBeUndefined();
    const again = await rest('add_expense', body);
    expect(again.json.data.replayed).toBe(true);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.data.expense.expense_id).toBe(first.json.data.expense.expense_id);
    const viaMcp = (await mcp.callTool({ name: 'add_expense', arguments: body })) as { structuredContent: Record<string, unknown> };
    expect(viaMcp.structuredContent.replayed).toBe(true);
  });
});

describe('sandbox and small things', () => {
  it('the sandbox accepts a write with its idempotency_key and names the closest key for a typo', async () => {
    const ok = await s.http('/v1/sandbox/tools/add_expense', {
      apiKey: ana.apiKey,
      body: { group_id: groupId, description: 'x', amount_minor: 100, idempotency_key: randomUUID() },
    });
    expect(ok.status).toBe(200);
    expect(ok.json.data.valid).toBe(true);
    const typo = await s.http('/v1/sandbox/tools/add_expense', {
      apiKey: ana.apiKey,
      body: { group_id: groupId, description: 'x', amount: 100, idempotency_key: randomUUID() },
    });
    expect(typo.json.error.details.issues.find((i: { path: string }) => i.path === 'amount').message).toContain('"amount_minor"');
  });

  it('responses end with a newline', async () => {
    for (const r of [
      await s.http('/v1/tools/get_me', { apiKey: ana.apiKey, body: {} }),
      await s.http('/v1/tools/nope', { body: {} }),
      await s.http('/openapi.json'),
    ]) {
      expect(r.text.endsWith('\n')).toBe(true);
    }
  });

  it('/i/<code> answers JSON when JSON is asked for', async () => {
    const inv = await rest('create_invite', { group_id: groupId, idempotency_key: randomUUID() });
    const code = inv.json.data.invite.code;
    for (const accept of ['application/json', 'text/html;q=0.5, application/json', 'application/*']) {
      const r = await s.http(`/i/${code}`, { headers: { accept } });
      expect(r.headers.get('content-type'), accept).toMatch(/application\/json/);
      expect(r.json.data.invite.code).toBe(code);
    }
    expect((await s.http(`/i/${code}?format=json`)).json.data.invite.code).toBe(code);
    expect((await s.http(`/i/${code}`, { headers: { accept: 'text/html' } })).headers.get('content-type')).toMatch(/text\/html/);
    expect((await s.http(`/i/${code}`)).headers.get('content-type')).toMatch(/text\/plain/);
  });
});
