/**
 * OpenAPI 3.1 description generated from the registry (GET /openapi.json).
 *
 * Why not trpc-to-openapi: it cannot express the `{ok,data}` envelope, the error envelope,
 * optional bodies or per-tool scopes (STACK-NOTES "tRPC core, adapters"); this generator over
 * the same registry stays the single source. Validated in tests by @readme/openapi-parser and
 * @redocly/openapi-core.
 */
import { ERROR_BODY_JSON_SCHEMA, IDEMPOTENCY_KEY_LENGTH, KITTY_VERSION, expandRequired, type Registry, type JsonSchema } from '@kitty/core';

const ERROR_ENVELOPE = {
  type: 'object',
  required: ['ok', 'error', 'request_id'],
  properties: {
    ok: { const: false },
    error: embed(ERROR_BODY_JSON_SCHEMA, {}),
    request_id: { type: 'string' },
  },
};

/**
 * Moves a catalogue schema's shared shapes (`$defs`, one shape per name across the catalogue) into
 * `components.schemas` and points its references there: inside an OpenAPI document "#/…" is the document.
 */
function embed(schema: JsonSchema, components: Record<string, unknown>): JsonSchema {
  const { $schema: _drop, $defs, ...rest } = schema;
  for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) components[name] = toComponents(def);
  return toComponents(rest) as JsonSchema;
}

function toComponents(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toComponents);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' ? v.replace(/^#\/\$defs\//, '#/components/schemas/') : toComponents(v),
    ]),
  );
}

/** A success's `data`: the tool's own fields and the fields every result has. */
const resultOf = (output: string) => ({
  allOf: [{ $ref: `#/components/schemas/${output}` }, { $ref: '#/components/schemas/ResultEnvelope' }],
});

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

/**
 * A tool's examples (registry.examples) as OpenAPI Example Objects, keyed by a slug of their summary: the request's
 * `value` is the arguments, the response's the success envelope around the result.
 */
function examplesOf(registry: Registry, tool: string, side: 'request' | 'response'): { examples?: Record<string, unknown> } {
  const list = registry.examples?.get(tool) ?? [];
  if (list.length === 0) return {};
  const slug = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_|_$/g, '')
      .slice(0, 48);
  return {
    examples: Object.fromEntries(
      list.map((ex, i) => [
        `${i + 1}_${slug(ex.summary)}`,
        { summary: ex.summary, value: side === 'request' ? ex.arguments : { ok: true, data: ex.result } },
      ]),
    ),
  };
}

const rateHeaders = {
  'RateLimit-Policy': { description: 'Rate limit policy (IETF httpapi ratelimit headers).', schema: { type: 'string' } },
  RateLimit: { description: 'Current rate limit state.', schema: { type: 'string' } },
  'X-Request-Id': { description: 'Request id, also in error envelopes.', schema: { type: 'string' } },
};

export function buildOpenApi(registry: Registry, baseUrl: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {
    ErrorEnvelope: ERROR_ENVELOPE,
    ResultEnvelope: embed(expandRequired(registry.envelope) as JsonSchema, {}),
  };
  const commonErrors = {
    '400': errorResponse('VALIDATION_ERROR: details.issues lists the fields to fix'),
    '401': {
      ...errorResponse('UNAUTHENTICATED'),
      headers: {
        'WWW-Authenticate': {
          description: 'Bearer challenge pointing at the protected resource metadata (RFC 9728).',
          schema: { type: 'string' },
        },
      },
    },
    '403': errorResponse('FORBIDDEN (details.required_scope for a missing scope)'),
    '404': errorResponse('NOT_FOUND'),
    '409': errorResponse('Conflict: a specific code (NOT_SETTLED, IDEMPOTENCY_KEY_REUSED, …)'),
    '413': errorResponse('PAYLOAD_TOO_LARGE'),
    '429': {
      ...errorResponse('RATE_LIMITED'),
      headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
    },
    '500': errorResponse('INTERNAL'),
  };

  for (const tool of registry.catalogue) {
    schemas[`${tool.name}_input`] = embed(tool.input_schema, schemas);
    schemas[`${tool.name}_output`] = embed(expandRequired(tool.output_schema) as JsonSchema, schemas);
    const parameters =
      tool.kind === 'write' && tool.idempotency !== 'none'
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: `Alternative to the idempotency_key argument (${IDEMPOTENCY_KEY_LENGTH.min}-${IDEMPOTENCY_KEY_LENGTH.max} characters); if both are sent they must match.`,
              schema: { type: 'string', minLength: IDEMPOTENCY_KEY_LENGTH.min, maxLength: IDEMPOTENCY_KEY_LENGTH.max },
            },
          ]
        : [];
    paths[`/v1/tools/${tool.name}`] = {
      post: {
        operationId: tool.name,
        summary: tool.title,
        description: tool.description,
        tags: [tool.area],
        'x-kitty-kind': tool.kind,
        'x-kitty-errors': tool.errors,
        security: tool.scope ? [{ bearer: [tool.scope] }] : [],
        parameters,
        requestBody: {
          required: tool.hasRequiredArgs,
          content: {
            'application/json': {
              schema: { $ref: `#/components/schemas/${tool.name}_input` },
              ...examplesOf(registry, tool.name, 'request'),
            },
          },
        },
        responses: {
          '200': {
            description: 'Success envelope',
            headers: rateHeaders,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['ok', 'data'],
                  properties: { ok: { const: true }, data: resultOf(`${tool.name}_output`) },
                },
                ...examplesOf(registry, tool.name, 'response'),
              },
            },
          },
          ...commonErrors,
        },
      },
    };
  }

  const okObject = {
    description: 'Success envelope',
    content: {
      'application/json': {
        schema: { type: 'object', required: ['ok', 'data'], properties: { ok: { const: true }, data: { type: 'object' } } },
      },
    },
  };
  paths['/v1/tools'] = {
    get: {
      operationId: 'list_tools',
      summary: 'List every tool with its JSON Schemas',
      security: [],
      parameters: [{ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }],
      responses: {
        '200': { ...okObject, headers: { ETag: { description: 'Tools version', schema: { type: 'string' } } } },
        '304': { description: 'Not modified' },
        '429': commonErrors['429'],
        '500': commonErrors['500'],
      },
    },
  };
  paths['/v1/tools/{name}'] = {
    get: {
      operationId: 'describe_tool',
      summary: "One tool's input and output schema",
      security: [],
      parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '200': okObject, '404': commonErrors['404'], '429': commonErrors['429'], '500': commonErrors['500'] },
    },
  };
  paths['/v1/sandbox/tools/{name}'] = {
    post: {
      operationId: 'sandbox_validate',
      summary: 'Validate arguments against the live schema; stores and sends nothing',
      security: [],
      parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
      requestBody: { required: false, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        '200': okObject,
        '400': commonErrors['400'],
        '404': commonErrors['404'],
        '429': commonErrors['429'],
        '500': commonErrors['500'],
      },
    },
  };
  paths['/v1'] = {
    get: {
      operationId: 'entry',
      summary: 'Your profile and where to go next',
      security: [{ bearer: ['svc:read'] }],
      responses: { '200': okObject, '401': commonErrors['401'], '429': commonErrors['429'], '500': commonErrors['500'] },
    },
  };
  paths['/v1/agents'] = {
    post: {
      operationId: 'register_agent_alias',
      summary: 'Register an agent (same as POST /v1/tools/register_agent)',
      security: [],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/register_agent_input' } } } },
      responses: {
        '200': {
          description: 'Success envelope',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['ok', 'data'],
                properties: { ok: { const: true }, data: resultOf('register_agent_output') },
              },
            },
          },
        },
        ...commonErrors,
      },
    },
  };

  paths['/v1/receipts/{receipt_id}'] = {
    get: {
      operationId: 'download_receipt',
      summary: "A receipt's file: for a member (bearer) or with the signed link from get_expense (expires, sig)",
      security: [{ bearer: ['svc:read'] }, {}],
      parameters: [
        { name: 'receipt_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
        {
          name: 'expires',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'From download_url: expiry, unix seconds.',
        },
        { name: 'sig', in: 'query', required: false, schema: { type: 'string' }, description: 'From download_url: its signature.' },
      ],
      responses: {
        '200': {
          description: 'The file, with its detected type (JPEG, PNG, WebP, HEIC/HEIF or PDF), as an attachment',
          content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
        },
        '401': commonErrors['401'],
        '403': commonErrors['403'],
        '404': commonErrors['404'],
        '429': commonErrors['429'],
        '500': commonErrors['500'],
      },
    },
  };
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Kitty',
      version: KITTY_VERSION,
      description:
        'Shared-expense ledger and personal agent network for software agents. Every capability is a tool: POST /v1/tools/{name}. Same tools over MCP at /mcp.',
      'x-tools-version': registry.version,
    },
    servers: [{ url: baseUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'API key from register_agent (kitty_…); scopes svc:read svc:write.' },
      },
    },
  };
}
