/**
 * Discovery metadata and the self-describing invite URL.
 * - /.well-known/oauth-protected-resource (RFC 9728), also under /mcp, with the `agent_auth`
 *   block telling a headless agent how to get a credential (interface-spec "Authentication" 4).
 * - GET /i/{code}: explains an invite to a person (HTML) or an agent (JSON, text) by content
 *   negotiation (DESIGN.md §4 "Invites"); it never consumes the invite.
 */
import type { FastifyInstance } from 'fastify';
import { findInviteByCode, toInvite, IDEMPOTENCY_KEY_LENGTH, type Services } from '@kitty/core';
import Negotiator from 'negotiator';

/** What these routes need (a subset of the server's AppDeps). */
export interface MetadataDeps {
  /** Public base URL, no trailing slash. */
  baseUrl: string;
  services: Pick<Services, 'prisma' | 'now'>;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export async function registerMetadataRoutes(app: FastifyInstance, deps: MetadataDeps): Promise<void> {
  const base = deps.baseUrl;
  const resourceMetadata = (resource: string) => ({
    resource,
    resource_name: 'Kitty',
    // OAuth 2.1 for apps acting for a person (oauth/provider.ts); tokens carry aud = {base}/mcp and work on /mcp and /v1/tools/*.
    authorization_servers: [base],
    scopes_supported: ['svc:read', 'svc:write', 'offline_access'],
    bearer_methods_supported: ['header'],
    resource_documentation: `${base}/openapi.json`,
    agent_auth: {
      register_uri: `${base}/v1/agents`,
      register_tool: 'register_agent',
      credential: 'api_key',
      usage: 'Authorization: Bearer <api_key>',
      docs: `${base}/mcp/docs`,
    },
  });
  app.get('/.well-known/oauth-protected-resource', async () => resourceMetadata(base));
  app.get('/.well-known/oauth-protected-resource/mcp', async () => resourceMetadata(`${base}/mcp`));

  app.get<{ Params: { code: string } }>('/i/:code', async (req, reply) => {
    const now = deps.services.now();
    // An unknown code is NOT_FOUND in the usual envelope (the server's error handler).
    const invite = toInvite(await findInviteByCode(deps.services.prisma, req.params.code), base, now);
    const preview = {
      group_name: invite.group_name,
      invited_by: invite.created_by,
      note: invite.note,
      status: invite.status,
      expires_at: invite.expires_at,
      restricted_to: invite.target?.handle ?? null,
      code: invite.code,
      how_to_join: {
        existing_agent: `POST ${base}/v1/tools/join_group {"code":"${invite.code}","idempotency_key":"<${IDEMPOTENCY_KEY_LENGTH.min}-${IDEMPOTENCY_KEY_LENGTH.max} chars>"} (or MCP tool join_group at ${base}/mcp)`,
        new_agent: `POST ${base}/v1/agents {"handle":"<handle>","display_name":"<name>","invite_code":"${invite.code}"}`,
      },
    };
    // Content negotiation (RFC 9110 §12.5.1, q-values honoured): JSON when asked for (or ?format=json), HTML for browsers, else text.
    const wanted =
      (req.query as { format?: string } | undefined)?.format === 'json'
        ? 'application/json'
        : (new Negotiator({ headers: { accept: req.headers.accept ?? 'text/plain' } }).mediaType([
            'text/plain',
            'application/json',
            'text/html',
          ]) ?? 'text/plain');
    if (wanted === 'application/json')
      return {
        ok: true,
        data: { invite: preview, suggested_next: ['join_group: join with this code', 'register_agent: register and join in one call'] },
      };
    if (wanted === 'text/html') {
      reply.type('text/html; charset=utf-8');
      return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Invite to ${escapeHtml(invite.group_name)} — Kitty</title></head><body>
<h1>You're invited to “${escapeHtml(invite.group_name)}”</h1>
<p>${escapeHtml(invite.created_by.display_name)} (@${escapeHtml(invite.created_by.handle)}) invited you to a shared-expense group on Kitty.</p>
${invite.note ? `<p>Note: ${escapeHtml(invite.note)}</p>` : ''}
<p>Status: <strong>${invite.status}</strong>; expires ${escapeHtml(invite.expires_at)}.</p>
<p>Kitty is used by software agents. Give your agent this code: <code>${escapeHtml(invite.code)}</code></p>
</body></html>`;
    }
    reply.type('text/plain; charset=utf-8');
    return [
      `Kitty invite to "${invite.group_name}" from ${invite.created_by.display_name} (@${invite.created_by.handle}).`,
      invite.note ? `Note: ${invite.note}` : '',
      `Status: ${invite.status}. Expires: ${invite.expires_at}.`,
      `Join: ${preview.how_to_join.existing_agent}`,
      `New here: ${preview.how_to_join.new_agent}`,
    ]
      .filter(Boolean)
      .join('\n');
  });
}
