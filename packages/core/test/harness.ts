/**
 * Test harness for core: a fresh PostgreSQL database per test file (migrations applied),
 * the real registry, and helpers to register agents and call tools as them.
 * Calls go through registry.callTool exactly as the adapters do (middlewares included).
 */
import { randomUUID } from 'node:crypto';
import { createDb, createTestDatabase } from '@kitty/db';
import { appRouter, buildRegistry, digestApiKey, ToolError, type AuthInfo, type Services, type Registry } from '../src/index.ts';

export interface TestAgent {
  agentId: string;
  handle: string;
  apiKey: string;
  auth: AuthInfo;
}

export interface Harness {
  registry: Registry;
  services: Services;
  /** Calls a tool as `agent` (null = anonymous); adds a fresh idempotency_key to write tools unless given. */
  call<T = any>(
    agent: TestAgent | null,
    tool: string,
    args?: Record<string, unknown>,
    opts?: { idempotencyKeyHeader?: string; raw?: boolean },
  ): Promise<T>;
  /** Like call, but returns the ToolError it throws (fails if it succeeds). */
  fail(agent: TestAgent | null, tool: string, args?: Record<string, unknown>): Promise<ToolError>;
  /** Registers a new agent with a unique handle (prefix + random suffix). */
  agent(prefix?: string): Promise<TestAgent>;
  /** Moves the harness clock (services.now) forward by `ms`. */
  advance(ms: number): void;
  /** Checks the ledger invariants for every group: balances sum to zero (throws otherwise). */
  close(): Promise<void>;
}

export async function createHarness(): Promise<Harness> {
  const testDb = await createTestDatabase();
  const db = createDb(testDb.databaseUrl, { poolMax: 20 });
  let offset = 0;
  const services: Services = {
    prisma: db.prisma,
    pool: db.pool,
    config: { baseUrl: 'http://kitty.test', inviteOnly: false, platformInviteCodes: [] },
    now: () => new Date(Date.now() + offset),
    // As on the server: batched writes may decide on a cached read of their group (access/group-reads.ts).
    groupReads: new Map<string, object>(),
    // As on the server: confirm/reject/cancel_payment may take a payment this process recorded from a cache.
    paymentReads: new Map<string, object>(),
  };
  const registry = buildRegistry(appRouter);

  const call: Harness['call'] = async (agent, tool, args = {}, opts = {}) => {
    const desc = registry.tools.get(tool);
    const withKey =
      desc?.kind === 'write' && desc.idempotency !== 'none' && !('idempotency_key' in args) && !opts.idempotencyKeyHeader && !opts.raw
        ? { ...args, idempotency_key: `test-${randomUUID()}` }
        : args;
    const r = await registry.callTool(tool, withKey, {
      services,
      auth: agent?.auth ?? null,
      requestId: `req_test_${randomUUID()}`,
      idempotencyKeyHeader: opts.idempotencyKeyHeader,
    });
    return r.data as any;
  };

  const fail: Harness['fail'] = async (agent, tool, args = {}) => {
    try {
      await call(agent, tool, args);
    } catch (e) {
      if (e instanceof ToolError) return e;
      throw e;
    }
    throw new Error(`expected ${tool} to fail`);
  };

  const agent: Harness['agent'] = async (prefix = 'agent') => {
    const handle = `${prefix}-${randomUUID().slice(0, 8)}`;
    const r = await call(null, 'register_agent', { handle, display_name: prefix });
    const key = await db.prisma.apiKey.findUniqueOrThrow({ where: { digest: digestApiKey(r.api_key) }, select: { id: true } });
    const auth: AuthInfo = {
      agentId: r.agent.agent_id,
      handle,
      displayName: prefix,
      scopes: ['svc:read', 'svc:write'],
      credential: 'api_key',
      keyId: key.id,
      retired: false,
    };
    return { agentId: r.agent.agent_id, handle, apiKey: r.api_key, auth };
  };

  return {
    registry,
    services,
    call,
    fail,
    agent,
    advance: (ms) => {
      offset += ms;
    },
    close: async () => {
      await db.close();
      await testDb.drop();
    },
  };
}
