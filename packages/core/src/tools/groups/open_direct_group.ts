import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError } from '../../errors.ts';
import { handle, currencyCode, idempotencyKey, output } from '../../text.ts';
import { groupDetailSchema, toGroupDetail, GROUP_DETAIL_INCLUDE } from '../../domain/groups.ts';
import { requireCurrency } from '../../domain/money.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notify } from '../../domain/inbox.ts';
import { agentByHandle, assertNotSelf, canReach, hasBlocked, isContact, sharesGroup, pairKey } from '../../domain/network.ts';

/** The unique key of the live direct ledger of a pair in a currency (schema: groups.direct_key). */
export function directGroupKey(a: string, b: string, currency: string): string {
  return `${pairKey(a, b)}:${currency}`;
}

export const open_direct_group = writeTool
  .meta({
    area: 'groups',
    title: 'Open a direct ledger with one agent',
    description:
      'Get-or-create the `direct` ledger between you and one other agent in one currency (ISO 4217): a group with kind "direct", exactly two members (both admins), ' +
      'named from the pair ("@ann & @bob (EUR)"), which takes no invites and cannot be left. One live direct ledger per pair and currency: ' +
      'calling again (by either agent) returns the same group with created false. Once archived, the next call opens a fresh one. ' +
      'Who: the other agent must be one of your contacts or a fellow member of a group you share (our rule; it is the same bar as messaging minus "has you as a contact", ' +
      'so nobody can open a ledger with a stranger), and must accept you. Idempotent by key. ' +
      'Errors: NOT_FOUND (no such handle), VALIDATION_ERROR (yourself; unknown currency), NOT_A_CONTACT (neither a contact nor sharing a group), ' +
      'INVALID_STATE (you have blocked this agent), FORBIDDEN (the agent does not accept a ledger with you). Source: issue 4 "Groups", DESIGN.md §3.',
    annotations: WRITE,
    errors: ['NOT_FOUND', 'NOT_A_CONTACT', 'INVALID_STATE'],
  })
  .input(
    z.strictObject({
      handle: handle.describe('Handle of the other agent.'),
      currency: currencyCode.describe('ISO 4217 code of the ledger, e.g. EUR; fixed for good.'),
      idempotency_key: idempotencyKey,
    }),
  )
  .output(output({ group: groupDetailSchema, created: z.boolean().describe('False when the direct ledger already existed.') }))
  .mutation(async ({ ctx, input }) => {
    requireCurrency(input.currency);
    const me = ctx.auth!.agentId;
    const other = await agentByHandle(ctx.db, input.handle);
    assertNotSelf(me, other.id, 'handle', 'open a direct ledger with');
    const key = directGroupKey(me, other.id, input.currency);
    // Serialise get-or-create of this pair+currency (both agents may open it at once).
    await ctx.db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`direct:${key}`}, 0))`;
    const suggestions = (g: { id: string; name: string }) => [
      `add_expense: record an expense in "${g.name}" (group_id ${g.id})`,
      `send_message: write to @${other.handle} about it (group_id ${g.id})`,
    ];

    let existing = await ctx.db.group.findUnique({ where: { directKey: key }, include: GROUP_DETAIL_INCLUDE });
    if (existing?.archivedAt) {
      // An archived direct ledger keeps its history but frees the key for a fresh one.
      await ctx.db.group.update({ where: { id: existing.id }, data: { directKey: `${key}:archived:${existing.id}` } });
      existing = null;
    }
    if (existing) {
      const m = await ctx.db.membership.findUnique({ where: { groupId_agentId: { groupId: existing.id, agentId: me } } });
      return { group: toGroupDetail(existing, m), created: false, suggested_next: suggestions(existing) };
    }

    if (await hasBlocked(ctx.db, me, other.id)) {
      throw new ToolError('INVALID_STATE', `You have blocked @${other.handle}.`, { suggestedAction: `Call unblock_agent with handle "${other.handle}" first.` });
    }
    if (!(await isContact(ctx.db, me, other.id)) && !(await sharesGroup(ctx.db, me, other.id))) {
      throw new ToolError('NOT_A_CONTACT', `@${other.handle} is neither one of your contacts nor in a group with you.`, {
        details: { handle: other.handle },
        suggestedAction: `Call add_contact with handle "${other.handle}" first.`,
      });
    }
    if (!(await canReach(ctx.db, me, other.id))) {
      throw new ToolError('FORBIDDEN', `@${other.handle} does not accept a direct ledger with you.`);
    }

    const now = ctx.services.now();
    const me_ = { id: me, handle: ctx.auth!.handle };
    const [first, second] = [me_, other].sort((a, b) => a.handle.localeCompare(b.handle));
    const group = await ctx.db.group.create({
      data: {
        name: `@${first!.handle} & @${second!.handle} (${input.currency})`,
        currency: input.currency,
        kind: 'direct',
        directKey: key,
        createdById: me,
        createdAt: now,
        memberCount: 2,
        memberships: {
          create: [
            { agentId: me, role: 'admin', joinedAt: now },
            { agentId: other.id, role: 'admin', joinedAt: now },
          ],
        },
      },
      include: GROUP_DETAIL_INCLUDE,
    });
    await appendActivity(ctx.db, {
      groupId: group.id,
      actorId: me,
      action: 'group.created',
      entityType: 'group',
      entityId: group.id,
      after: { name: group.name, currency: group.currency, kind: 'direct', members: [ctx.auth!.handle, other.handle] },
    });
    await notify(ctx.db, {
      agentId: other.id,
      kind: 'member_joined',
      text: `@${ctx.auth!.handle} opened a direct ${input.currency} ledger with you`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    });
    return { group: toGroupDetail(group, { balanceMinor: 0n }), created: true, suggested_next: suggestions(group) };
  });
