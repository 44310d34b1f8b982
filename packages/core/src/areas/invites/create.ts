/**
 * Creating an invite (create_invite): a code for a group, optionally targeted at one of the
 * caller's contacts, with its activity and the target's inbox item, in the caller's transaction.
 */
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { requireMembership, assertNotArchived } from '../../access/groups.ts';
import { toInvite, insertInvite } from './invites.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent } from '../../kernel/events.ts';
import { notify } from '../../kernel/notify.ts';
import { canReach } from '../../access/reachability.ts';
import { durationSeconds } from '../../kernel/text.ts';

/** expires_in: 1-9999 minutes/hours/days, at most 30 days (interface-spec "create_invite"). */
const MAX_INVITE_SECONDS = 30 * 86_400;

/** An invite request as validated on the wire: expires_in like "30m", "12h", "7d" (default 7d); max_uses default 1; note 0-200 characters. */
export interface InviteRequest {
  group_id: string;
  target_handle?: string | undefined;
  expires_in?: string | undefined;
  max_uses?: number | undefined;
  note?: string | undefined;
}

/**
 * Creates an invite to `req.group_id` from `actor`. A targeted invite needs the target
 * among the caller's contacts and reachable (not blocking the caller); the target gets an inbox item
 * that requires action. Returns the group, the invite (wire shape, with its join URL) and `message`,
 * a ready-to-paste text for the invitee naming the code, the URL and the expiry.
 * Errors: VALIDATION_ERROR (expires_in over 30d; inviting yourself), NOT_FOUND (group; target
 * handle), FORBIDDEN (not a member; the target does not accept invites from the caller),
 * GROUP_ARCHIVED, INVALID_STATE (a direct ledger takes no invites), NOT_A_CONTACT.
 */
export async function createInvite(db: Db, actor: Actor, req: InviteRequest, services: Pick<Services, 'now' | 'config'>) {
  const agentId = actor.agentId;
  const now = services.now();
  const expiresIn = req.expires_in ?? '7d';
  const seconds = durationSeconds(expiresIn);
  if (seconds > MAX_INVITE_SECONDS) throw validationError('expires_in', 'must be at most 30d', 'too_big');
  const { group } = await requireMembership(db, req.group_id, agentId);
  assertNotArchived(group);
  if (group.kind === 'direct') throw new ToolError('INVALID_STATE', 'A direct ledger has exactly two members and takes no invites.');

  let targetId: string | null = null;
  if (req.target_handle) {
    const target = await db.agent.findUnique({ where: { handle: req.target_handle }, select: { id: true } });
    if (!target)
      throw new ToolError('NOT_FOUND', `No agent has the handle "${req.target_handle}".`, {
        details: { target_handle: req.target_handle },
      });
    if (target.id === agentId) throw validationError('target_handle', 'you cannot invite yourself', 'self');
    const contact = await db.contact.findUnique({ where: { ownerId_contactId: { ownerId: agentId, contactId: target.id } } });
    if (!contact) {
      throw new ToolError('NOT_A_CONTACT', `@${req.target_handle} is not one of your contacts; a targeted invite needs a contact.`, {
        details: { target_handle: req.target_handle },
        suggestedAction: `Call add_contact with handle "${req.target_handle}", or create an untargeted invite.`,
      });
    }
    if (!(await canReach(db, agentId, target.id))) {
      throw new ToolError('FORBIDDEN', `@${req.target_handle} does not accept invites from you.`);
    }
    targetId = target.id;
  }

  const invite = await insertInvite(db, {
    groupId: group.id,
    createdById: agentId,
    targetId,
    note: req.note || null,
    expiresAt: new Date(now.getTime() + seconds * 1000),
    maxUses: req.max_uses ?? 1,
    createdAt: now,
  });
  const out = toInvite(invite, services.config.baseUrl, now);
  await appendActivity(db, {
    groupId: group.id,
    actorId: agentId,
    action: 'invite.created',
    entityType: 'invite',
    entityId: invite.id,
    after: { target: out.target?.handle ?? null, max_uses: out.max_uses, expires_at: out.expires_at },
  });
  if (targetId) {
    await notify(db, {
      agentId: targetId,
      kind: 'invite_received',
      text: `@${actor.handle} invited you to "${group.name}" (code ${invite.code})`,
      requiresAction: true,
      entityType: 'invite',
      entityId: invite.id,
      groupId: group.id,
    });
    await appendEvent(db, {
      type: 'invite.received',
      groupId: group.id,
      actorId: agentId,
      recipients: [targetId],
      data: { invite_id: invite.id, group_id: group.id, group_name: group.name, code: invite.code, expires_at: out.expires_at },
      link: { entityType: 'invite', entityId: invite.id },
    });
  }
  const message =
    `${actor.displayName} (@${actor.handle}) invites you to the shared-expense group "${group.name}" (${group.currency}) on Kitty.` +
    (req.note ? ` Note: ${req.note.trim()}${/[.!?…)"']$/u.test(req.note.trim()) ? '' : '.'}` : '') +
    ` To join, call the Kitty tool join_group with code "${invite.code}" (or open ${out.url}).` +
    ` New to Kitty? register_agent with invite_code "${invite.code}" registers and joins in one call.` +
    ` Expires ${out.expires_at}.`;
  return { group, invite: out, message };
}
