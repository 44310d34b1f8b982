/**
 * "Nothing was changed" must be true. A write whose COMMIT was sent but not answered (connection
 * lost, database died) has an unknown outcome: the error says so and tells the caller to retry
 * with the same idempotency key, which then replays the stored result (or runs it, if it was not
 * stored). A failure before the body ran is a plain "nothing was changed".
 * Both ways a write runs are covered: an interactive transaction (create_invite) and a batched
 * write, one statement on the pool (create_group).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '@kitty/db';
import { ToolError, type Services } from '../../src/index.ts';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { poolWithQuery, statementName, type QueryHook } from '../pool-proxy.ts';

let h: Harness;
let a: TestAgent;
let groupId: string;
beforeAll(async () => {
  h = await createHarness();
  a = await h.agent('committer');
  groupId = (await h.call(a, 'create_group', { name: 'Invites', currency: 'EUR' })).group.group_id;
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

/** Services whose pool clients run `query` instead of their own. */
const withPoolQuery = (query: QueryHook): Services => ({ ...h.services, pool: poolWithQuery(h.services.pool, query) });

/** A write on the interactive-transaction path: one invite with `note`. */
async function inviteAs(services: Services, key: string, note: string) {
  return h.registry.callTool(
    'create_invite',
    { group_id: groupId, note, idempotency_key: key },
    { services, auth: a.auth, requestId: `req_${randomUUID()}` },
  );
}

async function invitesNoted(note: string): Promise<number> {
  return h.services.prisma.invite.count({ where: { note } });
}

/** A batched write (one statement on the pool): a group named `name`. */
async function groupAs(services: Services, key: string, name: string) {
  return h.registry.callTool(
    'create_group',
    { name, currency: 'EUR', idempotency_key: key },
    { services, auth: a.auth, requestId: `req_${randomUUID()}` },
  );
}

async function groupsNamed(name: string): Promise<number> {
  return h.services.prisma.group.count({ where: { name } });
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as ToolError,
  );

describe('write outcome after a database failure (interactive transaction)', () => {
  it('committed but unacknowledged: says the outcome is unknown; the same key replays one effect', async () => {
    const name = `Committed ${randomUUID().slice(0, 6)}`;
    const key = `commit-${randomUUID()}`;
    // The transaction commits, then the connection "drops" before the answer reaches us.
    const services = withTransaction(async (real, fn, opts) => {
      await (real.$transaction as (f: unknown, o: unknown) => Promise<unknown>)(fn, opts);
      throw lost();
    });
    const err = await failure(inviteAs(services, key, name));
    expect(err).toBeInstanceOf(ToolError);
    expect(err!.kittyCode).toBe('INTERNAL');
    expect(err!.details).toEqual({ outcome: 'unknown' });
    expect(err!.message).not.toMatch(/nothing was changed/i);
    expect(err!.message).toMatch(/may or may not/);
    expect(err!.suggestedAction).toMatch(/same idempotency_key/);
    expect(await invitesNoted(name)).toBe(1);

    const retry = await inviteAs(h.services, key, name);
    expect(retry.call.replayed).toBe(true);
    expect(await invitesNoted(name)).toBe(1);
  });

  it('the body failed or never ran: "nothing was changed" is true, and the same key then runs it once', async () => {
    const name = `Never ${randomUUID().slice(0, 6)}`;
    const key = `never-${randomUUID()}`;
    // No connection at all: the body never runs.
    const down = withTransaction(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    const err = await inviteAs(down, key, name).then(
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
                if (prop === 'invite') {
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
    const err2 = await inviteAs(midway, key, name).then(
      () => undefined,
      (e: unknown) => e as ToolError,
    );
    expect(touched).toBeGreaterThan(0);
    expect(err2!.kittyCode).toBe('SERVICE_UNAVAILABLE');
    expect(err2!.message).toMatch(/nothing was changed/);
    expect(await invitesNoted(name)).toBe(0);
    expect(await h.services.prisma.idempotencyRecord.count({ where: { key } })).toBe(0);

    const retry = await inviteAs(h.services, key, name);
    expect(retry.call.replayed).toBe(false);
    expect(await invitesNoted(name)).toBe(1);
  });
});

describe('write outcome after a database failure (batched write)', () => {
  it('sent but unanswered: says the outcome is unknown; the same key replays one effect', async () => {
    const name = `Batched ${randomUUID().slice(0, 6)}`;
    const key = `batch-${randomUUID()}`;
    // The statement runs and commits, then the connection "drops" before the answer reaches us.
    const services = withPoolQuery(async (real, args) => {
      const r = await real(...args);
      if (statementName(args) === 'kitty_apply_batch') throw lost();
      return r;
    });
    const err = await failure(groupAs(services, key, name));
    expect(err).toBeInstanceOf(ToolError);
    expect(err!.kittyCode).toBe('INTERNAL');
    expect(err!.details).toEqual({ outcome: 'unknown' });
    expect(err!.message).toMatch(/may or may not/);
    expect(await groupsNamed(name)).toBe(1);
    const retry = await groupAs(h.services, key, name);
    expect(retry.call.replayed).toBe(true);
    expect(await groupsNamed(name)).toBe(1);
  });

  it('refused by PostgreSQL or never sent: "nothing was changed" is true, and the same key then runs it once', async () => {
    const name = `Refused ${randomUUID().slice(0, 6)}`;
    const key = `refused-${randomUUID()}`;
    // PostgreSQL answers with an error (a SQLSTATE): the statement, and so the write, rolled back.
    const refused = withPoolQuery(async (real, args) => {
      if (statementName(args) === 'kitty_apply_batch')
        throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
      return real(...args);
    });
    const err = await failure(groupAs(refused, key, name));
    expect(err!.message).toMatch(/nothing was changed/);
    expect(await groupsNamed(name)).toBe(0);
    // No connection at all: nothing was sent.
    const down = {
      ...h.services,
      pool: new Proxy(h.services.pool, {
        get(target, prop) {
          if (prop === 'connect' || prop === 'query')
            return async () => {
              throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
            };
          return Reflect.get(target, prop, target);
        },
      }),
    };
    const err2 = await failure(groupAs(down, key, name));
    expect(err2!.kittyCode).toBe('SERVICE_UNAVAILABLE');
    expect(err2!.message).toMatch(/nothing was changed/);
    expect(await h.services.prisma.idempotencyRecord.count({ where: { key } })).toBe(0);
    const retry = await groupAs(h.services, key, name);
    expect(retry.call.replayed).toBe(false);
    expect(await groupsNamed(name)).toBe(1);
  });
});
