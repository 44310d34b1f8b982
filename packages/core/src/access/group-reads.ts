/**
 * The read of a group for a batched write (add_expense, record_payment, confirm/reject/cancel_payment), optionally from
 * a cache.
 *
 * A hot write reads its group and the group's active members, decides in TypeScript, and sends the batch
 * (kernel/write-batch.ts). Into a busy group most of those reads return what the previous write read: the server keeps
 * them per group in memory (`Services.groupReads`), so such a write sends one statement instead of two. A cached read
 * can be out of date (another instance renamed the group, a member joined or changed their display name), so the
 * write's guard carries the group's version as read (`groups.read_version`, which triggers bump whenever something a
 * decision may use changes: migration 20261126180000_group_read_version) and the database compares it on the group
 * row it locks. When they differ nothing is written and the call is decided again on a fresh read; a call refused on a
 * cached read is, too.
 * A cached read has no balances: record_payment's guard then checks the overpayment rule in the database
 * (max_payment), and the payee's payout methods by their MD5 (payout_methods, migration 20261126130000).
 */
import type { Pool } from 'pg';
import type { KeyedCache } from '../kernel/context.ts';
import type { WriteBatch } from '../kernel/write-batch.ts';
import { readGroupForWrite } from './groups.ts';

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
  /**
   * The group's version when this was read (`groups.read_version`, a bigint as text): bumped by triggers whenever the
   * fields above that a decision may use change. A write decided on this read sends it in its guard (`read_version`).
   */
  readVersion: string;
  /**
   * Balances in minor units by agent id, present only when this call read the group afresh (never from the cache): a
   * decision on balances must otherwise let the guard check them.
   */
  balances?: ReadonlyMap<string, { balanceMinor: bigint; balancePendingMinor: bigint }>;
}

/** What `readGroupForWrite` answered, without balances or the caller's membership. */
function identities({ group, members, refs, readVersion }: Awaited<ReturnType<typeof readGroupForWrite>>): GroupIdentities {
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
  return { group: g, members: ids, refs, readVersion };
}

/**
 * Group `groupId` and its active members for a write by `agentId`: from `cache` when it holds the group and `agentId`
 * is an active member there (a refusal or a failed guard then decides again on a fresh read), else read in one
 * statement on the raw pool and kept in `cache` (dropped again if the guard fails). The write must send `readVersion`
 * in its guard (`read_version`). Only a fresh read answers the members' balances (`balances`, minor units): a write that decides on
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
