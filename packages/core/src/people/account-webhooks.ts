/**
 * The account page's webhooks: every endpoint of this person's agents with its latest deliveries, and
 * pausing, resuming or deleting one — on the same functions as list_webhooks, update_webhook and
 * delete_webhook (areas/webhooks/webhooks.ts). An endpoint of another person's agent is NOT_FOUND.
 */
import { z } from 'zod';
import type { Db } from '../kernel/context.ts';
import { uuid } from '../kernel/text.ts';
import { deleteWebhook, listWebhooks, ownWebhook, updateWebhook, webhookAgentOfPerson, webhookView } from '../areas/webhooks/webhooks.ts';
import { accountRouterFactory, personProcedure } from './account-trpc.ts';
import { change, personAgents, toAgentOut, type PersonCtx } from './account-scope.ts';

const byId = z.strictObject({ webhook_id: uuid });

/** Pauses (true) or resumes (false) an endpoint of one of this person's agents; logged when its state changed. */
function setPaused(ctx: PersonCtx, webhookId: string, paused: boolean) {
  return change(ctx, async (tx: Db, log) => {
    const { agentId, handle } = await webhookAgentOfPerson(tx, ctx.session.humanId, webhookId);
    const now = ctx.services.now();
    const before = await ownWebhook(tx, agentId, webhookId, true);
    const row = await updateWebhook(tx, agentId, webhookId, { paused }, now);
    // Resume also clears a disabled endpoint, so it changes something when the endpoint was paused or disabled.
    const changed = paused ? !before.paused : before.paused || before.disabled_at !== null;
    if (changed) await log(paused ? 'webhook_paused' : 'webhook_resumed', agentId, { handle, webhook_url: row.url });
    return { webhook: webhookView(row, now) };
  });
}

export const webhooksRouter = accountRouterFactory({
  /** Per agent of this person (oldest first), its endpoints (never their secrets), each with its latest deliveries. */
  list: personProcedure.query(async ({ ctx }) => {
    const db = ctx.services.prisma;
    const now = ctx.services.now();
    const agents = await personAgents(db, ctx.session.humanId);
    const out = [];
    for (const a of agents) out.push({ agent: toAgentOut(a), webhooks: await listWebhooks(db, a.id, now) });
    return { agents: out };
  }),
  /** Stops deliveries to an endpoint; its events wait and go out on resume (while they are kept). */
  pause: personProcedure.input(byId).mutation(({ ctx, input }) => setPaused(ctx, input.webhook_id, true)),
  /** Resumes an endpoint, also one disabled after its deliveries kept failing. */
  resume: personProcedure.input(byId).mutation(({ ctx, input }) => setPaused(ctx, input.webhook_id, false)),
  /** Deletes an endpoint with its delivery history; deliveries not yet sent are dropped. */
  remove: personProcedure.input(byId).mutation(({ ctx, input }) =>
    change(ctx, async (tx, log) => {
      const { agentId, handle } = await webhookAgentOfPerson(tx, ctx.session.humanId, input.webhook_id);
      const row = await deleteWebhook(tx, agentId, input.webhook_id);
      await log('webhook_deleted', agentId, { handle, webhook_url: row.url });
      return { deleted: true };
    }),
  ),
});
