/**
 * Direct ledgers (open_direct_group): the get-or-create of the `direct` group of a pair of agents in
 * one currency, with the consent rule — nobody can be put in debt in a ledger they have not agreed
 * to share — enforced by an acceptance request (a single-use invite targeted at the other agent).
 */
import { ToolError } from '../../kernel/errors.ts';
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { toGroupDetail, GROUP_DETAIL_INCLUDE } from '../../access/groups.ts';
import { toInvite, effectiveStatus, admitMember, insertInvite, INVITE_INCLUDE } from '../invites/invites.ts';
import { requireCurrency } from '../../kernel/money.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent } from '../../kernel/events.ts';
import { notify, resolveAction } from '../../kernel/notify.ts';
import { agentByHandle, assertNotSelf, canReach, hasBlocked, isContact, sharesGroup, pairKey } from '../../access/reachability.ts';

/** The unique key of the live direct ledger of a pair in a currency (schema: groups.direct_key). */
function directGroupKey(a: string, b: string, currency: string): string {
  return `${pairKey(a, b)}:${currency}`;
}

/** How long the other agent has to accept a direct ledger (the longest invite: 30 days). */
const ACCEPT_WITHIN_MS = 30 * 86_400_000;

/**
 * Get-or-create the live direct ledger between `actor` and the agent `input.handle` in
 * `input.currency` (ISO 4217), serialised per pair and currency by an advisory lock. An archived ledger
 * frees its key for a fresh one. New ledger: both agents are admins at once if the other agent has
 * the caller among their contacts; otherwise the caller alone, and the other agent gets an
 * acceptance request (invite valid 30 days, inbox item requiring action). Existing ledger: the other
 * agent calling is acceptance; the other agent having added the caller as a contact since is
 * acceptance; otherwise an expired request is sent again (a declined one is not).
 * Returns { group (wire detail), created, accepted (two members), acceptance_invite (wire invite
 * while not accepted, else null), other: { id, handle } }.
 * Errors: NOT_FOUND (handle), VALIDATION_ERROR (yourself; unknown currency), NOT_A_CONTACT (neither
 * contact nor shared group), INVALID_STATE (the caller blocked them), FORBIDDEN (they do not accept
 * a ledger with the caller).
 */
export async function openDirectLedger(
  db: Db,
  actor: Actor,
  input: { handle: string; currency: string },
  services: Pick<Services, 'now' | 'config'>,
) {
  const op: Opening = { db, actor, services };
  const { handle: otherHandle, currency } = input;
  requireCurrency(currency);
  const me = op.actor.agentId;
  const other = await agentByHandle(op.db, otherHandle);
  assertNotSelf(me, other.id, 'handle', 'open a direct ledger with');
  const key = directGroupKey(me, other.id, currency);
  // Serialise get-or-create of this pair+currency (both agents may open it at once).
  await op.db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`direct:${key}`}, 0))`;
  const now = op.services.now();

  let existing = await op.db.group.findUnique({ where: { directKey: key }, include: GROUP_DETAIL_INCLUDE });
  if (existing?.archivedAt) {
    // An archived direct ledger keeps its history but frees the key for a fresh one.
    await op.db.group.update({ where: { id: existing.id }, data: { directKey: `${key}:archived:${existing.id}` } });
    existing = null;
  }
  if (existing) {
    // Lock and re-read: join_group with the request's code may have admitted the other agent meanwhile.
    // Same order as join_group (invite rows, then the group row), so the two cannot deadlock.
    await op.db.$executeRaw`SELECT 1 FROM invites WHERE group_id = ${existing.id}::uuid ORDER BY id FOR NO KEY UPDATE`;
    await op.db.$executeRaw`SELECT 1 FROM groups WHERE id = ${existing.id}::uuid FOR NO KEY UPDATE`;
    existing = await op.db.group.findUniqueOrThrow({ where: { id: existing.id }, include: GROUP_DETAIL_INCLUDE });
    const mine = await op.db.membership.findUnique({ where: { groupId_agentId: { groupId: existing.id, agentId: me } } });
    if (mine && existing.memberCount >= 2) return answer(op, other, existing.id, false, null);
    if (!mine) {
      // The other agent opened it and waits for me: calling this is my acceptance.
      await assertMayOpen(op, other, { needsAcquaintance: false });
      const request = await latestRequest(op, existing.id, me);
      const active = request && effectiveStatus(request, now) === 'active' ? request.id : null;
      await admitMember(op.db, {
        group: existing,
        agentId: me,
        role: 'admin',
        rejoining: false,
        inviteId: active,
        now,
        text: `@${op.actor.handle} accepted the direct ledger "${existing.name}"`,
      });
      await acceptedEvent(op, existing.id, other.id);
      if (!active && request) await resolveOpenItems(op, request.id, `accepted by @${op.actor.handle}`);
      return answer(op, other, existing.id, false, null);
    }
    // I opened it and it still waits for the other agent.
    if (await isContact(op.db, other.id, me)) {
      // They have since added me as a contact: that is acceptance.
      const request = await latestRequest(op, existing.id, other.id);
      const active = request && effectiveStatus(request, now) === 'active' ? request.id : null;
      await admitMember(op.db, { group: existing, agentId: other.id, role: 'admin', rejoining: false, inviteId: active, now });
      await acceptedEvent(op, existing.id, other.id);
      if (!active && request) await resolveOpenItems(op, request.id, `ledger opened by @${op.actor.handle}`, other.id);
      return answer(op, other, existing.id, false, null);
    }
    let request = await latestRequest(op, existing.id, other.id);
    const status = request ? effectiveStatus(request, now) : null;
    if (status !== 'active' && status !== 'declined') request = await sendRequest(op, existing, other, currency);
    return answer(op, other, existing.id, false, request);
  }

  await assertMayOpen(op, other, { needsAcquaintance: true });
  const accepted = await isContact(op.db, other.id, me);
  const me_ = { id: me, handle: op.actor.handle };
  const [first, second] = [me_, other].sort((a, b) => a.handle.localeCompare(b.handle));
  const group = await op.db.group.create({
    data: {
      name: `@${first!.handle} & @${second!.handle} (${currency})`,
      currency: currency,
      kind: 'direct',
      directKey: key,
      createdById: me,
      createdAt: now,
      memberCount: accepted ? 2 : 1,
      memberships: {
        create: [{ agentId: me, role: 'admin', joinedAt: now }, ...(accepted ? [{ agentId: other.id, role: 'admin', joinedAt: now }] : [])],
      },
    },
    include: GROUP_DETAIL_INCLUDE,
  });
  await appendActivity(op.db, {
    groupId: group.id,
    actorId: me,
    action: 'group.created',
    entityType: 'group',
    entityId: group.id,
    after: {
      name: group.name,
      currency: group.currency,
      kind: 'direct',
      members: accepted ? [op.actor.handle, other.handle] : [op.actor.handle],
    },
  });
  if (accepted) {
    await notify(op.db, {
      agentId: other.id,
      kind: 'member_joined',
      text: `@${op.actor.handle} opened a direct ${currency} ledger with you`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    });
    await acceptedEvent(op, group.id, other.id);
    return answer(op, other, group.id, true, null);
  }
  const request = await sendRequest(op, group, other, currency);
  return answer(op, other, group.id, true, request);
}

type Other = { id: string; handle: string };
/** What the steps of opening a ledger share: the database, who opens it, the clock and the base URL. */
type Opening = { db: Db; actor: Actor; services: Pick<Services, 'now' | 'config'> };

/** Blocks and the acquaintance rule (contact or shared group) for the caller opening or accepting a ledger with `other`. */
async function assertMayOpen(op: Opening, other: Other, opts: { needsAcquaintance: boolean }): Promise<void> {
  const me = op.actor.agentId;
  if (await hasBlocked(op.db, me, other.id)) {
    throw new ToolError('INVALID_STATE', `You have blocked @${other.handle}.`, {
      suggestedAction: `Call unblock_agent with handle "${other.handle}" first.`,
    });
  }
  if (opts.needsAcquaintance && !(await isContact(op.db, me, other.id)) && !(await sharesGroup(op.db, me, other.id))) {
    throw new ToolError('NOT_A_CONTACT', `@${other.handle} is neither one of your contacts nor in a group with you.`, {
      details: { handle: other.handle },
      suggestedAction: `Call add_contact with handle "${other.handle}" first.`,
    });
  }
  if (!(await canReach(op.db, me, other.id))) {
    throw new ToolError('FORBIDDEN', `@${other.handle} does not accept a direct ledger with you.`);
  }
}

/** The newest acceptance request of a direct ledger addressed to `targetId`, or null. */
async function latestRequest(op: Opening, groupId: string, targetId: string) {
  return op.db.invite.findFirst({ where: { groupId, targetId }, orderBy: { createdAt: 'desc' }, include: INVITE_INCLUDE });
}

/** Clears open "requires action" items of an acceptance request that was not used (expired, revoked, declined). */
async function resolveOpenItems(op: Opening, inviteId: string, resolution: string, agentId = op.actor.agentId): Promise<void> {
  await resolveAction(op.db, { entityType: 'invite', entityId: inviteId, agentId, resolution });
}

/** Sends the other agent a request to accept the ledger: a single-use invite targeted at them and an inbox item that requires action. */
async function sendRequest(op: Opening, group: { id: string; name: string }, other: Other, currency: string) {
  const now = op.services.now();
  const invite = await insertInvite(op.db, {
    groupId: group.id,
    createdById: op.actor.agentId,
    targetId: other.id,
    note: `Accept to share a direct ${currency} ledger with @${op.actor.handle}`,
    expiresAt: new Date(now.getTime() + ACCEPT_WITHIN_MS),
    maxUses: 1,
    createdAt: now,
  });
  await appendActivity(op.db, {
    groupId: group.id,
    actorId: op.actor.agentId,
    action: 'invite.created',
    entityType: 'invite',
    entityId: invite.id,
    after: { target: other.handle, max_uses: 1, expires_at: invite.expiresAt.toISOString() },
  });
  await notify(op.db, {
    agentId: other.id,
    kind: 'invite_received',
    text: `@${op.actor.handle} asks to share a direct ${currency} ledger: accept with open_direct_group handle "${op.actor.handle}"`,
    requiresAction: true,
    entityType: 'invite',
    entityId: invite.id,
    groupId: group.id,
  });
  await appendEvent(op.db, {
    type: 'direct_ledger.requested',
    groupId: group.id,
    actorId: op.actor.agentId,
    recipients: [other.id, op.actor.agentId],
    data: { group_id: group.id, invite_id: invite.id, currency, expires_at: invite.expiresAt.toISOString() },
    link: { entityType: 'invite', entityId: invite.id },
  });
  return invite;
}

/** direct_ledger.accepted for both agents of the ledger. */
async function acceptedEvent(op: Opening, groupId: string, otherId: string): Promise<void> {
  await appendEvent(op.db, {
    type: 'direct_ledger.accepted',
    groupId,
    actorId: op.actor.agentId,
    recipients: [op.actor.agentId, otherId],
    data: { group_id: groupId },
    link: { entityType: 'group', entityId: groupId },
  });
}

async function answer(op: Opening, other: Other, groupId: string, created: boolean, request: Awaited<ReturnType<typeof latestRequest>>) {
  const group = await op.db.group.findUniqueOrThrow({ where: { id: groupId }, include: GROUP_DETAIL_INCLUDE });
  const m = await op.db.membership.findUnique({ where: { groupId_agentId: { groupId, agentId: op.actor.agentId } } });
  const accepted = group.memberCount >= 2;
  const now = op.services.now();
  return {
    group: toGroupDetail(group, m),
    created,
    accepted,
    acceptance_invite: !accepted && request ? toInvite(request, op.services.config.baseUrl, now) : null,
    other,
  };
}
