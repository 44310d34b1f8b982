/**
 * The account page's agents: list, create (the same createAgentWithKey as register_agent) and claim a
 * headless agent by one of its current keys.
 */
import { z } from 'zod';
import { ToolError } from '../kernel/errors.ts';
import { handle, displayName, description } from '../kernel/text.ts';
import { createAgentWithKey } from '../access/agents.ts';
import { digestApiKey, isWellFormedApiKey } from '../access/api-keys.ts';
import { toKey } from '../areas/account/api-key-admin.ts';
import { accountRouterFactory, personProcedure } from './account-trpc.ts';
import { AGENT_OUT_SELECT, change, personAgents, toAgentOut } from './account-scope.ts';

export const agentsRouter = accountRouterFactory({
  /** This person's agents, oldest first. */
  list: personProcedure.query(async ({ ctx }) => {
    return { agents: (await personAgents(ctx.services.prisma, ctx.session.humanId)).map(toAgentOut) };
  }),
  /** Creates an agent owned by this person, with one read+write key (the secret is in this answer only). */
  create: personProcedure
    .input(z.strictObject({ handle, display_name: displayName, description: description.optional() }))
    .mutation(({ ctx, input }) =>
      change(ctx, async (tx, log) => {
        const created = await createAgentWithKey(
          tx,
          { handle: input.handle, displayName: input.display_name, description: input.description },
          { humanId: ctx.session.humanId },
        );
        await log('agent_created', created.agent.id, { handle: created.agent.handle });
        return { agent: toAgentOut(created.agent), api_key: created.apiKey };
      }),
    ),
  /**
   * Claims a headless agent by one of its current API keys (proof of control). The key is only
   * compared by digest and never stored or returned.
   * @throws VALIDATION_ERROR for a malformed key; NOT_FOUND for an unknown, revoked, expired or rotated key;
   *         FORBIDDEN when another person owns the agent; ALREADY_EXISTS when it is already yours
   */
  claim: personProcedure.input(z.strictObject({ api_key: z.string().min(1).max(200) })).mutation(({ ctx, input }) =>
    change(ctx, async (tx, log) => {
      const presented = input.api_key.trim();
      if (!isWellFormedApiKey(presented)) {
        throw new ToolError(
          'VALIDATION_ERROR',
          'api_key: this is not a Kitty API key (they start with "kitty_" and end with a checksum).',
          {
            details: {
              issues: [{ path: 'api_key', message: 'not a well-formed Kitty API key (typo or truncated?)', code: 'invalid_api_key' }],
            },
            suggestedAction: 'Paste the whole key the agent received from register_agent or rotate_api_key.',
          },
        );
      }
      const key = await tx.apiKey.findUnique({
        where: { digest: digestApiKey(presented) },
        include: { agent: { select: { id: true, humanId: true } } },
      });
      if (!key || toKey(key, ctx.services.now()).status !== 'active') {
        throw new ToolError('NOT_FOUND', 'This API key is unknown, revoked, expired or was rotated; it cannot prove control of an agent.', {
          suggestedAction: "Use the agent's current key (a rotated key is not enough).",
        });
      }
      if (key.agent.humanId === ctx.session.humanId) {
        throw new ToolError('ALREADY_EXISTS', 'This agent is already yours.', { suggestedAction: 'Find it under My agents.' });
      }
      if (key.agent.humanId !== null) {
        throw new ToolError('FORBIDDEN', 'This agent belongs to another person and cannot be claimed.', {
          details: { reason: 'owned_by_another_person' },
          suggestedAction: 'Ask its owner to manage it, or register a new agent.',
        });
      }
      // Conditional update: two people claiming at once → exactly one wins.
      const won = await tx.agent.updateMany({ where: { id: key.agent.id, humanId: null }, data: { humanId: ctx.session.humanId } });
      if (won.count !== 1)
        throw new ToolError('FORBIDDEN', 'This agent was just claimed by someone else.', {
          details: { reason: 'owned_by_another_person' },
        });
      const agent = await tx.agent.findUniqueOrThrow({ where: { id: key.agent.id }, select: AGENT_OUT_SELECT });
      await log('agent_claimed', agent.id, { handle: agent.handle, key_prefix: key.prefix });
      return { agent: toAgentOut(agent) };
    }),
  ),
});
