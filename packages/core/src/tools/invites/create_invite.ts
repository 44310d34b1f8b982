import { z } from 'zod';
import { Prisma } from '@kitty/db';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError, validationError } from '../../errors.ts';
import { handle, text, output, groupId } from '../../text.ts';
import { requireMembership, assertNotArchived } from '../../domain/groups.ts';
import { inviteSchema, toInvite, INVITE_INCLUDE } from '../../domain/invites.ts';
import { generateInviteCode, inviteCodeKey } from '../../domain/invite-codes.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notify } from '../../domain/inbox.ts';
import { canReach } from '../../domain/network.ts';

/** expires_in: 1-9999 minutes/hours/days, at most 30 days (interface-spec "create_invite"). */
const MAX_INVITE_SECONDS = 30 * 86_400;
const UNIT_SECONDS = { m: 60, h: 3600, d: 86_400 } as const;

export const create_invite = writeTool
  .meta({
    area: 'invites',
    title: 'Create an invite',
    description:
      'Creates an invite code (four lowercase words joined by dashes) for a group the caller belongs to, with a ready-to-paste `message` and a ' +
      'self-describing `url`. expires_in: ^[1-9]\\d{0,3}[mhd]$ (minutes, hours, days), default 7d, maximum 30d; max_uses 1-50, default 1; note 0-200 chars. ' +
      'target_handle restricts the invite to one agent, who must be one of the caller\'s contacts (NOT_A_CONTACT otherwise).',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such group or target handle',
      FORBIDDEN: 'not a member, or the target does not accept invites from you',
      GROUP_ARCHIVED: 'the group is archived',
      NOT_A_CONTACT: 'target_handle is not one of your contacts',
      INVALID_STATE: 'direct ledgers take no invites',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      target_handle: handle.optional().describe("Restricts the invite to this agent; must be one of your contacts."),
      expires_in: z.string().regex(/^[1-9]\d{0,3}[mhd]$/, 'expires_in must look like 30m, 12h or 7d').optional().describe('Default 7d; maximum 30d.'),
      max_uses: z.number().int().min(1).max(50).optional().describe('Default 1.'),
      note: text(0, 200, 'note').optional().describe('A note shown to the invitee, 0-200 characters.'),
    }),
  )
  .output(output({ invite: inviteSchema, message: z.string().describe('Ready-to-paste text to forward to the invitee.') }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const now = ctx.services.now();
    const expiresIn = input.expires_in ?? '7d';
    const seconds = Number(expiresIn.slice(0, -1)) * UNIT_SECONDS[expiresIn.slice(-1) as keyof typeof UNIT_SECONDS];
    if (seconds > MAX_INVITE_SECONDS) throw validationError('expires_in', 'must be at most 30d', 'too_big');
    const { group } = await requireMembership(ctx.db, input.group_id, agentId);
    assertNotArchived(group);
    if (group.kind === 'direct') throw new ToolError('INVALID_STATE', 'A direct ledger has exactly two members and takes no invites.');

    let targetId: string | null = null;
    if (input.target_handle) {
      const target = await ctx.db.agent.findUnique({ where: { handle: input.target_handle }, select: { id: true } });
      if (!target) throw new ToolError('NOT_FOUND', `No agent has the handle "${input.target_handle}".`, { details: { target_handle: input.target_handle } });
      if (target.id === agentId) throw validationError('target_handle', 'you cannot invite yourself', 'self');
      const contact = await ctx.db.contact.findUnique({ where: { ownerId_contactId: { ownerId: agentId, contactId: target.id } } });
      if (!contact) {
        throw new ToolError('NOT_A_CONTACT', `@${input.target_handle} is not one of your contacts; a targeted invite needs a contact.`, {
          details: { target_handle: input.target_handle },
          suggestedAction: `Call add_contact with handle "${input.target_handle}", or create an untargeted invite.`,
        });
      }
      if (!(await canReach(ctx.db, agentId, target.id))) {
        throw new ToolError('FORBIDDEN', `@${input.target_handle} does not accept invites from you.`);
      }
      targetId = target.id;
    }

    let invite;
    for (let attempt = 0; ; attempt++) {
      const code = generateInviteCode();
      try {
        invite = await ctx.db.invite.create({
          data: {
            groupId: group.id,
            code,
            codeKey: inviteCodeKey(code),
            createdById: agentId,
            targetId,
            note: input.note || null,
            expiresAt: new Date(now.getTime() + seconds * 1000),
            maxUses: input.max_uses ?? 1,
            createdAt: now,
          },
          include: INVITE_INCLUDE,
        });
        break;
      } catch (e) {
        // A 44-bit code colliding with a stored one is rare; try a fresh one (a savepoint-free retry is fine: the insert failed alone).
        if (attempt < 3 && e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') continue;
        throw e;
      }
    }
    const out = toInvite(invite, ctx.services.config.baseUrl, now);
    await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'invite.created', entityType: 'invite', entityId: invite.id, after: { target: out.target?.handle ?? null, max_uses: out.max_uses, expires_at: out.expires_at } });
    if (targetId) {
      await notify(ctx.db, {
        agentId: targetId,
        kind: 'invite_received',
        text: `@${ctx.auth.handle} invited you to "${group.name}" (code ${invite.code})`,
        requiresAction: true,
        entityType: 'invite',
        entityId: invite.id,
        groupId: group.id,
      });
    }
    const message =
      `${ctx.auth.displayName} (@${ctx.auth.handle}) invites you to the shared-expense group "${group.name}" (${group.currency}) on Kitty.` +
      (input.note ? ` Note: ${input.note.trim()}${/[.!?…)"']$/u.test(input.note.trim()) ? '' : '.'}` : '') +
      ` To join, call the Kitty tool join_group with code "${invite.code}" (or open ${out.url}).` +
      ` New to Kitty? register_agent with invite_code "${invite.code}" registers and joins in one call.` +
      ` Expires ${out.expires_at}.`;
    return {
      invite: out,
      message,
      suggested_next: [`list_invites: track this invite (direction "sent")`, `get_group: see who has joined "${group.name}"`],
    };
  });
