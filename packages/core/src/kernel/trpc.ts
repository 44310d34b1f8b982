/**
 * tRPC setup: the base procedures every tool is built from, and the middlewares that enforce authentication, scopes
 * and idempotency with one transaction per write. Tools never repeat these rules: `writeTool` also declares the `idempotency_key` argument.
 */
import { hash as sha } from 'node:crypto';
import { initTRPC } from '@trpc/server';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { TX_OPTIONS, type ToolContext, type Services, type Db } from './context.ts';
import { requiredScope, type ToolMeta } from './meta.ts';
import { ToolError, validationError, isKnownRollback, outcomeUnknownError } from './errors.ts';
import { idempotencyKey } from './text.ts';
import { beginInboxCounters, flushInboxCounters } from './notify.ts';
import { WriteBatch, callEntityId } from './write-batch.ts';
import { applyBatch, StaleBatchError } from './apply-batch.ts';
import { dryRunArg, PreviewRollback, isDryRun, previewOf } from './preview.ts';
import { addDeltas, balanceChanges, trackBalanceDeltas, type BalanceDeltas } from './balance-changes.ts';

const t = initTRPC.context<ToolContext>().meta<ToolMeta>().create({ isServer: true, allowOutsideOfServer: true });

export const router = t.router;

/** SHA-256 of the canonical JSON (RFC 8785) of the arguments without the idempotency key. */
export function requestHash(args: unknown): string {
  let copy = args;
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    // Rest destructuring, not `delete` on a copy (which turns the copy into a slow dictionary-mode object).
    const { idempotency_key: _key, ...rest } = args as Record<string, unknown>;
    copy = rest;
  }
  return sha('sha256', canonicalize(copy ?? {}) ?? '', 'hex');
}

/**
 * Authentication and the scope rule (`requiredScope`, meta.ts): a missing credential is
 * UNAUTHENTICATED; a missing scope is FORBIDDEN with details.required_scope. Narrows `ctx.auth`
 * to a non-null AuthInfo for every tool built on it, so handlers need no `ctx.auth!`.
 */
const authed = t.middleware(async ({ ctx, meta, type, next }) => {
  if (!meta) throw new ToolError('INTERNAL', 'tool without metadata');
  if (!ctx.auth) throw new ToolError('UNAUTHENTICATED', 'This tool needs a credential: send "Authorization: Bearer <api key>".');
  const required = requiredScope(type === 'query' ? 'read' : 'write');
  if (!ctx.auth.scopes.includes(required)) {
    throw new ToolError('FORBIDDEN', `This credential lacks the scope ${required}.`, {
      details: { required_scope: required },
      suggestedAction: `Use a credential with scope ${required}.`,
    });
  }
  return next({ ctx: { auth: ctx.auth } });
});

/**
 * One interactive transaction around `body`. A failure before or inside `body` rolls back, so
 * "nothing was changed" holds. A failure after `body` returned happened while committing: unless
 * PostgreSQL reported a rollback (serialization failure, deadlock, timeout), the outcome is
 * unknown and the caller is told so (outcomeUnknownError), never that nothing changed.
 */
async function inTransaction<T>(services: Services, body: (tx: Db) => Promise<T>): Promise<T> {
  let committing = false;
  try {
    return await services.prisma.$transaction(async (tx) => {
      const r = await body(tx);
      committing = true;
      return r;
    }, TX_OPTIONS);
  } catch (e) {
    if (committing && !isKnownRollback(e)) throw outcomeUnknownError(e);
    throw e;
  }
}

const readDb = t.middleware(({ ctx, next }) => next({ ctx: { db: ctx.services.prisma } }));

/**
 * Write calls, step 1: the idempotency key may come as the argument or the `Idempotency-Key`
 * header (interface-spec "Endpoints" 2); both and different → VALIDATION_ERROR. The header's
 * key is merged into the arguments so the schema sees one `idempotency_key`.
 */
const mergeIdempotencyHeader = t.middleware(async ({ ctx, getRawInput, next }) => {
  if (ctx.idempotencyKeyHeader === undefined) return next();
  const raw = await getRawInput();
  const args: Record<string, unknown> =
    raw && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>) } : {};
  const header = ctx.idempotencyKeyHeader;
  if (args.idempotency_key !== undefined && args.idempotency_key !== header) {
    throw validationError(
      'idempotency_key',
      'differs from the Idempotency-Key header; send one key, or the same in both',
      'idempotency_key_mismatch',
    );
  }
  args.idempotency_key = header;
  return next({ getRawInput: async () => args });
});

/**
 * Write calls, step 2: one transaction holding the idempotency record, the effect and its
 * activity (DESIGN.md §4). The record is inserted first; a concurrent duplicate blocks on its
 * primary key until the first commits (then replays) or rolls back (then runs). A failed
 * attempt stores nothing; different arguments under the same key → IDEMPOTENCY_KEY_REUSED.
 */
const writeTx = t.middleware(async ({ ctx, meta, path, input, getRawInput, next }) => {
  const mode = meta?.idempotency ?? 'replay';
  if (mode === 'none') {
    return inTransaction(ctx.services, async (tx) => {
      beginInboxCounters(tx);
      const result = await next({ ctx: { db: tx, dryRun: false } });
      if (!result.ok) throw result.error;
      await flushInboxCounters(tx);
      return result;
    });
  }
  // The key was checked by writeTool's input (`idempotencyKey`, text.ts) and taken out of the raw arguments (`stripArg`).
  const key = (input as { idempotency_key: string }).idempotency_key;
  const raw = await getRawInput();
  const toolArgs = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const agentId = ctx.auth!.agentId;
  const hash = requestHash(toolArgs);
  const dryRun = isDryRun(input);

  try {
    return await inTransaction(ctx.services, async (tx) => {
      const inserted = await tx.$executeRaw`
      INSERT INTO idempotency_records (agent_id, tool, key, request_hash, response)
      VALUES (${agentId}::uuid, ${path}, ${key}, ${hash}, 'null'::jsonb)
      ON CONFLICT DO NOTHING`;
      if (inserted === 0) {
        const rec = await tx.idempotencyRecord.findUnique({ where: { agentId_tool_key: { agentId, tool: path, key } } });
        if (!rec)
          throw new ToolError('REQUEST_IN_PROGRESS', 'The same idempotency key is in use by a call that has not finished.', {
            retryAfter: 1,
          });
        const answer = answerStored(ctx, { path, key, hash, mode }, rec);
        return dryRun ? previewOf(answer, []) : answer;
      }
      beginInboxCounters(tx);
      const deltas = dryRun ? trackBalanceDeltas(tx) : undefined;
      const result = await next({ ctx: { db: tx, dryRun } });
      if (!result.ok) throw result.error;
      // Agent-row locks last and in id order (kernel/notify.ts): the inbox counters of everyone notified.
      await flushInboxCounters(tx);
      // A preview: everything was done as by the real call; answer it, and roll all of it back.
      if (deltas) throw new PreviewRollback(previewOf(result, await balanceChanges(tx, deltas, 'after')));
      const stored = mode === 'never_replay' ? { never_replayed: true } : result.data;
      await tx.$executeRaw`
      UPDATE idempotency_records SET response = ${JSON.stringify(stored)}::jsonb
      WHERE agent_id = ${agentId}::uuid AND tool = ${path} AND key = ${key}`;
      return result;
    });
  } catch (e) {
    if (e instanceof PreviewRollback) return e.answer as never;
    throw e;
  }
});

/**
 * The answer to a call whose idempotency key is already stored: the stored response (marked
 * replayed), IDEMPOTENCY_KEY_REUSED when the arguments differ, IDEMPOTENCY_REPLAY_UNAVAILABLE
 * for tools whose result is never replayed.
 */
function answerStored(
  ctx: ToolContext,
  call: { path: string; key: string; hash: string; mode: 'replay' | 'never_replay' },
  rec: { requestHash: string; response: unknown },
) {
  const { path, key } = call;
  if (rec.requestHash !== call.hash) {
    throw new ToolError('IDEMPOTENCY_KEY_REUSED', `idempotency_key "${key}" was already used for ${path} with different arguments.`, {
      details: { idempotency_key: key, tool: path },
    });
  }
  if (call.mode === 'never_replay') {
    throw new ToolError(
      'IDEMPOTENCY_REPLAY_UNAVAILABLE',
      `${path} already ran with idempotency_key "${key}"; its result is shown only once and is never replayed.`,
      { details: { idempotency_key: key, tool: path } },
    );
  }
  ctx.call.replayed = true;
  return { ok: true as const, data: rec.response, marker: undefined as never };
}

/** How many times a batched write reads and decides again when the state it decided on changed before it was written. */
const MAX_BATCH_ATTEMPTS = 8;

/**
 * Write calls of batched tools (`batchedWriteTool`): the tool reads what it needs and fills
 * `ctx.batch` without writing, then the batch, the idempotency record and the response are
 * written in one statement (kernel/write-batch.ts): no interactive transaction, locks held only
 * for that statement. A key already stored is found by that statement (nothing else is written;
 * the stored response is answered, or IDEMPOTENCY_KEY_REUSED), or — when the tool refused on the
 * current state — by a lookup made only then, so a retry of a call that succeeded is answered as
 * it was. When the state the tool decided on changed in between (a member left, the payment was
 * confirmed meanwhile), nothing was written and the tool runs again on fresh state. A concurrent
 * call with the same key waits on the key and then answers the stored result.
 */
const batchedWriteTx = t.middleware(async ({ ctx, meta, path, input, getRawInput, next }) => {
  const mode = meta?.idempotency === 'never_replay' ? 'never_replay' : 'replay';
  const key = (input as { idempotency_key: string }).idempotency_key;
  const raw = await getRawInput();
  const hash = requestHash(raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {});
  const agentId = ctx.auth!.agentId;
  const { pool, inboxSummaries } = ctx.services;
  const call = { path, key, hash, mode } as const;
  const lookup = async () => {
    const stored = await pool.query<{ request_hash: string; response: unknown }>({
      name: 'kitty_idempotency_lookup',
      text: 'SELECT request_hash, response FROM idempotency_records WHERE agent_id = $1::uuid AND tool = $2 AND key = $3',
      values: [agentId, path, key],
    });
    return stored.rows[0];
  };
  if (isDryRun(input)) {
    // A preview: a stored key answers as the real call would (replay or IDEMPOTENCY_KEY_REUSED); otherwise the
    // handler decides and stages its batch as the real call does, and the batch is not sent.
    const stored = await lookup();
    if (stored) return previewOf(answerStored(ctx, call, { requestHash: stored.request_hash, response: stored.response }), []);
    const batch = new WriteBatch(callEntityId(agentId, path, key, hash));
    const result = await next({ ctx: { db: ctx.services.prisma as unknown as Db, batch, dryRun: true } });
    if (!result.ok) return result;
    const { groupId, balances } = batch.balanceDeltas();
    const deltas: BalanceDeltas = new Map();
    if (groupId) addDeltas(deltas, groupId, balances);
    return previewOf(result, await balanceChanges(ctx.services.prisma as unknown as Db, deltas, 'before'));
  }
  for (let attempt = 1; ; attempt++) {
    const batch = new WriteBatch(callEntityId(agentId, path, key, hash));
    const result = await next({ ctx: { db: ctx.services.prisma as unknown as Db, batch, dryRun: false } });
    if (!result.ok) {
      // Refused on a cached read: decided again on a fresh one (the cache may not know of a new member or handle yet).
      if (batch.forgetCachedReads('refused') && attempt < MAX_BATCH_ATTEMPTS) continue;
      // Refused on the current state — but a call that already succeeded under this key is answered as it was
      // (a retry after the group was archived, say). Looked up only here: on success the write itself finds a stored key.
      const stored = await lookup().catch(() => undefined);
      if (stored) return answerStored(ctx, call, { requestHash: stored.request_hash, response: stored.response });
      return result;
    }
    const response = mode === 'never_replay' ? { never_replayed: true } : result.data;
    let outcome;
    try {
      outcome = await applyBatch(pool, batch, { agent_id: agentId, tool: path, key, request_hash: hash, response }, inboxSummaries);
    } catch (e) {
      if (e instanceof StaleBatchError) {
        batch.forgetCachedReads('stale');
        if (attempt < MAX_BATCH_ATTEMPTS) continue;
        throw new ToolError('TRANSIENT_CONFLICT', 'The group kept changing while this change was being written; nothing was changed.', {
          retryAfter: 1,
        });
      }
      throw e;
    }
    if (outcome.status === 'applied') {
      ctx.call.inbox = outcome.inbox;
      return result;
    }
    return answerStored(ctx, call, { requestHash: outcome.request_hash, response: outcome.response });
  }
});

/** Takes a base argument (`idempotency_key`, `dry_run`) out of the raw arguments once the base's input has parsed it, so the tool's strict input (and the request hash) never see it. */
const stripArg = (name: string) =>
  t.middleware(async ({ getRawInput, next }) => {
    const raw = await getRawInput();
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return next();
    // A copy without `name`, made by rest destructuring rather than `delete`, which would leave the copy a slow
    // dictionary-mode object for the schemas, the request hash and the handler.
    const { [name]: _taken, ...rest } = raw as Record<string, unknown>;
    return next({ getRawInput: async () => rest });
  });

/** Base for read tools (scope svc:read; no side effects; ctx.auth is non-null). */
export const readTool = t.procedure.use(authed).use(readDb);
/** What every keyed write shares: scope svc:write (ctx.auth non-null), the Idempotency-Key header merged, the `idempotency_key` argument declared and parsed (from `idempotencyKey`, text.ts), then taken out of the arguments. */
const keyedWrite = t.procedure
  .use(authed)
  .use(mergeIdempotencyHeader)
  .input(z.object({ idempotency_key: idempotencyKey }))
  .use(stripArg('idempotency_key'));
/**
 * Base for write tools: a keyed write run in one interactive transaction with its idempotency
 * record. The tool's own `.input()` is a strict object without the key.
 */
export const writeTool = keyedWrite.use(writeTx);
/**
 * Base for the hot write tools that decide from one read and write in one round trip (see
 * `batchedWriteTx`): a keyed write whose handler gets `ctx.batch` to fill and `ctx.db` for reads
 * only — it must not write through it.
 */
export const batchedWriteTool = keyedWrite.use(batchedWriteTx);

const previewable = keyedWrite.input(z.object({ dry_run: dryRunArg })).use(stripArg('dry_run'));
/** `writeTool` with the `dry_run` argument (preview.ts): the transaction runs as for real and is rolled back. Add `...previewOutput` to the output. */
export const previewWriteTool = previewable.use(writeTx);
/** `batchedWriteTool` with the `dry_run` argument (preview.ts): the batch is staged and not sent. Add `...previewOutput` to the output. */
export const previewBatchedWriteTool = previewable.use(batchedWriteTx);
/**
 * Base for the one public write (register_agent): no credential, no idempotency key, one
 * transaction. Its metadata says so (auth 'none', idempotency 'none') for the catalogue.
 */
export const publicWriteTool = t.procedure.meta({ auth: 'none', idempotency: 'none' } as ToolMeta).use(writeTx);
