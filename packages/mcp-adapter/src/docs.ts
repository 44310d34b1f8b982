/**
 * The read-only docs MCP server at /mcp/docs (interface-spec "What the service does" 7): no
 * credential, no side effects. Everything it says is generated from the registry and
 * ERROR_TABLE at start-up; no tool schema is copied by hand.
 *
 * Tools (its own three; annotated read-only, closed-world, with output schemas):
 * - `list_tools` {}                → { tools_version, count, tools:[{name,title,kind,area,summary}], suggested_next }
 * - `describe_tool` {name}         → { tool: ToolDescriptor (schemas, errors, annotations, scope…), suggested_next }
 *                                    unknown name → isError NOT_FOUND envelope
 * - `search_docs` {query, limit?}  → { query, results:[{type,name,title,uri,snippet,score}], suggested_next }
 * Bad arguments → isError VALIDATION_ERROR envelope (same shape as REST).
 *
 * Resources: kitty://docs/overview, /authentication, /errors, /tools, and the template
 * kitty://docs/tools/{name} (one page per tool).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode as RpcErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ERROR_TABLE, ERROR_CODES, COMMON_ERRORS, ToolError, validationError, type Registry, type ToolDescriptor } from '@kitty/core';
import { callContextOf, toolErrorResult, toolSuccessResult, SERVER_INFO } from './tools-server.ts';

export interface DocPage {
  uri: string;
  name: string;
  title: string;
  description: string;
  /** Markdown. */
  text: string;
}

const TOOL_PAGE_PREFIX = 'kitty://docs/tools/';

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
    `- annotations: ${Object.entries(t.annotations).map(([k, v]) => `${k}=${v}`).join(', ')}`,
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
      '3. Call get_me, then create_group or join_group. Every write takes `idempotency_key` (8-128 chars) or the `Idempotency-Key` header.',
      '',
      '## Areas',
      '',
      ...areas.map((a) => `- ${a}: ${cat.filter((t) => t.area === a).map((t) => t.name).join(', ')}`),
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
      `- Discovery: ${baseUrl}/.well-known/oauth-protected-resource (RFC 9728) and ${baseUrl}/.well-known/oauth-authorization-server (RFC 8414); both carry an \`agent_auth\` block with \`register_uri\`.`,
      '- Every 401 carries `WWW-Authenticate: Bearer …, resource_metadata="…"`. /mcp answers 401 to a request without a credential.',
      '- Read tools need scope `svc:read`, write tools `svc:write`; a missing scope is FORBIDDEN with `details.required_scope`.',
      '- rotate_api_key issues a new key; the old one keeps working for 10 minutes.',
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
        const tools = COMMON_ERRORS.includes(code) ? 'all' : cat.filter((t) => t.errors.includes(code)).map((t) => t.name).join(', ') || '—';
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
        ...cat.filter((t) => t.area === a).map((t) => {
          const hints = [t.annotations.readOnlyHint ? 'read-only' : null, t.annotations.destructiveHint ? 'destructive' : null, t.annotations.idempotentHint ? 'idempotent' : null].filter(Boolean).join(', ');
          return `- **${t.name}** (${t.kind}; ${t.scope ?? 'no credential'}; ${hints}): ${summaryOf(t.description)}`;
        }),
      ]),
    ].join('\n'),
  };

  return { pages: [overview, authentication, errors, tools], toolPages: new Map(cat.map((t) => [t.name, toolPage(t, baseUrl)])) };
}

const DOCS_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const SUGGESTED_NEXT = { type: 'array', items: { type: 'string' } };

/** The docs server's own three tools. */
function docsTools(): Tool[] {
  return [
    {
      name: 'list_tools',
      title: 'List Kitty tools',
      description: 'Lists every Kitty tool (served at /mcp and POST /v1/tools/{name}) with its title, kind (read/write), area and a one-line summary.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      outputSchema: {
        type: 'object',
        properties: {
          tools_version: { type: 'string' },
          count: { type: 'integer' },
          tools: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, title: { type: 'string' }, kind: { type: 'string', enum: ['read', 'write'] }, area: { type: 'string' }, summary: { type: 'string' } },
              required: ['name', 'title', 'kind', 'area', 'summary'],
            },
          },
          suggested_next: SUGGESTED_NEXT,
        },
        required: ['tools_version', 'count', 'tools', 'suggested_next'],
      },
      annotations: { title: 'List Kitty tools', ...DOCS_ANNOTATIONS },
    },
    {
      name: 'describe_tool',
      title: 'Describe a Kitty tool',
      description: 'Returns one Kitty tool in full: description, input and output JSON Schemas (2020-12), error codes, annotations, scope and idempotency. Unknown name → NOT_FOUND.',
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, maxLength: 64, description: 'tool name, e.g. create_group' } },
        required: ['name'],
        additionalProperties: false,
      },
      outputSchema: {
        type: 'object',
        properties: {
          tool: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              title: { type: 'string' },
              description: { type: 'string' },
              kind: { type: 'string', enum: ['read', 'write'] },
              area: { type: 'string' },
              scope: { type: ['string', 'null'] },
              errors: { type: 'array', items: { type: 'string' } },
              annotations: { type: 'object' },
              input_schema: { type: 'object' },
              output_schema: { type: 'object' },
            },
            required: ['name', 'title', 'description', 'kind', 'errors', 'annotations', 'input_schema', 'output_schema'],
          },
          suggested_next: SUGGESTED_NEXT,
        },
        required: ['tool', 'suggested_next'],
      },
      annotations: { title: 'Describe a Kitty tool', ...DOCS_ANNOTATIONS },
    },
    {
      name: 'search_docs',
      title: 'Search the Kitty docs',
      description: 'Searches tool names, titles and descriptions and the spec-level docs (overview, authentication, errors, tools). Returns the best matches with a snippet and a resource URI to read.',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 200, description: 'words to look for, e.g. "settle up" or "idempotency"' },
          limit: { type: 'integer', minimum: 1, maximum: 50, description: 'maximum results (default 10)' },
        },
        required: ['query'],
        additionalProperties: false,
      },
      outputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          results: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                type: { type: 'string', enum: ['tool', 'doc'] },
                name: { type: 'string' },
                title: { type: 'string' },
                uri: { type: 'string' },
                snippet: { type: 'string' },
                score: { type: 'number' },
              },
              required: ['type', 'name', 'title', 'uri', 'snippet', 'score'],
            },
          },
          suggested_next: SUGGESTED_NEXT,
        },
        required: ['query', 'results', 'suggested_next'],
      },
      annotations: { title: 'Search the Kitty docs', ...DOCS_ANNOTATIONS },
    },
  ];
}

interface SearchEntry {
  type: 'tool' | 'doc';
  name: string;
  title: string;
  uri: string;
  /** lower-cased searchable text; name/title weigh more */
  head: string;
  body: string;
  raw: string;
}

const words = (s: string) => s.toLowerCase().split(/[^a-z0-9_]+/).filter((w) => w.length > 1);

function snippet(raw: string, terms: string[]): string {
  const lower = raw.toLowerCase();
  let at = -1;
  for (const t of terms) {
    at = lower.indexOf(t);
    if (at !== -1) break;
  }
  const start = Math.max(0, at - 80);
  return (start > 0 ? '…' : '') + raw.slice(start, start + 240).replace(/\s+/g, ' ').trim() + (start + 240 < raw.length ? '…' : '');
}

/** Validates the docs tools' arguments (the low-level Server does not). Throws VALIDATION_ERROR. */
function stringArg(args: Record<string, unknown>, key: string, max: number): string {
  const v = args[key];
  if (typeof v !== 'string' || v.trim().length === 0) throw validationError(key, 'required: a non-empty string', typeof v === 'undefined' ? 'required' : 'invalid_type');
  if (v.length > max) throw validationError(key, `at most ${max} characters`, 'too_big');
  return v;
}

function rejectUnknown(args: Record<string, unknown>, known: string[]): void {
  const extra = Object.keys(args).filter((k) => !known.includes(k));
  if (extra.length) {
    throw new ToolError('VALIDATION_ERROR', `Unknown argument(s): ${extra.join(', ')}.`, {
      details: { issues: extra.map((k) => ({ path: k, message: 'unknown argument', code: 'unrecognized_keys' })) },
    });
  }
}

/** Returns a factory of docs Servers (content generated once, shared by every Server). */
export function docsServerFactory(registry: Registry, baseUrl: string): () => Server {
  const { pages, toolPages } = buildDocs(registry, baseUrl);
  const tools = docsTools();
  const listToolsResult = { tools };
  const listResourcesResult = {
    resources: pages.map((p) => ({ uri: p.uri, name: p.name, title: p.title, description: p.description, mimeType: 'text/markdown' })),
  };
  const templatesResult = {
    resourceTemplates: [
      { uriTemplate: `${TOOL_PAGE_PREFIX}{name}`, name: 'tool', title: 'One Kitty tool', description: 'Description, arguments and schemas of one tool.', mimeType: 'text/markdown' },
    ],
  };
  const byUri = new Map<string, DocPage>([...pages, ...toolPages.values()].map((p) => [p.uri, p]));
  const listing = {
    tools_version: registry.version,
    count: registry.catalogue.length,
    tools: registry.catalogue.map((t) => ({ name: t.name, title: t.title, kind: t.kind, area: t.area, summary: summaryOf(t.description) })),
    suggested_next: ['describe_tool: see one tool\'s schemas and errors', 'search_docs: find a tool by what it does'],
  };
  const index: SearchEntry[] = [
    ...registry.catalogue.map((t) => ({
      type: 'tool' as const,
      name: t.name,
      title: t.title,
      uri: TOOL_PAGE_PREFIX + t.name,
      head: `${t.name} ${t.name.replaceAll('_', ' ')} ${t.title} ${t.area}`.toLowerCase(),
      body: t.description.toLowerCase(),
      raw: t.description,
    })),
    ...pages.flatMap((p) =>
      p.text.split(/\n(?=## )/).map((section, i) => {
        const heading = i === 0 ? p.title : section.split('\n')[0]!.replace(/^#+\s*/, '');
        return { type: 'doc' as const, name: p.name, title: i === 0 ? p.title : `${p.title}: ${heading}`, uri: p.uri, head: heading.toLowerCase(), body: section.toLowerCase(), raw: section };
      }),
    ),
  ];

  const search = (query: string, limit: number) => {
    const terms = [...new Set(words(query))];
    const phrase = query.trim().toLowerCase();
    const scored = index
      .map((e) => {
        let score = 0;
        for (const t of terms) {
          if (e.head.includes(t)) score += 3;
          if (e.body.includes(t)) score += 1;
        }
        if (phrase.length > 2 && (e.head.includes(phrase) || e.body.includes(phrase))) score += 2;
        if (e.type === 'tool' && e.name === phrase) score += 10;
        return { e, score };
      })
      .filter((x) => x.score > 0)
      .sort((a, b) => b.score - a.score || a.e.name.localeCompare(b.e.name))
      .slice(0, limit);
    return scored.map(({ e, score }) => ({ type: e.type, name: e.name, title: e.title, uri: e.uri, snippet: snippet(e.raw, terms), score }));
  };

  const instructions =
    `Read-only documentation of Kitty (${registry.catalogue.length} tools, version ${registry.version}). Start with list_tools or the resource kitty://docs/overview. ` +
    `The tools themselves are served, with a credential, at ${baseUrl}/mcp and POST ${baseUrl}/v1/tools/{name}.`;

  return () => {
    const server = new Server(
      { ...SERVER_INFO, name: 'kitty-docs', title: 'Kitty docs' },
      { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => listToolsResult);
    server.setRequestHandler(ListResourcesRequestSchema, () => listResourcesResult);
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => templatesResult);
    server.setRequestHandler(ReadResourceRequestSchema, (request) => {
      const page = byUri.get(request.params.uri);
      // MCP 2025-11-25 "Resources": unknown resource → -32002 Resource not found.
      if (!page) throw new McpError(-32002, `Resource not found: ${request.params.uri}`, { uri: request.params.uri });
      return { contents: [{ uri: page.uri, mimeType: 'text/markdown', text: page.text }] };
    });
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const { name } = request.params;
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      if (!tools.some((t) => t.name === name)) throw new McpError(RpcErrorCode.InvalidParams, `Unknown tool "${name}". This docs server has list_tools, describe_tool and search_docs.`);
      const ctx = callContextOf(extra);
      try {
        if (name === 'list_tools') {
          rejectUnknown(args, []);
          return toolSuccessResult(listing);
        }
        if (name === 'describe_tool') {
          rejectUnknown(args, ['name']);
          const toolName = stringArg(args, 'name', 64);
          const tool = registry.tools.get(toolName);
          if (!tool) throw new ToolError('NOT_FOUND', `Unknown tool "${toolName}".`, { suggestedAction: 'List the tools with list_tools or search_docs.' });
          return toolSuccessResult({
            tool,
            suggested_next: [`${tool.name}: call it with tools/call at ${baseUrl}/mcp or POST ${baseUrl}/v1/tools/${tool.name}`, `resources/read ${TOOL_PAGE_PREFIX}${tool.name}: the same as a page`],
          });
        }
        rejectUnknown(args, ['query', 'limit']);
        const query = stringArg(args, 'query', 200);
        const limit = args.limit ?? 10;
        if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 50) throw validationError('limit', 'an integer from 1 to 50', 'invalid_type');
        const results = search(query, limit);
        return toolSuccessResult({
          query,
          results,
          suggested_next: results.length
            ? ['describe_tool: see the schemas of a tool found', 'resources/read: read a doc page by its uri']
            : ['list_tools: browse every tool', 'resources/read kitty://docs/overview: start here'],
        });
      } catch (e) {
        return toolErrorResult(e, ctx);
      }
    });
    return server;
  };
}
