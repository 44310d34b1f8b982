/**
 * The `account` router behind the account page (`/account`): a signed-in person's agents, API keys,
 * connected apps (OAuth grants), passkeys, agents' webhooks, a read-only overview and the security log —
 * one file per page (account-*.ts), merged here.
 *
 * Rules (see account-trpc.ts for session and CSRF, account-scope.ts for the rest):
 * - every read and change is scoped to `ctx.session.humanId`: another person's agent, key, grant,
 *   passkey or webhook is NOT_FOUND, exactly like one that does not exist (no probing);
 * - every change is one transaction together with its security-log entry (recordSecurityEvent);
 * - agents, keys and webhooks change through the same functions as the tools (register_agent,
 *   the key tools, update_webhook, delete_webhook);
 * - after a key or grant changes, `Services.onCredentialsChanged` drops authentication caches.
 * Types reach the browser through `AccountRouter` (apps/account imports the type only).
 */
import { accountRouterFactory, publicProcedure } from './account-trpc.ts';
import { passkeysRouter } from './account-passkeys.ts';
import { agentsRouter } from './account-agents.ts';
import { keysRouter } from './account-keys.ts';
import { appsRouter } from './account-apps.ts';
import { webhooksRouter } from './account-webhooks.ts';
import { overviewProcedures } from './account-overview.ts';
import { securityLog } from './account-security-log.ts';

export { KEY_ACCESS, MAX_KEY_EXPIRY_DAYS, type KeyAccess } from '../areas/account/api-key-admin.ts';

export const accountRouter = accountRouterFactory({
  /** Who is signed in (null when nobody): the page redirects to the sign-in page on null. */
  session: publicProcedure.query(async ({ ctx }) => {
    if (!ctx.session) return { signed_in: false as const, human: null };
    const h = await ctx.services.prisma.human.findUnique({
      where: { id: ctx.session.humanId },
      select: { id: true, displayName: true, email: true, createdAt: true },
    });
    if (!h) return { signed_in: false as const, human: null };
    return {
      signed_in: true as const,
      human: { human_id: h.id, display_name: h.displayName, email: h.email, created_at: h.createdAt.toISOString() },
    };
  }),
  passkeys: passkeysRouter,
  agents: agentsRouter,
  keys: keysRouter,
  apps: appsRouter,
  webhooks: webhooksRouter,
  ...overviewProcedures,
  securityLog,
});

/** The account router's type: what the account page's tRPC client is typed from. */
export type AccountRouter = typeof accountRouter;
