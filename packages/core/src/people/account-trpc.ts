/**
 * tRPC setup of the account page's router (`/trpc`): its own context (a person's browser session,
 * not an agent's credential), the same error table as the tools (every failure is a ToolError; the
 * client receives the envelope body `{code, message, suggested_action, details?}` in `error.data.kitty`),
 * and the two rules every procedure follows:
 *
 * - a session is required (UNAUTHENTICATED otherwise), except for `session` itself;
 * - CSRF: every mutation must carry an `Origin` header naming this service (the base URL's origin, or
 *   the request's own Host), in addition to the SameSite=Lax session cookie (OWASP CSRF cheat sheet,
 *   "Verifying origin with standard headers"). No CORS headers are ever sent, so other sites cannot
 *   read answers either.
 */
import { initTRPC } from '@trpc/server';
import type { Services } from '../kernel/context.ts';
import type { RequestOrigin } from '../access/person-sessions.ts';
import { ToolError, toToolError, type ErrorBody } from '../kernel/errors.ts';

/** What every account-router call runs with; built per request by the server (apps/server account-routes.ts). */
export interface AccountContext {
  services: Services;
  /** The signed-in person, from the `kitty_session` cookie; null without a valid session. */
  session: { humanId: string; sessionId: string } | null;
  /** IP and user agent, for the security log. */
  origin: RequestOrigin;
  /** Request headers the CSRF rule reads. */
  headers: { origin?: string | undefined; host?: string | undefined };
  requestId: string;
}

/** The error data the client receives beside tRPC's own: the Kitty error envelope's body. */
export interface AccountErrorData {
  kitty: ErrorBody;
}

const t = initTRPC.context<AccountContext>().create({
  isServer: true,
  allowOutsideOfServer: true,
  isDev: false,
  errorFormatter({ shape, error }) {
    const te = toToolError(error);
    return {
      ...shape,
      message: te.message,
      data: { code: shape.data.code, httpStatus: te.status, path: shape.data.path, kitty: te.toBody() },
    };
  },
});

export const accountRouterFactory = t.router;
export const createAccountCallerFactory = t.createCallerFactory;

/** Origins accepted on mutations: the base URL's origin and the origin of the request's own Host. */
export function allowedOrigins(baseUrl: string, host: string | undefined): Set<string> {
  const out = new Set<string>();
  try {
    out.add(new URL(baseUrl).origin);
  } catch {
    /* no base URL configured: only the Host rule applies */
  }
  if (host) {
    out.add(`http://${host}`);
    out.add(`https://${host}`);
  }
  return out;
}

const csrf = t.middleware(({ ctx, type, next }) => {
  if (type === 'mutation') {
    const origin = ctx.headers.origin;
    if (!origin || !allowedOrigins(ctx.services.config.baseUrl, ctx.headers.host).has(origin)) {
      throw new ToolError(
        'FORBIDDEN',
        origin
          ? `Changes are accepted only from this service's own pages, not from ${origin}.`
          : 'Changes need an Origin header naming this service.',
        {
          details: { reason: 'csrf_origin' },
          suggestedAction: 'Use the account page itself (open /account on this service) to make changes.',
        },
      );
    }
  }
  return next();
});

const signedIn = t.middleware(({ ctx, next }) => {
  if (!ctx.session) {
    throw new ToolError('UNAUTHENTICATED', 'You are not signed in, or your session has ended.', {
      suggestedAction: 'Sign in at /signin?return_to=/account, then try again.',
    });
  }
  return next({ ctx: { session: ctx.session } });
});

/** Procedures that work without a session (only `session`). */
export const publicProcedure = t.procedure.use(csrf);
/** Procedures of a signed-in person; `ctx.session.humanId` scopes every query. */
export const personProcedure = t.procedure.use(csrf).use(signedIn);
