/**
 * One round trip per hot write. A tool decides in TypeScript from what it read (one statement, no lock, or a cached
 * read: access/group-reads.ts), collects the rows to write in a `WriteBatch`, and the write middleware (trpc.ts, tools
 * with `batched: true`) sends the whole batch, with the idempotency record and the stored response, to the database
 * function `kitty_apply_batch` (migration 20261123050000_write_batch). It first re-checks, under the group lock, what
 * the decision was based on (the guard), then writes sets in the statement's own transaction. When the guard fails it
 * refuses with SQLSTATE KB001 and nothing is written: the middleware reads and decides again (optimistic concurrency).
 * The rules stay in TypeScript; the guard repeats one in SQL: the overpayment rule (max_payment), checked on the
 * balances as they are when the payment is written (a cached read has none). Lock order is the one every write follows (kernel/notify.ts): idempotency
 * key, group row, payment row, membership and pair rows in id order, agent rows last in id order.
 */
import type { Wakes } from './wakes.ts';
import type { InboxChange } from './caller-summary.ts';
import { hash as sha, randomUUID } from 'node:crypto';
import type { Db } from './context.ts';
import { inboxRow, type InboxEvent } from './notify.ts';
import { activityRow, type ActivityEntry } from './activity.ts';
import { eventDoc, type EventSpec } from './events.ts';
import { noteBalanceDeltas } from './balance-changes.ts';

/** What a batched write's decision was based on; re-checked by the database under the group lock. */
export interface BatchGuard {
  /** 'share' for writes that only add to balances (concurrent ones proceed), 'update' to serialise with every writer of the group. */
  lock: 'share' | 'update';
  /**
   * The group's version as read (`groups.read_version`, bigint as text; access/group-reads.ts): bumped whenever its
   * name, kind, member count, direct key, creator or active members with their handles and display names change.
   */
  read_version?: string;
  /** Ids that must still be active members. */
  active?: string[];
  /** The overpayment rule: amount_minor must not exceed what the payer owes and the payee is owed now (pending counted). */
  max_payment?: { payer_id: string; payee_id: string; amount_minor: string };
  /** MD5 of agents' payout methods as stored text (null: none), for an answer that shows them (pay_with). */
  payout_methods?: Array<{ agent_id: string; md5: string | null }>;
  /** A payment that must still be in `from_status`; it is moved to `to_status` at `at` (ISO 8601). */
  payment?: { id: string; from_status: string; to_status: string; at: string };
}

type Row = Record<string, unknown>;
type Table = 'groups' | 'memberships' | 'recurrences' | 'expenses' | 'expense_shares' | 'payments' | 'activities' | 'inbox_items';

/** The idempotency record a batch stores with its effect (the response is the tool's result). */
export interface BatchIdempotency {
  agent_id: string;
  tool: string;
  key: string;
  request_hash: string;
  response: unknown;
}

/** Minor-unit changes by agent id and by canonical pair "a|b" (a < b, positive = b owes a). */
interface BalanceChanges {
  readonly balances: ReadonlyMap<string, bigint>;
  readonly pairs: ReadonlyMap<string, bigint>;
}

/** Rows and changes collected by a batched write tool; applied by `applyBatch` in one round trip. */
export class WriteBatch {
  /** The id of the row this call creates, fixed by the call (see `callEntityId`) so a preview names the same id, and rounds the same way, as the real call. */
  readonly entityId: string;
  private groupId: string | undefined;
  private guardSpec: BatchGuard | undefined;
  private readonly rows: Partial<Record<Table, Row[]>> = {};
  private readonly resolves: Array<{ entity_type: string; entity_id: string; resolution: string; agent_id?: string }> = [];
  private readonly pendingChanges = new Map<string, { delta: bigint; count: number }>();
  private readonly balanceChanges = new Map<string, bigint>();
  private readonly pairChanges = new Map<string, bigint>();
  private readonly counters = new Map<string, { unread: number; requires_action: number }>();
  private readonly events: EventSpec[] = [];
  private readonly cachedReads: Array<{ forget: () => void; fromCache: boolean }> = [];
  private readonly appliedHooks: Array<() => void> = [];

  constructor(entityId: string = randomUUID()) {
    this.entityId = entityId;
  }

  /** The group whose balances this batch changes (one group per batch). */
  forGroup(groupId: string): this {
    if (this.groupId !== undefined && this.groupId !== groupId) throw new Error('a write batch changes one group');
    this.groupId = groupId;
    return this;
  }

  /** The group this write is about, and what must still hold when it is written. */
  guard(groupId: string, guard: BatchGuard): this {
    this.guardSpec = guard;
    return this.forGroup(groupId);
  }

  /** Decided on a read kept in a cache (`fromCache`: taken from it, else just stored in it) that `forget` drops. */
  decidedOnCachedRead(forget: () => void, fromCache: boolean): this {
    this.cachedReads.push({ forget, fromCache });
    return this;
  }

  /** Drops the cached reads decided on: all when the guard failed ('stale'), those taken from the cache when the call was refused; true if any was. */
  forgetCachedReads(reason: 'stale' | 'refused'): boolean {
    const dropped = this.cachedReads.filter((r) => reason === 'stale' || r.fromCache);
    return dropped.map((r) => r.forget()).length > 0;
  }

  /**
   * Runs `fn` once `applyBatch` has committed this batch: not when it was refused, stale or answered as a replay, nor
   * for `applyBatchIn` (the caller's transaction commits it later).
   */
  afterApplied(fn: () => void): this {
    this.appliedHooks.push(fn);
    return this;
  }

  /** Called by applyBatch once the batch committed: runs the `afterApplied` callbacks. */
  applied(): void {
    for (const fn of this.appliedHooks) fn();
  }

  /**
   * A row to insert; keys are column names, money as decimal strings of minor units, times as ISO 8601. Columns that
   * are null (or undefined) are left out of the document: the database reads a missing key as NULL (jsonb_to_recordset),
   * and a shorter document costs less to serialise, send and parse.
   */
  insert(table: Table, row: Row): this {
    const kept: Row = {};
    for (const column in row) if (row[column] != null) kept[column] = row[column];
    (this.rows[table] ??= []).push(kept);
    return this;
  }

  /** Appends an activity-log entry (the group's history). */
  activity(e: ActivityEntry): this {
    return this.insert('activities', activityRow(e));
  }

  /** Sends an inbox item, counted on the recipient's counters. */
  notify(e: InboxEvent): this {
    this.insert('inbox_items', { id: randomUUID(), ...inboxRow(e) });
    this.count(e.agentId, 1, e.requiresAction ? 1 : 0);
    return this;
  }

  /** The same event to several agents, skipping `except` (usually the actor). */
  notifyAll(agentIds: readonly string[], except: string | undefined, e: Omit<InboxEvent, 'agentId'>): this {
    for (const agentId of [...new Set(agentIds)].sort()) if (agentId !== except) this.notify({ ...e, agentId });
    return this;
  }

  /** Appends an event (events.ts), linked per recipient to this batch's inbox items about `e.link`. */
  event(e: EventSpec): this {
    if (e.recipients.length) this.events.push(e);
    return this;
  }

  /**
   * Resolves the open inbox items about an entity: they stop requiring action, are marked read and say what
   * happened (`resolution`, e.g. "confirmed by @ana"); the counters follow in the database. With `holderId` only that
   * agent's items are resolved (the one agent who can hold one, e.g. a pending payment's payee), so the batch is known
   * to leave every other agent's inbox as it was (`inboxChangeOf`); without it, every agent's.
   */
  resolve(entityType: string, entityId: string, resolution: string, holderId?: string): this {
    this.resolves.push({ entity_type: entityType, entity_id: entityId, resolution, ...(holderId ? { agent_id: holderId } : {}) });
    return this;
  }

  /** A pending payment payer → payee of `amount` minor units added (sign 1) or released (sign −1). */
  pending(payerId: string, payeeId: string, amount: bigint, sign: 1n | -1n): this {
    for (const [id, delta] of [
      [payerId, sign * amount],
      [payeeId, -sign * amount],
    ] as const) {
      const p = this.pendingChanges.get(id) ?? { delta: 0n, count: 0 };
      p.delta += delta;
      p.count += Number(sign);
      this.pendingChanges.set(id, p);
    }
    return this;
  }

  /** Balance and pair-debt changes (the ledger's LedgerDelta: balances by agent, pairs "a|b" with a < b, positive = b owes a). */
  ledger(delta: BalanceChanges): this {
    for (const [id, v] of delta.balances) this.balanceChanges.set(id, (this.balanceChanges.get(id) ?? 0n) + v);
    for (const [k, v] of delta.pairs) this.pairChanges.set(k, (this.pairChanges.get(k) ?? 0n) + v);
    return this;
  }

  /** The group and the balance changes (agent id → minor units) this batch would make. */
  balanceDeltas(): { groupId: string | undefined; balances: ReadonlyMap<string, bigint> } {
    return { groupId: this.groupId, balances: this.balanceChanges };
  }

  private count(agentId: string, unread: number, requiresAction: number): void {
    const c = this.counters.get(agentId) ?? { unread: 0, requires_action: 0 };
    c.unread += unread;
    c.requires_action += requiresAction;
    this.counters.set(agentId, c);
  }

  /**
   * Whom this batch's commit should wake (kernel/wakes.ts): the event recipients' feeds, and the inboxes of the
   * agents whose counters it changes; when it resolves items, also of each resolve's holder, or for a resolve that
   * names none, of the event recipients and `actorId`. No other agent's cached summary is dropped (`inboxChangeOf` is
   * 'none' for them): a payer's cancel_payment wakes the payee's inbox, not the payer's.
   */
  wakes(actorId: string | undefined): Wakes {
    const events = new Set<string>();
    for (const e of this.events) for (const r of e.recipients) events.add(r);
    const inbox = new Set<string>(this.counters.keys());
    for (const r of this.resolves) {
      if (r.agent_id !== undefined) {
        inbox.add(r.agent_id);
        continue;
      }
      for (const a of events) inbox.add(a);
      if (actorId) inbox.add(actorId);
    }
    return { events, inbox };
  }

  /**
   * How this batch can change `agentId`'s inbox summary (kernel/caller-summary.ts): 'other' when it counts an item of
   * theirs or a resolve names no holder; else 'resolves' when a resolve names them, 'none' when none does.
   */
  inboxChangeOf(agentId: string): InboxChange {
    if (this.counters.has(agentId) || this.resolves.some((r) => r.agent_id === undefined)) return 'other';
    return this.resolves.some((r) => r.agent_id === agentId) ? 'resolves' : 'none';
  }

  /**
   * How many rows this batch writes or changes: inserted rows, member rows (pending and balance changes), pair rows,
   * agent rows (counters), resolved entities, and each event with its recipients. Decides whether it is combined
   * with other writes (kernel/group-commit.ts).
   */
  rowCount(): number {
    let n = 0;
    for (const rows of Object.values(this.rows)) n += rows.length;
    const members = new Set([...this.pendingChanges.keys(), ...this.balanceChanges.keys()]);
    n += members.size + this.pairChanges.size + this.counters.size + this.resolves.length;
    for (const e of this.events) n += 1 + e.recipients.length;
    return n;
  }

  /** The document kitty_apply_batch takes (see its migration for the keys). */
  toDocument(idempotency?: BatchIdempotency): Record<string, unknown> {
    const byId = <V>(m: Map<string, V>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const doc: Record<string, unknown> = {};
    if (idempotency) doc.idempotency = idempotency;
    if (this.groupId) doc.group_id = this.groupId;
    if (this.guardSpec) doc.guard = this.guardSpec;
    if (Object.keys(this.rows).length) doc.rows = this.rows;
    if (this.resolves.length) doc.resolve = this.resolves;
    const pending = byId(this.pendingChanges).filter(([, p]) => p.delta !== 0n || p.count !== 0);
    if (pending.length) doc.pending = pending.map(([agent_id, p]) => ({ agent_id, delta: p.delta.toString(), count: p.count }));
    const balances = byId(this.balanceChanges).filter(([, v]) => v !== 0n);
    if (balances.length) doc.balances = balances.map(([agent_id, v]) => ({ agent_id, delta: v.toString() }));
    const pairs = byId(this.pairChanges).filter(([, v]) => v !== 0n);
    if (pairs.length)
      doc.pairs = pairs.map(([k, v]) => {
        const [a, b] = k.split('|');
        return { a, b, delta: v.toString() };
      });
    const counters = byId(this.counters).filter(([, c]) => c.unread !== 0 || c.requires_action !== 0);
    if (counters.length) doc.counters = counters.map(([agent_id, c]) => ({ agent_id, ...c }));
    if (this.events.length) doc.events = this.events.map((e) => eventDoc(e, this.linkedItems(e)));
    return doc;
  }

  /** The inbox items of this batch about the event's linked entity, by recipient. */
  private linkedItems(e: EventSpec): Map<string, string> | undefined {
    if (!e.link) return undefined;
    const items = new Map<string, string>();
    for (const r of this.rows.inbox_items ?? [])
      if (r.entity_type === e.link.entityType && r.entity_id === e.link.entityId && !items.has(r.agent_id as string))
        items.set(r.agent_id as string, r.id as string);
    return items;
  }
}

/**
 * The id of the row a keyed call creates: a UUID (version 8) from SHA-256 of the agent, the tool, the
 * idempotency key and the request hash. That call creates at most one row (a second one replays), and
 * a preview with the same key and arguments shows the id, and the rounding seeded by it, of the real call.
 */
export function callEntityId(agentId: string, tool: string, key: string, requestHash: string): string {
  const h = sha('sha256', `${agentId}\u0000${tool}\u0000${key}\u0000${requestHash}`, 'buffer');
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * Writes `batch` inside the caller's interactive transaction (one statement through Prisma),
 * for slow-path writes that hold their locks already. No idempotency record, no guard: the
 * caller's transaction provides both. Inbox counters in the batch are applied at once.
 */
export async function applyBatchIn(db: Db, batch: WriteBatch): Promise<void> {
  const { groupId, balances } = batch.balanceDeltas();
  if (groupId) noteBalanceDeltas(db, groupId, balances);
  const doc = JSON.stringify(batch.toDocument());
  await db.$queryRaw`SELECT kitty_apply_batch(${doc}::jsonb)`;
}
