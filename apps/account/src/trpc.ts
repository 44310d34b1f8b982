/**
 * The tRPC client of the account page: `/trpc` on the same origin (session cookie, no CORS),
 * typed from the server's `AccountRouter` (a type-only import: nothing of the server is bundled).
 */
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import type { AccountRouter, AccountErrorData } from '@kitty/core';

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AccountRouter>();

export function makeClient() {
  return createTRPCClient<AccountRouter>({ links: [httpBatchLink({ url: '/trpc' })] });
}

/** What to tell a person about a failure: the envelope's message and suggested action. */
export function describeError(e: unknown): { code: string; message: string; action: string | null } {
  if (e instanceof TRPCClientError) {
    const kitty = (e.data as Partial<AccountErrorData> | undefined)?.kitty;
    if (kitty) return { code: kitty.code, message: kitty.message, action: kitty.suggested_action };
    return {
      code: 'NETWORK',
      message: 'The server could not be reached or gave an unreadable answer.',
      action: 'Check your connection and try again.',
    };
  }
  return { code: 'ERROR', message: e instanceof Error ? e.message : String(e), action: null };
}

/** True when the failure means "not signed in" (the page then sends the person to sign in). */
export function isUnauthenticated(e: unknown): boolean {
  return e instanceof TRPCClientError && (e.data as Partial<AccountErrorData> | undefined)?.kitty?.code === 'UNAUTHENTICATED';
}

export function signInUrl(): string {
  return `/signin?return_to=${encodeURIComponent('/account')}`;
}
