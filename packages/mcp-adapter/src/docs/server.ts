/**
 * The read-only docs MCP server at /mcp/docs: no credential, no side effects. Built on the SDK's `McpServer`: three tools declared with zod
 * (the SDK generates their JSON Schemas) and the pages of pages.ts as resources.
 *
 * Tools (read-only, closed-world, with output schemas):
 * - `list_tools` {}                → { tools_version, count, tools:[{name,title,kind,area,summary}], suggested_next }
 * - `describe_tool` {name}         → { tool: ToolDescriptor (schemas, errors, annotations, scope…), suggested_next }
 *                                    unknown name → isError NOT_FOUND envelope
 * - `search_docs` {query, limit?}  → { query, results:[{type,name,title,uri,snippet,score}], suggested_next }
 *
 * Resources: kitty://docs/overview, /authentication, /errors, /tools, and the template
 * kitty://docs/tools/{name} (one page per tool; an unknown name → Resource not found, which the SDK sends as
 * -32602 as MCP 2026-07-28 requires, on both protocol eras, with `data.uri`).
 *
 * `tools/call` keeps two contracts that `McpServer`'s own handler would change, so it is
 * replaced by `callHandler` below (same zod schemas, same callbacks):
 * - bad arguments → isError result whose text is the VALIDATION_ERROR envelope with
 *   `details.issues` naming the field, as on REST (the SDK would answer a prose message);
 * - an unknown tool → JSON-RPC error -32602 (MCP "Tools": protocol error), not an isError result.
 */
import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  type CallToolResult,
  type Server,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ToolError, type Registry } from '@kitty/core';
import { callContextOf, toolErrorResult, toolSuccessResult, SERVER_INFO } from '../tools-server.ts';
import { buildDocs, summaryOf, TOOL_PAGE_PREFIX } from './pages.ts';
import { docsSearch } from './search.ts';

const DOCS_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const suggestedNext = z.array(z.string()).describe('next steps: a tool or resource and why');

const listToolsInput = z.strictObject({});
const listToolsOutput = z.object({
  tools_version: z.string().describe('digest of the tool catalogue; changes whenever a tool or schema changes'),
  count: z.number().int().describe('number of tools'),
  tools: z.array(
    z.object({
      name: z.string().describe('tool name'),
      title: z.string().describe('human-readable title'),
      kind: z.enum(['read', 'write']).describe('read tools change nothing; write tools take idempotency_key'),
      area: z.string().describe('the area the tool belongs to, e.g. groups'),
      summary: z.string().describe('first sentence of the description'),
    }),
  ),
  suggested_next: suggestedNext,
});

const describeToolInput = z.strictObject({ name: z.string().min(1).max(64).describe('tool name, e.g. create_group') });
const describeToolOutput = z.object({
  tool: z
    .looseObject({
      name: z.string().describe('tool name'),
      title: z.string().describe('human-readable title'),
      description: z.string().describe('what the tool does, its rules and errors'),
      kind: z.enum(['read', 'write']).describe('read or write'),
      area: z.string().describe('the area the tool belongs to'),
      scope: z.string().nullable().describe('OAuth scope needed; null when no credential is needed'),
      errors: z.array(z.string()).describe('error codes the tool can raise besides the common ones'),
      annotations: z
        .object({
          readOnlyHint: z.boolean().optional().describe('true: changes nothing'),
          destructiveHint: z.boolean().optional().describe('true: may remove or overwrite data'),
          idempotentHint: z.boolean().optional().describe('true: repeating the call has no further effect'),
          openWorldHint: z.boolean().optional().describe('true: reaches outside Kitty'),
        })
        .describe('MCP tool annotations'),
      input_schema: z.record(z.string(), z.unknown()).describe('JSON Schema 2020-12 of the arguments'),
      output_schema: z.record(z.string(), z.unknown()).describe("JSON Schema 2020-12 of a success's data"),
    })
    .describe('the tool as GET /v1/tools/{name} returns it'),
  suggested_next: suggestedNext,
});

const searchDocsInput = z.strictObject({
  query: z.string().min(1).max(200).describe('words to look for, e.g. "settle up" or "idempotency"'),
  limit: z.number().int().min(1).max(50).default(10).describe('maximum results (default 10)'),
});
const searchDocsOutput = z.object({
  query: z.string().describe('the query as received'),
  results: z.array(
    z.object({
      type: z.enum(['tool', 'doc']).describe('a tool or a section of a doc page'),
      name: z.string().describe('tool name or page name'),
      title: z.string().describe('title of the tool or section'),
      uri: z.string().describe('resource to read for the whole text'),
      snippet: z.string().describe('matching text, up to 240 characters'),
      score: z.number().describe('relevance, higher is better'),
    }),
  ),
  suggested_next: suggestedNext,
});

interface DocsTool {
  input: z.ZodType;
  callback(args: never): CallToolResult;
}

/** The docs' pages, search index, tool listing and instructions, shared by every docs Server. */
function docsContent(registry: Registry, baseUrl: string) {
  const { pages, toolPages } = buildDocs(registry, baseUrl);
  const search = docsSearch(registry, pages);
  const listing = {
    tools_version: registry.version,
    count: registry.catalogue.length,
    tools: registry.catalogue.map((t) => ({ name: t.name, title: t.title, kind: t.kind, area: t.area, summary: summaryOf(t.description) })),
    suggested_next: ["describe_tool: see one tool's schemas and errors", 'search_docs: find a tool by what it does'],
  };
  const instructions =
    `Read-only documentation of Kitty (${registry.catalogue.length} tools, version ${registry.version}). Start with list_tools or the resource kitty://docs/overview. ` +
    `The tools themselves are served, with a credential, at ${baseUrl}/mcp and POST ${baseUrl}/v1/tools/{name}.`;
  return { pages, toolPages, search, listing, instructions };
}

/**
 * Returns a factory of docs Servers. The content and search index are built by the first call (the first request to the
 * docs endpoint, not server start-up: ~1.5 MB of heap and ~30 ms an idle server does not need) and shared by every Server.
 */
export function docsServerFactory(registry: Registry, baseUrl: string): () => Server {
  let content: ReturnType<typeof docsContent> | undefined;
  return () => {
    const { pages, toolPages, search, listing, instructions } = (content ??= docsContent(registry, baseUrl));
    const mcp = new McpServer({ ...SERVER_INFO, name: 'kitty-docs', title: 'Kitty docs' }, { instructions });
    const tools = new Map<string, DocsTool>();
    const declare = <I extends z.ZodObject, O extends z.ZodObject>(
      name: string,
      config: { title: string; description: string; input: I; output: O },
      run: (args: z.output<I>) => z.input<O>,
    ) => {
      const callback = (args: z.output<I>) => toolSuccessResult(run(args));
      tools.set(name, { input: config.input, callback });
      mcp.registerTool(
        name,
        {
          title: config.title,
          description: config.description,
          inputSchema: config.input,
          outputSchema: config.output,
          annotations: { title: config.title, ...DOCS_ANNOTATIONS },
        },
        callback as never,
      );
    };

    declare(
      'list_tools',
      {
        title: 'List Kitty tools',
        description:
          'Lists every Kitty tool (served at /mcp and POST /v1/tools/{name}) with its title, kind (read/write), area and a one-line summary.',
        input: listToolsInput,
        output: listToolsOutput,
      },
      () => listing,
    );
    declare(
      'describe_tool',
      {
        title: 'Describe a Kitty tool',
        description:
          'Returns one Kitty tool in full: description, input and output JSON Schemas (2020-12), error codes, annotations, scope and idempotency. Unknown name → NOT_FOUND.',
        input: describeToolInput,
        output: describeToolOutput,
      },
      ({ name }) => {
        const tool = registry.tools.get(name);
        if (!tool)
          throw new ToolError('NOT_FOUND', `Unknown tool "${name}".`, {
            suggestedAction: 'List the tools with list_tools or search_docs.',
          });
        return {
          tool: { ...tool },
          suggested_next: [
            `${tool.name}: call it with tools/call at ${baseUrl}/mcp or POST ${baseUrl}/v1/tools/${tool.name}`,
            `resources/read ${TOOL_PAGE_PREFIX}${tool.name}: the same as a page`,
          ],
        };
      },
    );
    declare(
      'search_docs',
      {
        title: 'Search the Kitty docs',
        description:
          'Searches tool names, titles and descriptions and the spec-level docs (overview, authentication, errors, tools). Returns the best matches with a snippet and a resource URI to read.',
        input: searchDocsInput,
        output: searchDocsOutput,
      },
      ({ query, limit }) => {
        const results = search(query, limit);
        return {
          query,
          results,
          suggested_next: results.length
            ? ['describe_tool: see the schemas of a tool found', 'resources/read: read a doc page by its uri']
            : ['list_tools: browse every tool', 'resources/read kitty://docs/overview: start here'],
        };
      },
    );

    for (const p of pages) {
      mcp.registerResource(p.name, p.uri, { title: p.title, description: p.description, mimeType: 'text/markdown' }, () => ({
        contents: [{ uri: p.uri, mimeType: 'text/markdown', text: p.text }],
      }));
    }
    mcp.registerResource(
      'tool',
      new ResourceTemplate(`${TOOL_PAGE_PREFIX}{name}`, { list: undefined }),
      { title: 'One Kitty tool', description: 'Description, arguments and schemas of one tool.', mimeType: 'text/markdown' },
      (uri, { name }) => {
        const page = toolPages.get(String(name));
        if (!page) throw new ProtocolError(ProtocolErrorCode.ResourceNotFound, `Resource not found: ${uri.href}`, { uri: uri.href });
        return { contents: [{ uri: page.uri, mimeType: 'text/markdown', text: page.text }] };
      },
    );

    mcp.server.setRequestHandler('tools/call', (request, extra) => {
      const tool = tools.get(request.params.name);
      if (!tool)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Unknown tool "${request.params.name}". This docs server has ${[...tools.keys()].join(', ')}.`,
        );
      const ctx = callContextOf(extra);
      try {
        return tool.callback(tool.input.parse(request.params.arguments ?? {}) as never);
      } catch (e) {
        return toolErrorResult(e, ctx);
      }
    });
    // The content never changes while the process runs (McpServer announces listChanged: true).
    mcp.server.registerCapabilities({ tools: { listChanged: false }, resources: { listChanged: false } });
    return mcp.server;
  };
}
