/**
 * The registry's contract: the error table (code → HTTP status → MCP), the tRPC internals it
 * reads (pinned to the installed @trpc/server), start-up refusal of malformed tools, the
 * catalogue's JSON Schemas and the scope check.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRequire } from 'node:module';
import { ERROR_TABLE, ToolError, toToolError, appRouter, buildRegistry, READ } from '../../src/index.ts';
import { router, readTool } from '../../src/kernel/trpc.ts';

describe('error table', () => {
  it('pins every code to its HTTP status and MCP projection', () => {
    const pinned = Object.fromEntries(Object.entries(ERROR_TABLE).map(([k, v]) => [k, [v.status, v.mcp]]));
    expect(pinned).toMatchObject({
      VALIDATION_ERROR: [400, 'tool_error'],
      UNAUTHENTICATED: [401, 'tool_error'],
      FORBIDDEN: [403, 'tool_error'],
      NOT_FOUND: [404, 'tool_error'],
      HANDLE_TAKEN: [409, 'tool_error'],
      IDEMPOTENCY_KEY_REUSED: [409, 'tool_error'],
      NOT_SETTLED: [409, 'tool_error'],
      INVITE_UNAVAILABLE: [409, 'tool_error'],
      GROUP_ARCHIVED: [409, 'tool_error'],
      PAYLOAD_TOO_LARGE: [413, 'tool_error'],
      RATE_LIMITED: [429, 'tool_error'],
      INTERNAL: [500, 'tool_error'],
    });
    for (const [code, v] of Object.entries(ERROR_TABLE)) {
      const e = new ToolError(code as keyof typeof ERROR_TABLE, 'x');
      expect(e.status).toBe(v.status);
      expect(e.toBody()).toMatchObject({ code, message: 'x' });
      expect(e.toBody().suggested_action.length).toBeGreaterThan(5);
    }
  });

  it('turns unknown failures into INTERNAL without leaking them', () => {
    const e = toToolError(new Error('secret stack detail'));
    expect(e.kittyCode).toBe('INTERNAL');
    expect(JSON.stringify(e.toBody())).not.toContain('secret');
  });
});

describe('registry', () => {
  it('reads the tRPC router shape of the pinned version', () => {
    const req = createRequire(import.meta.url);
    const pkg = req('@trpc/server/package.json') as { version: string };
    expect(pkg.version).toBe('11.25.2');
    const procs = (appRouter._def as any).procedures;
    const def = procs.create_group._def;
    expect(def.meta.title).toBe('Create a group');
    // writeTool's idempotency_key input, then the tool's own; merged metadata from the base.
    expect(def.inputs).toHaveLength(2);
    expect(def.output).toBeDefined();
    expect(def.type).toBe('mutation');
    expect(procs.get_group._def.inputs).toHaveLength(1);
    expect(procs.register_agent._def.meta).toMatchObject({ auth: 'none', idempotency: 'none', title: 'Register an agent' });
  });

  it('gives the same catalogue order and version whatever order the router lists its tools in', () => {
    const procs = (appRouter._def as unknown as { procedures: Record<string, unknown> }).procedures;
    const byArea = new Map<string, string[]>();
    for (const t of buildRegistry(appRouter).catalogue) byArea.set(t.area, [...(byArea.get(t.area) ?? []), t.name]);
    // Same areas in the same order, each area's tools reversed: what a loader that keeps insertion order could produce.
    const shuffled = router(
      Object.fromEntries([...byArea.values()].flatMap((names) => [...names].reverse()).map((n) => [n, procs[n]])) as never,
    );
    const a = buildRegistry(appRouter);
    const b = buildRegistry(shuffled);
    expect(b.catalogue.map((t) => t.name)).toEqual(a.catalogue.map((t) => t.name));
    expect(b.version).toBe(a.version);
  });

  it('emits strict JSON Schema 2020-12 per tool and a stable version', () => {
    const r1 = buildRegistry(appRouter);
    const r2 = buildRegistry(appRouter);
    expect(r1.version).toBe(r2.version);
    expect(Object.keys(r1.envelope.properties as object)).toEqual(['suggested_next', 'inbox', 'replayed']);
    expect(r1.envelope.required).toEqual(['suggested_next']);
    expect(r1.envelopeText).toMatch(/suggested_next.*inbox.*replayed/);
    for (const t of r1.catalogue) {
      // No $schema: MCP and OpenAPI 3.1 default to 2020-12. Inputs closed, outputs open (a field added later validates).
      expect(t.input_schema.$schema).toBeUndefined();
      expect(t.input_schema.additionalProperties).toBe(false);
      expect(t.output_schema.additionalProperties).toBeUndefined();
      // The envelope fields are described once (registry.envelope), not in each tool's output schema.
      expect((t.output_schema.properties as any).suggested_next).toBeUndefined();
      if (t.kind === 'write' && t.idempotency !== 'none') expect(t.input_schema.required).toContain('idempotency_key');
      expect(t.scope).toBe(t.auth === 'none' ? null : t.kind === 'read' ? 'svc:read' : 'svc:write');
      expect(t.annotations.readOnlyHint).toBe(t.kind === 'read');
    }
  });

  it('refuses to start on a tool without metadata or output schema', () => {
    const noMeta = router({
      bad: readTool
        .input(z.strictObject({}))
        .output(z.object({}))
        .query(() => ({})),
    });
    expect(() => buildRegistry(noMeta)).toThrow(/metadata/);
    const noOutput = router({
      bad: readTool
        .meta({ area: 'x', title: 'x', description: 'x', annotations: READ, errors: {} })
        .input(z.strictObject({}))
        .query(() => ({})),
    });
    expect(() => buildRegistry(noOutput)).toThrow(/output schema/);
    const loose = router({
      bad: readTool
        .meta({ area: 'x', title: 'x', description: 'x', annotations: READ, errors: {} })
        .input(z.object({ a: z.string() }))
        .output(z.object({}))
        .query(() => ({})),
    });
    expect(() => buildRegistry(loose)).toThrow(/strictObject/);
  });
});
