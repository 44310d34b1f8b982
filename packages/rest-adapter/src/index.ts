/**
 * REST projection of the registry (interface-spec "Endpoints"). It translates HTTP into
 * registry calls and results into envelopes; it decides nothing about tools. Authentication,
 * rate limits and request ids are the server's (apps/server) hooks. The routes live in their own
 * encapsulated Fastify plugin whose error handler sends every error (thrown here, by the server's
 * hooks for these routes, or by body parsing) as the error envelope (`opts.errorEnvelope`), with
 * `WWW-Authenticate` naming the service root's protected-resource metadata on 401 (RFC 9728).
 *
 * Routes: POST /v1/tools/:name, GET /v1/tools (ETag / If-None-Match → 304), GET /v1/tools/:name,
 * POST /v1/sandbox/tools/:name, GET /v1, POST /v1/agents, GET /openapi.json, GET /v1/receipts/:receipt_id (receipts.ts).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ToolError, type Registry, type CallRequest, type ErrorEnvelope } from '@kitty/core';
import { buildOpenApi } from './openapi.ts';
import { receiptRoutes } from './receipts.ts';

export { buildOpenApi } from './openapi.ts';

export interface RestAdapterOptions {
  registry: Registry;
  /** Builds the registry call request (services, auth, request id) for an HTTP request. */
  callRequest(req: FastifyRequest): CallRequest;
  baseUrl: string;
  /**
   * Any error thrown on these routes (or by the server's hooks for them) → Kitty's error envelope
   * and its HTTP status; also sets the generic headers (Retry-After, and WWW-Authenticate on a 401) and logs internal errors.
   */
  errorEnvelope(err: unknown, req: FastifyRequest, reply: FastifyReply): { status: number; body: ErrorEnvelope };
  /** Body limits (bytes) of tools that need more than the server's default, e.g. attach_receipt's base64 file. */
  toolBodyLimits?: Record<string, number>;
  /**
   * Sends a large JSON answer that is the same on every request (GET /v1/tools, /openapi.json): `head` is the
   * same string each time, `tail` is empty. The server may compress it once. Default: `reply.send(head + tail)`.
   */
  sendPrecomputed?(req: FastifyRequest, reply: FastifyReply, head: string, tail: string): FastifyReply;
}

/** Success envelope `{ ok: true, data }`. */
export function ok(data: unknown) {
  return { ok: true as const, data };
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Registers the REST routes on `parent`, in an encapsulated plugin with its own error handler. */
export async function registerRestRoutes(parent: FastifyInstance, opts: RestAdapterOptions): Promise<void> {
  await parent.register(async (app) => restRoutes(app, opts));
}

async function restRoutes(app: FastifyInstance, opts: RestAdapterOptions): Promise<void> {
  app.setErrorHandler((err, req, reply) => {
    const { status, body } = opts.errorEnvelope(err, req, reply);
    return reply.code(status).send(body);
  });
  const { registry } = opts;
  const etag = `"${registry.version}"`;
  const listing = ok({
    tools_version: registry.version,
    count: registry.catalogue.length,
    tools: registry.catalogue,
    suggested_next: ['register_agent: get an API key (POST /v1/agents)', 'get_me: check your credential (GET /v1)'],
  });
  const listingJson = JSON.stringify(listing);
  const openapiJson = JSON.stringify(buildOpenApi(registry, opts.baseUrl));
  const sendPrecomputed =
    opts.sendPrecomputed ??
    ((_req: FastifyRequest, reply: FastifyReply, head: string, tail: string) =>
      reply.type('application/json; charset=utf-8').send(head + tail));
  // A static tool's stored answer (the same object on every call that adds nothing to it), serialised once, with its ETag.
  const staticBodies = new WeakMap<object, { json: string; etag: string }>();
  const staticBody = (data: Record<string, unknown>) => {
    let body = staticBodies.get(data);
    if (!body) {
      const json = `${JSON.stringify(ok(data))}\n`;
      body = { json, etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"` };
      staticBodies.set(data, body);
    }
    return body;
  };

  const callTool = async (name: string, req: FastifyRequest, reply: FastifyReply) => {
    const tool = registry.tools.get(name);
    if (!tool) throw registry.unknownTool(name);
    const body = req.body;
    if (body === undefined && tool.hasRequiredArgs) {
      throw new ToolError('VALIDATION_ERROR', `${name} needs a JSON object body with its arguments.`, {
        details: { issues: [{ path: '(root)', message: 'body required: this tool has required arguments', code: 'required' }] },
      });
    }
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      throw new ToolError('VALIDATION_ERROR', 'The body must be a JSON object of arguments.', {
        details: { issues: [{ path: '(root)', message: 'expected a JSON object', code: 'invalid_type' }] },
      });
    }
    const result = await registry.callTool(name, body ?? {}, {
      ...opts.callRequest(req),
      idempotencyKeyHeader: header(req, 'idempotency-key'),
    });
    // A replay says so in data (`replayed: true`, as on MCP) and in this header.
    if (result.call.replayed) reply.header('Idempotent-Replayed', 'true');
    if (result.call.static) {
      const { json, etag } = staticBody(result.data);
      return reply.header('ETag', etag).type('application/json; charset=utf-8').send(json);
    }
    return ok(result.data);
  };

  app.post<{ Params: { name: string } }>('/v1/tools/:name', (req, reply) => callTool(req.params.name, req, reply));
  receiptRoutes(app, opts.callRequest);
  app.post('/v1/agents', (req, reply) => callTool('register_agent', req, reply));

  app.get('/v1/tools', (req, reply) => {
    reply.header('ETag', etag).header('Cache-Control', 'no-cache');
    const inm = header(req, 'if-none-match');
    if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')) {
      return reply.code(304).send();
    }
    return sendPrecomputed(req, reply, listingJson, '');
  });

  app.get<{ Params: { name: string } }>('/v1/tools/:name', (req, reply) => {
    const tool = registry.tools.get(req.params.name);
    if (!tool) throw registry.unknownTool(req.params.name);
    reply.header('ETag', etag);
    return ok({ ...tool, suggested_next: [`${tool.name}: call it with POST /v1/tools/${tool.name}`] });
  });

  const sandbox = (name: string, req: FastifyRequest) => {
    const body = req.body;
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      throw new ToolError('VALIDATION_ERROR', 'The body must be a JSON object of arguments.', {
        details: { issues: [{ path: '(root)', message: 'expected a JSON object', code: 'invalid_type' }] },
      });
    }
    const v = registry.validateArgs(name, body ?? {});
    if (!v.ok) {
      throw new ToolError(
        'VALIDATION_ERROR',
        `Invalid arguments for ${name}: ${v.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        {
          details: { issues: v.issues },
        },
      );
    }
    return ok({
      valid: true,
      tool: name,
      stored: false,
      suggested_next: [`${name}: the arguments are valid; call it with POST /v1/tools/${name}`],
    });
  };
  app.post<{ Params: { name: string } }>('/v1/sandbox/tools/:name', (req) => sandbox(req.params.name, req));
  // A static route wins over the parametric one, so only these tools (and their sandbox) accept the larger body.
  for (const [name, bodyLimit] of Object.entries(opts.toolBodyLimits ?? {})) {
    app.post(`/v1/tools/${name}`, { bodyLimit }, (req, reply) => callTool(name, req, reply));
    app.post(`/v1/sandbox/tools/${name}`, { bodyLimit }, (req) => sandbox(name, req));
  }

  app.get('/v1', async (req) => {
    const r = opts.callRequest(req);
    // Authentication and scope: get_me's own rule (a read tool), enforced by the registry.
    const me = await registry.callTool('get_me', {}, r);
    return ok({
      ...me.data,
      links: {
        tools: `${opts.baseUrl}/v1/tools`,
        call: `${opts.baseUrl}/v1/tools/{name}`,
        sandbox: `${opts.baseUrl}/v1/sandbox/tools/{name}`,
        openapi: `${opts.baseUrl}/openapi.json`,
        mcp: `${opts.baseUrl}/mcp`,
        mcp_docs: `${opts.baseUrl}/mcp/docs`,
      },
      tools_version: registry.version,
    });
  });

  app.get('/openapi.json', (req, reply) => sendPrecomputed(req, reply, openapiJson, ''));
}
