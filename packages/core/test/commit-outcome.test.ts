/**
 * "Nothing was changed" must be true. A write whose COMMIT was sent but not answered (connection
 * lost, database died) has an unknown outcome: the error says so and tells the caller to retry
 * with the same idempotency key, which then replays the stored result (or runs it, if it was not
 * stored). A failure before the body ran is a plain "nothing was changed".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '@kitty/db';
import { ToolError, type Services } from '../src/index.ts';
import { createHarness, type Harness, type TestAgent } from './harness.ts';

let h: Harness;
let a: TestAgent;
beforeAll(async () => {
  h = await createHarness();
  a = await h.agent('committer');
});
afterAll(async () => {
  await h?.close();
});

/** Services whose prisma.$transaction is replaced by `tx` (everything else is the real client). */
function withTransaction(tx: (real: PrismaClient, fn: (t: unknown) => Promise<unknown>, opts: unknown) => Promise<unknown>): Services {
  const real = h.services.prisma;
  const prisma = new Proxy(real, {
    get(target, prop) {
      if (prop === '$transaction') return (fn: (t: unknown) => Promise<unknown>, opts: unknown) => tx(real, fn, opts);
      return Reflect.get(target, prop, target);
    },
  });
  return { ...h.services, prisma };
}

const lost = () => Object.assign(new Error('Connection terminated unexpectedly'), {});

async function callAs(services: Services, key: string, name: string) {
  return h.registry.callTool(
    'create_group',
    { name, currency: 'EUR', idempotency_key: key },
    { services, auth: a.auth, requestId: `req_${randomUUID()}` },
  );
}

async function groupsNamed(name: string): Promise<number> {
  return h.services.prisma.group.count({ where: { name } });
}

describe('write outcome after a database failure', () => {
  it('committed but unacknowledged: says the outcome is unknown; the same key replays one effect', async () => {
    const name = `Committed ${randomUUID().slice(0, 6)}`;
    const key = `commit-${randomUUID()}`;
    // The transaction commits, then the connection "drops" before the answer reaches us.
    const services = withTransaction(async (real, fn, opts) => {
      await (real.$transaction as (f: unknown, o: unknown) => Promise<unknown>)(fn, opts);
      throw lost();
    });
    const err = await callAs(services, key, name).then(
      () => undefined,
      (e: unknown) => e as ToolError,
    );
    expect(err).toBeInstanceOf(ToolError);
    expect(err!.kittyCode).toBe('INTERNAL');
    expect(err!.details).toEqual({ outcome: 'unknown' });
    expect(err!.message).not.toMatch(/nothing was changed/i);
    expect(err!.message).toMatch(/may or may not/);
    expect(err!.suggestedAction).toMatch(/same idempotency_key/);
    expect(await groupsNamed(name)).toBe(1);

    const retry = await callAs(h.services, key, name);
    expect(retry.call.replayed).toBe(true);
    expect(await groupsNamed(name)).toBe(1);
  });

  it('the body failed or never ran: "nothing was changed" is true, and the same key then runs it once', async () => {
    const name = `Never ${randomUUID().slice(0, 6)}`;
    const key = `never-${randomUUID()}`;
    // No connection at all: the body never runs.
    const down = withTransaction(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    const err = await callAs(down, key, name).then(
      () => undefined,
      (e: unknown) => e as ToolError,
    );
    expect(err!.kittyCode).toBe('SERVICE_UNAVAILABLE');
    expect(err!.status).toBe(503);
    expect(err!.message).toMatch(/nothing was changed/);
    expect(err!.retryAfter).toBeGreaterThan(0);
    // The connection dies inside the body (before COMMIT): rolled back.
    // The idempotency record is inserted, then the connection dies as the handler starts.
    let touched = 0;
    const midway = withTransaction((real, fn, opts) =>
      (real.$transaction as (f: (t: unknown) => Promise<unknown>, o: unknown) => Promise<unknown>)(
        (t) =>
          fn(
            new Proxy(t as object, {
              get(target, prop) {
                if (prop === 'group') {
                  touched++;
                  throw lost();
                }
                return Reflect.get(target, prop, target);
              },
            }),
          ),
        opts,
      ),
    );
    const err2 = await callAs(midway, key, name).then(
      () => undefined,
      (e: unknown) => e as ToolError,
    );
    expect(touched).toBeGreaterThan(0);
    expect(err2!.kittyCode).toBe('SERVICE_UNAVAILABLE');
    expect(err2!.message).toMatch(/nothing was changed/);
    expect(await groupsNamed(name)).toBe(0);
    expect(await h.services.prisma.idempotencyRecord.count({ where: { key } })).toBe(0);

    const retry = await callAs(h.services, key, name);
    expect(retry.call.replayed).toBe(false);
    expect(await groupsNamed(name)).toBe(1);
  });
});
