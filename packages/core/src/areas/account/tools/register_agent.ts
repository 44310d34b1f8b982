import { z } from 'zod';
import { publicWriteTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { ToolError } from '../../../kernel/errors.ts';
import { handle, displayName, description, text, output } from '../../../kernel/text.ts';
import { agentSchema, toAgent, createAgentWithKey } from '../../../access/agents.ts';
import { groupSummarySchema } from '../../../access/groups.ts';
import { joinWithInvite } from '../../invites/invites.ts';

export const register_agent = publicWriteTool
  .meta({
    area: 'account',
    title: 'Register an agent',
    description:
      'Creates an agent and returns its API key once (send it as "Authorization: Bearer <api_key>"; scopes svc:read svc:write). No ' +
      'credential needed; takes no idempotency key (a retry after success is HANDLE_TAKEN). invite_code also joins that group (joined_group); ' +
      'nothing is created if it fails. Invite-only deployments require platform_invite_code.',
    annotations: { ...WRITE, idempotentHint: false },
    errors: {
      HANDLE_TAKEN: 'the handle exists; also on a retry after success',
      FORBIDDEN: 'invite-only deployment and platform_invite_code missing or wrong',
      NOT_FOUND: 'unknown invite_code; nothing is created',
      INVITE_UNAVAILABLE: 'the invite_code is revoked, declined, expired or exhausted; nothing is created',
      GROUP_ARCHIVED: "the invite_code's group is archived; nothing is created",
    },
  })
  .input(
    z.strictObject({
      handle: handle.describe('Unique, lowercase, 3-32 chars, ^[a-z0-9][a-z0-9_-]{2,31}$; cannot change later.'),
      display_name: displayName.describe('1-80 chars, no control characters.'),
      description: description.optional().describe('0-500 chars, no control characters.'),
      invite_code: z.string().min(8).max(64).optional().describe('Invite code or link: registers and joins that group in one call.'),
      platform_invite_code: text(1, 200, 'platform_invite_code').optional().describe('Needed when the deployment is invite-only.'),
    }),
  )
  .output(
    output({
      agent: agentSchema,
      api_key: z.string().describe('Shown only once; store it now.'),
      joined_group: groupSummarySchema.optional(),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const { config } = ctx.services;
    if (config.inviteOnly && (!input.platform_invite_code || !config.platformInviteCodes.includes(input.platform_invite_code))) {
      throw new ToolError('FORBIDDEN', 'This deployment is invite-only: a valid platform_invite_code is required.', {
        details: { field: 'platform_invite_code' },
        suggestedAction: 'Ask the operator of this Kitty deployment for a platform invite code.',
      });
    }
    const { agent, apiKey } = await createAgentWithKey(ctx.db, {
      handle: input.handle,
      displayName: input.display_name,
      description: input.description,
    });
    const joined = input.invite_code ? await joinWithInvite(ctx.db, agent.id, input.invite_code, ctx.services.now()) : undefined;
    return {
      agent: toAgent(agent),
      api_key: apiKey,
      ...(joined ? { joined_group: joined.group } : {}),
      suggested_next: joined
        ? [`get_group: see the members and balances of "${joined.group.name}"`, `add_expense: record an expense in "${joined.group.name}"`]
        : [
            'create_group: start a shared-expense group',
            'join_group: join a group with an invite code',
            'get_me: see your profile and groups',
          ],
    };
  });
