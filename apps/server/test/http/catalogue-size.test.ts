/**
 * The catalogue fits in an agent's context, and its smaller schemas still validate every result:
 * - the exact bytes of the MCP tools/list answer /mcp sends (one JSON-RPC body over HTTP), printed per tool,
 *   fail over the budget: the whole list and each tool;
 * - every result of a realistic session validates against its tool's outputSchema (shared shapes as `$defs` +
 *   `$ref`, envelope fields left to the open objects) with Ajv as the MCP SDK clients configure it: draft-07
 *   `Ajv` (SDK v1) and `Ajv2020` (SDK v2 picks it for schemas without `$schema`), formats on, strict off;
 * - the SDK v1 client itself validates structuredContent of tools whose output uses `$ref`;
 * - the schemas are valid JSON Schema 2020-12 (Ajv2020 with meta-schema validation on).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../server-harness.ts';

/** Budgets in bytes of the JSON-RPC answer: the whole tools/list and any one tool in it. */
const TOTAL_BUDGET = 160_000;
// add_expense and update_expense are the largest: they take a split, itemized bills (each item with a split of its own) and a repeat rule.
const TOOL_BUDGET = 11_000;

const addFormats = addFormatsModule as unknown as (ajv: unknown) => void;

let s: TestServer;
let apiKey: string;
let list: { tools: Array<{ name: string; outputSchema: Record<string, unknown> }> };
let listBytes = 0;

async function rpc(method: string, params: unknown, key = apiKey): Promise<{ text: string; json: any }> {
  const res = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { text, json: JSON.parse(text) };
}

beforeAll(async () => {
  s = await startTestServer();
  apiKey = (await s.agent('size')).apiKey;
  const { text, json } = await rpc('tools/list', {});
  listBytes = Buffer.byteLength(text);
  list = json.result;
}, 60_000);
afterAll(async () => {
  await s?.close();
});

describe('tools/list size', () => {
  it(`stays within ${TOTAL_BUDGET} bytes, and each tool within ${TOOL_BUDGET}`, () => {
    const sizes = list.tools.map((t) => ({ name: t.name, bytes: Buffer.byteLength(JSON.stringify(t)) })).sort((a, b) => b.bytes - a.bytes);
    console.log(
      `tools/list: ${listBytes} bytes, ${sizes.length} tools\n` +
        sizes.map((t) => `  ${String(t.bytes).padStart(6)}  ${t.name}`).join('\n'),
    );
    expect(sizes.length).toBeGreaterThan(40);
    expect(sizes.filter((t) => t.bytes > TOOL_BUDGET)).toEqual([]);
    expect(listBytes).toBeLessThanOrEqual(TOTAL_BUDGET);
  });

  it('are valid JSON Schema 2020-12, input and output', () => {
    const ajv = new Ajv2020({ strict: false, validateSchema: true });
    addFormats(ajv);
    for (const t of list.tools as Array<{ name: string; inputSchema: object; outputSchema: object }>) {
      expect(ajv.validateSchema(t.inputSchema), `${t.name} input: ${ajv.errorsText()}`).toBe(true);
      expect(ajv.validateSchema(t.outputSchema), `${t.name} output: ${ajv.errorsText()}`).toBe(true);
    }
  });
});

describe('results validate against the smaller output schemas', () => {
  it('with both Ajv configurations of the MCP SDK clients, over a session touching every shared shape', async () => {
    const ann = await s.agent('ann');
    const bob = await s.agent('bob');
    const v1 = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });
    const v2 = new Ajv2020({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });
    addFormats(v1);
    addFormats(v2);
    const schemas = new Map(list.tools.map((t) => [t.name, t.outputSchema]));
    const checked = new Set<string>();
    const call = async (key: string, name: string, args: Record<string, unknown> = {}) => {
      const { json } = await rpc('tools/call', { name, arguments: args }, key);
      const result = json.result;
      expect(result.isError, `${name}: ${result.content?.[0]?.text}`).toBeFalsy();
      for (const [label, ajv] of [
        ['v1', v1],
        ['v2', v2],
      ] as const) {
        const validate = ajv.compile(schemas.get(name)!);
        expect(validate(result.structuredContent), `${label} ${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
      checked.add(name);
      return result.structuredContent;
    };
    const key = (n: number) => `size-test-${n}-${Date.now()}`;
    const g = await call(ann.apiKey, 'create_group', { name: 'Trip', currency: 'EUR', idempotency_key: key(1) });
    const gid = g.group.group_id;
    const inv = await call(ann.apiKey, 'create_invite', { group_id: gid, idempotency_key: key(2) });
    await call(bob.apiKey, 'join_group', { code: inv.invite.code, idempotency_key: key(3) });
    const e = await call(ann.apiKey, 'add_expense', {
      group_id: gid,
      description: 'Dinner',
      amount_minor: 9000,
      repeat: { unit: 'month', count: 3 },
      idempotency_key: key(4),
    });
    await call(ann.apiKey, 'get_expense', { expense_id: e.expense.expense_id });
    const p = await call(bob.apiKey, 'record_payment', {
      group_id: gid,
      to_handle: ann.handle,
      amount_minor: 1000,
      idempotency_key: key(5),
    });
    await call(ann.apiKey, 'get_payment', { payment_id: p.payment.payment_id });
    await call(ann.apiKey, 'send_message', { group_id: gid, body: 'paid?', idempotency_key: key(6) });
    for (const [name, args] of [
      ['get_group', { group_id: gid }],
      ['get_balances', { group_id: gid }],
      ['suggest_settlements', { group_id: gid }],
      ['list_expenses', { group_id: gid }],
      ['list_payments', { group_id: gid }],
      ['export_group', { group_id: gid }],
      ['list_activity', { group_id: gid }],
      ['list_invites', {}],
      ['list_conversations', {}],
      ['list_messages', { group_id: gid }],
      ['get_inbox', {}],
      ['get_me', {}],
      ['get_balance_summary', {}],
    ] as const)
      await call(bob.apiKey, name, args);
    await call(ann.apiKey, 'confirm_payment', { payment_id: p.payment.payment_id, idempotency_key: key(7) });
    // The shapes written once per schema are really exercised.
    const withRefs = [...checked].filter((n) => JSON.stringify(schemas.get(n)).includes('"$ref"'));
    expect(withRefs.length).toBeGreaterThanOrEqual(5);
  });

  it('and the SDK v1 client accepts structuredContent of tools whose schema uses $ref', async () => {
    const ann = await s.agent('sdk');
    const bob = await s.agent('sdkb');
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${ann.apiKey}` } },
    });
    const client = new Client({ name: 'size-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = await client.listTools(); // the client validates structuredContent from now on
      const payment = tools.tools.find((t) => t.name === 'get_payment')!;
      expect(JSON.stringify(payment.outputSchema)).toContain('"$ref":"#/$defs/AgentRef"');
      const g = (
        await client.callTool({
          name: 'create_group',
          arguments: { name: 'Flat', currency: 'EUR', idempotency_key: `sdk-1-${Date.now()}` },
        })
      ).structuredContent as any;
      const inv = (
        await client.callTool({ name: 'create_invite', arguments: { group_id: g.group.group_id, idempotency_key: `sdk-2-${Date.now()}` } })
      ).structuredContent as any;
      await bob.client.call('join_group', { code: inv.invite.code });
      const rec = await client.callTool({
        name: 'record_payment',
        arguments: {
          group_id: g.group.group_id,
          to_handle: bob.handle,
          amount_minor: 100,
          allow_overpayment: true,
          idempotency_key: `sdk-3-${Date.now()}`,
        },
      });
      expect(rec.isError).toBeFalsy();
      const got = await client.callTool({
        name: 'get_payment',
        arguments: { payment_id: (rec.structuredContent as any).payment.payment_id },
      });
      expect(got.isError).toBeFalsy();
      expect((got.structuredContent as any).payment.from.handle).toBe(ann.handle);
    } finally {
      await client.close();
    }
  });
});
