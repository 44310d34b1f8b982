/**
 * The read of a group for a batched write (add_expense, record_payment), optionally from a cache.
 *
 * A hot write reads its group and the group's active members, decides in TypeScript, and sends the batch
 * (kernel/write-batch.ts). Into a busy group most of those reads return what the previous write read: the server keeps
 * them per group in memory (`Services.groupReads`), so such a write sends one statement instead of two. A cached read
 * can be out of date (another instance renamed the group, a member joined or changed their handle), so the write's
 * guard carries the read's fingerprint and the database compares it with the same fingerprint computed from the tables
 * under the group lock (`kitty_group_fingerprint`, migration 20261126120000_write_guard_fingerprint). When they differ
 * nothing is written and the call is decided again on a fresh read; a call refused on a cached read is, too.
 * A cached read has no balances: record_payment's guard then checks the overpayment rule in the database
 * (max_payment), and the payee's payout methods by their MD5 (payout_methods, migration 20261126130000).
 */
import { hash } from 'node:crypto';
import type { Pool } from 'pg';
import type { KeyedCache } from '../kernel/context.ts';
import type { WriteBatch } from '../kernel/write-batch.ts';
import { readGroupForWrite } from './groups.ts';

/** One field of a fingerprint: its length in UTF-8 bytes, ':' and the text; NULL as '~' (kitty_fingerprint_field). */
const field = (v: string | null): string => (v === null ? '~' : `${Buffer.byteLength(v, 'utf8')}:${v}`);

/** What a batched write may decide on of its group without reading balances: the group and its active members' identities. */
export interface GroupIdentities {
  group: {
    id: string;
    name: string;
    currency: string;
    kind: string;
    directKey: string | null;
    memberCount: number;
    createdById: string;
    archivedAt: Date | null;
  };
  /**
   * Active members by handle, in joining order (shared with other calls: read only), with their payout methods as
   * stored (JSON, null when none) and the MD5 of those as text, which a guard that answers with them must send.
   */
  members: ReadonlyMap<
    string,
    { agentId: string; handle: string; displayName: string; payoutMethods: unknown; payoutMethodsMd5: string | null }
  >;
  /** The same members by agent id, as agent references (shared with other calls: read only). */
  refs: ReadonlyMap<string, { id: string; handle: string; displayName: string }>;
  /** SHA-256 (hex) of the fields above that a decision may use (kitty_group_fingerprint computes the same). */
  fingerprint: string;
  /**
   * Balances in minor units by agent id, present only when this call read the group afresh (never from the cache): a
   * decision on balances must otherwise let the guard check them.
   */
  balances?: ReadonlyMap<string, { balanceMinor: bigint; balancePendingMinor: bigint }>;
}

/**
 * The fingerprint of a group as read: its id, name, kind, member count, direct key and creator, then each active
 * member (ordered by agent id) with handle and display name; each field as `field` writes it, SHA-256 in hex.
 * Equal to kitty_group_fingerprint(group id) over the same rows (a test holds the two equal).
 */
export function groupFingerprint(
  group: { id: string; name: string; kind: string; memberCount: number; directKey: string | null; createdById: string },
  members: Iterable<{ agentId: string; handle: string; displayName: string }>,
): string {
  let text =
    field(group.id) +
    field(group.name) +
    field(group.kind) +
    field(String(group.memberCount)) +
    field(group.directKey) +
    field(group.createdById);
  for (const m of [...members].sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0)))
    text += field(m.agentId) + field(m.handle) + field(m.displayName);
  return hash('sha256', text, 'hex');
}

/** What `readGroupForWrite` answered, without balances or the caller's membership, with its fingerprint. */
function identities({ group, members, refs }: Awaited<ReturnType<typeof readGroupForWrite>>): GroupIdentities {
  const ids = new Map(
    [...members].map(([h, m]) => [
      h,
      {
        agentId: m.agentId,
        handle: m.handle,
        displayName: m.displayName,
        payoutMethods: m.payoutMethods,
        payoutMethodsMd5: m.payoutMethodsMd5,
      },
    ]),
  );
  const g = {
    id: group.id,
    name: group.name,
    currency: group.currency,
    kind: group.kind,
    directKey: group.directKey,
    memberCount: group.memberCount,
    createdById: group.createdById,
    archivedAt: group.archivedAt,
  };
  return { group: g, members: ids, refs, fingerprint: groupFingerprint(g, ids.values()) };
}

/**
 * Group `groupId` and its active members for a write by `agentId`: from `cache` when it holds the group and `agentId`
 * is an active member there (a refusal or a failed guard then decides again on a fresh read), else read in one
 * statement on the raw pool and kept in `cache` (dropped again if the guard fails). The write must send `fingerprint`
 * in its guard. Only a fresh read answers the members' balances (`balances`, minor units): a write that decides on
 * them without one lets its guard check them. Errors (on a fresh read): NOT_FOUND (no such group), FORBIDDEN (caller
 * not an active member).
 */
export async function readGroupIdentities(
  pool: Pool,
  groupId: string,
  agentId: string,
  batch: WriteBatch,
  cache: KeyedCache<object> | undefined,
): Promise<GroupIdentities> {
  const cached = cache?.get(groupId) as GroupIdentities | undefined;
  if (cached?.refs.has(agentId)) {
    batch.decidedOnCachedRead(() => cache!.delete(groupId), true);
    return cached;
  }
  const fresh = await readGroupForWrite(pool, groupId, agentId);
  const read = identities(fresh);
  if (cache) {
    cache.set(groupId, read);
    // Changed before the write (the guard fails): the next attempt must not take this read from the cache.
    batch.decidedOnCachedRead(() => cache.delete(groupId), false);
  }
  const balances = new Map(
    [...fresh.members.values()].map((m) => [m.agentId, { balanceMinor: m.balanceMinor, balancePendingMinor: m.balancePendingMinor }]),
  );
  return { ...read, balances };
}

/** The weight of a cached read for a size-bounded cache (`Services.groupReads`): 1 plus its active members. */
export function groupReadWeight(read: object): number {
  return 1 + ((read as Partial<GroupIdentities>).refs?.size ?? 0);
}
