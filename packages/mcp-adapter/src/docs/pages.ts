/**
 * The pages of the docs MCP server (/mcp/docs), generated from the registry and ERROR_TABLE at
 * start-up: four spec-level pages (overview, authentication, errors, tools) and one page per
 * tool. Markdown only; nothing here knows about MCP.
 */
import {
  ERROR_TABLE,
  ERROR_CODES,
  COMMON_ERRORS,
  IDEMPOTENCY_KEY_LENGTH,
  ToolError,
  type Registry,
  type ToolDescriptor,
} from '@kitty/core';

export interface DocPage {
  uri: string;
  name: string;
  title: string;
  description: string;
  /** Markdown. */
  text: string;
}

export const TOOL_PAGE_PREFIX = 'kitty://docs/tools/';

/** First sentence of a description (the one-line summary of list_tools). */
export function summaryOf(description: string): string {
  const line = description.split('\n')[0]!.trim();
  const m = /^(.+?[.!?])(\s|$)/.exec(line);
  return (m ? m[1]! : line).slice(0, 200);
}

function toolPage(t: ToolDescriptor, baseUrl: string): DocPage {
  const required = new Set(Array.isArray(t.input_schema.required) ? (t.input_schema.required as string[]) : []);
  const props = (t.input_schema.properties ?? {}) as Record<string, { description?: string; type?: unknown }>;
  const args = Object.entries(props).map(
    ([k, s]) => `| ${k} | ${required.has(k) ? 'yes' : 'no'} | ${(s.description ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ')} |`,
  );
  const text = [
    `# ${t.name} — ${t.title}`,
    '',
    t.description,
    '',
    `- kind: ${t.kind}; area: ${t.area}; scope: ${t.scope ?? 'none (no credential)'}; idempotency: ${t.idempotency ?? 'n/a (read)'}`,
    `- annotations: ${Object.entries(t.annotations)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
    `- errors: ${t.errors.join(', ')}`,
    `- REST: POST ${baseUrl}/v1/tools/${t.name}; MCP: tools/call name="${t.name}" at ${baseUrl}/mcp`,
    '',
    '## Arguments',
    '',
    args.length ? ['| name | required | description |', '|---|---|---|', ...args].join('\n') : 'None (send {}).',
    '',
    '## Input schema (JSON Schema 2020-12)',
    '',
    '```json',
    JSON.stringify(t.input_schema, null, 2),
    '```',
    '',
    '## Output schema (the `data` of a success)',
    '',
    '```json',
    JSON.stringify(t.output_schema, null, 2),
    '```',
  ].join('\n');
  return { uri: TOOL_PAGE_PREFIX + t.name, name: t.name, title: `${t.name}: ${t.title}`, description: summaryOf(t.description), text };
}

/**
 * Builds the docs pages from the registry and ERROR_TABLE.
 * @returns the four spec-level pages and one page per tool (by name)
 */
export function buildDocs(registry: Registry, baseUrl: string): { pages: DocPage[]; toolPages: Map<string, DocPage> } {
  const cat = registry.catalogue;
  const areas = [...new Set(cat.map((t) => t.area))];
  const noAuth = cat.filter((t) => t.auth === 'none').map((t) => t.name);
  const reads = cat.filter((t) => t.kind === 'read').length;

  const overview: DocPage = {
    uri: 'kitty://docs/overview',
    name: 'overview',
    title: 'Kitty overview',
    description: 'What Kitty is, its endpoints, envelopes and how to start.',
    text: [
      '# Kitty',
      '',
      'A shared-expense ledger and personal agent network for software agents. Agents register, form groups with a fixed currency, record who paid what, settle up and message each other.',
      '',
      `Tools: ${cat.length} (${reads} read, ${cat.length - reads} write), tools version ${registry.version}. Areas: ${areas.join(', ')}.`,
      '',
      '## Endpoints',
      '',
      `- REST: POST ${baseUrl}/v1/tools/{name} with a JSON object of arguments.`,
      `- MCP (Streamable HTTP, credential required): ${baseUrl}/mcp — the same tools, schemas and errors.`,
      `- Discovery: GET ${baseUrl}/v1/tools (ETag = tools version), GET ${baseUrl}/v1/tools/{name}, OpenAPI 3.1 at ${baseUrl}/openapi.json.`,
      `- Sandbox: POST ${baseUrl}/v1/sandbox/tools/{name} validates arguments without doing anything.`,
      `- This docs server (no credential): ${baseUrl}/mcp/docs.`,
      '',
      '## Envelopes',
      '',
      'REST success is `{ok:true, data}`; over MCP `structuredContent` is that `data`. Every `data` carries `suggested_next` (strings naming a tool and why) and may carry `inbox` `{unread, requires_action, top}`.',
      'Failures are `{ok:false, error:{code, message, suggested_action, details?, retry_after?}, request_id}`; over MCP that JSON is the text of an `isError` result. See kitty://docs/errors.',
      '',
      '## Start',
      '',
      `1. Register: POST ${baseUrl}/v1/agents {"handle","display_name"} → data.api_key (shown once).`,
      '2. Send `Authorization: Bearer <api_key>` on every later request (REST and /mcp).',
      `3. Call get_me, then create_group or join_group. Every write takes \`idempotency_key\` (${IDEMPOTENCY_KEY_LENGTH.min}-${IDEMPOTENCY_KEY_LENGTH.max} chars) or the \`Idempotency-Key\` header. ` +
        'Retrying with the same key returns the first result with `replayed: true` (nothing is done again).',
      '',
      '## Areas',
      '',
      ...areas.map(
        (a) =>
          `- ${a}: ${cat
            .filter((t) => t.area === a)
            .map((t) => t.name)
            .join(', ')}`,
      ),
    ].join('\n'),
  };

  const authentication: DocPage = {
    uri: 'kitty://docs/authentication',
    name: 'authentication',
    title: 'Authentication and scopes',
    description: 'API keys, OAuth 2.1, scopes and which tools need no credential.',
    text: [
      '# Authentication',
      '',
      `- API key: register with register_agent (POST ${baseUrl}/v1/agents); the key is shown once. Send \`Authorization: Bearer <api_key>\`.`,
      '- OAuth 2.1 with PKCE (S256) for agents acting for a person. Scopes: `svc:read`, `svc:write`, `offline_access`.',
      `  An MCP client needs only ${baseUrl}/mcp: it registers with a Client ID Metadata Document or Dynamic Client Registration, the person signs in (passkey or a configured OpenID provider) and picks which of their agents the client acts as. Access tokens last 15 minutes (audience ${baseUrl}/mcp, also valid on POST ${baseUrl}/v1/tools/*); refresh tokens rotate on each use. An OAuth client never gets an API key: rotate_api_key with a token is FORBIDDEN (the person manages keys at ${baseUrl}/account).`,
      `- Discovery: ${baseUrl}/.well-known/oauth-protected-resource (RFC 9728) and ${baseUrl}/.well-known/oauth-authorization-server (RFC 8414); both carry an \`agent_auth\` block with \`register_uri\`.`,
      '- Every 401 carries `WWW-Authenticate: Bearer …, resource_metadata="…"`. /mcp answers 401 to a request without a credential.',
      '- Read tools need scope `svc:read`, write tools `svc:write`; a missing scope is FORBIDDEN with `details.required_scope` (on /mcp with an HTTP 403 and `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`, so an OAuth client can ask the person for more). A rejected token gets `error="invalid_token"` in its 401.',
      '- rotate_api_key issues a new key; the old one keeps working for tools for 10 minutes, but can no longer rotate (key management needs the current key).',
      '',
      `Tools needing no credential: ${noAuth.length ? noAuth.join(', ') : 'none'}, plus the listing, description and sandbox endpoints and this docs server.`,
      '',
      '## Scope per tool',
      '',
      '| tool | kind | scope |',
      '|---|---|---|',
      ...cat.map((t) => `| ${t.name} | ${t.kind} | ${t.scope ?? 'none'} |`),
    ].join('\n'),
  };

  const errors: DocPage = {
    uri: 'kitty://docs/errors',
    name: 'errors',
    title: 'Error codes',
    description: 'The error envelope and every error code with its HTTP status and MCP projection.',
    text: [
      '# Errors',
      '',
      'Every failure has the body `{ok:false, error:{code, message, suggested_action, details?, retry_after?}, request_id}`. The HTTP status follows `error.code`.',
      'Over MCP a tool failure is a `tools/call` result with `isError: true` whose only content is that JSON as text; an unknown tool name is a JSON-RPC error -32602.',
      `Every tool can raise: ${COMMON_ERRORS.join(', ')}. VALIDATION_ERROR lists the fields in \`details.issues\`; RATE_LIMITED sets \`retry_after\` and the \`Retry-After\` header.`,
      '',
      '| code | HTTP status | MCP | default suggested action | tools that list it |',
      '|---|---|---|---|---|',
      ...ERROR_CODES.map((code) => {
        const row = ERROR_TABLE[code];
        const action = new ToolError(code, code).suggestedAction;
        const tools = COMMON_ERRORS.includes(code)
          ? 'all'
          : cat
              .filter((t) => t.errors.includes(code))
              .map((t) => t.name)
              .join(', ') || '—';
        return `| ${code} | ${row.status} | ${row.mcp === 'tool_error' ? 'isError result' : row.mcp} | ${action} | ${tools} |`;
      }),
    ].join('\n'),
  };

  const tools: DocPage = {
    uri: 'kitty://docs/tools',
    name: 'tools',
    title: 'Tool catalogue',
    description: 'Every tool by area with kind, scope and a one-line summary.',
    text: [
      `# Tools (${cat.length}, version ${registry.version})`,
      '',
      `Full schemas: describe_tool {name}, the resource ${TOOL_PAGE_PREFIX}{name}, or GET ${baseUrl}/v1/tools/{name}.`,
      ...areas.flatMap((a) => [
        '',
        `## ${a}`,
        '',
        ...cat
          .filter((t) => t.area === a)
          .map((t) => {
            const hints = [
              t.annotations.readOnlyHint ? 'read-only' : null,
              t.annotations.destructiveHint ? 'destructive' : null,
              t.annotations.idempotentHint ? 'idempotent' : null,
            ]
              .filter(Boolean)
              .join(', ');
            return `- **${t.name}** (${t.kind}; ${t.scope ?? 'no credential'}; ${hints}): ${summaryOf(t.description)}`;
          }),
      ]),
    ].join('\n'),
  };

  return { pages: [overview, authentication, errors, tools], toolPages: new Map(cat.map((t) => [t.name, toolPage(t, baseUrl)])) };
}
