/**
 * Tool bases for tools about one group (`group_id` in their input): after the tool's input is parsed
 * and before its handler, the group and the caller's active membership are read (write tools hold the
 * group lock, access/groups.ts `requireMembership`) and, for `groupAdminTool`, the admin role checked.
 * The handler gets them as `ctx.group` and `ctx.membership`. The errors of that step are declared here
 * once and merged into the tool's `errors` (a tool may give its own reason for the same code):
 * NOT_FOUND (no such group), FORBIDDEN (not a member; not an admin).
 *
 * Used like the kernel bases: `groupMemberTool.meta({...}).input(z.strictObject({ group_id, ... }))…`.
 */
import type { z } from 'zod';
import { readTool, writeTool } from '../../kernel/trpc.ts';
import type { ToolErrors, ToolMeta } from '../../kernel/meta.ts';
import { requireMembership, assertAdmin } from '../groups.ts';

/** The errors the base raises, code → reason (first in the tool's "Errors:" sentence, in this order). */
const MEMBER_ERRORS: ToolErrors = { NOT_FOUND: 'no such group', FORBIDDEN: 'not a member' };
const ADMIN_ERRORS: ToolErrors = { NOT_FOUND: 'no such group', FORBIDDEN: 'not a member, or not an admin' };

/** The base's errors, then the tool's; a code the tool also lists keeps the base's place and takes the tool's reason. */
function withErrors(meta: ToolMeta, base: ToolErrors): ToolMeta {
  return { ...meta, errors: { ...base, ...meta.errors } };
}

/** An input naming one group. */
type GroupInput = z.ZodType<{ group_id: string }, Record<string, unknown>>;

/**
 * A write base's `.input` for a schema naming a group: tRPC's own signature checks that the schema can be
 * merged with the base's (`idempotency_key`), which a generic schema type cannot show; an object schema can.
 */
const groupInput = <B extends { input: (schema: never) => unknown }>(b: B) =>
  b.input as unknown as <T extends GroupInput>(schema: T) => ReturnType<typeof writeTool.input<T>>;

/** Base for read tools of a group's members (scope svc:read). */
export const groupMemberTool = {
  meta: (meta: ToolMeta) => {
    const b = readTool.meta(withErrors(meta, MEMBER_ERRORS));
    return {
      input: <T extends GroupInput>(schema: T) =>
        b
          .input(schema)
          .use(async ({ ctx, input, next }) => next({ ctx: await requireMembership(ctx.db, input.group_id, ctx.auth.agentId) })),
    };
  },
};

/** Base for write tools of a group's members (scope svc:write, idempotency key): the membership is read holding the group lock. */
export const groupMemberWriteTool = {
  meta: (meta: ToolMeta) => {
    const b = writeTool.meta(withErrors(meta, MEMBER_ERRORS));
    return {
      input: <T extends GroupInput>(schema: T) =>
        groupInput(b)(schema).use(async ({ ctx, input, next }) =>
          next({ ctx: await requireMembership(ctx.db, input.group_id, ctx.auth.agentId, { lock: true }) }),
        ),
    };
  },
};

/**
 * Base for write tools of a group's admins: as `groupMemberWriteTool`, then FORBIDDEN unless the caller
 * is an admin ("Only a group admin can <what>.").
 */
export const groupAdminTool = (what: string) => ({
  meta: (meta: ToolMeta) => {
    const b = writeTool.meta(withErrors(meta, ADMIN_ERRORS));
    return {
      input: <T extends GroupInput>(schema: T) =>
        groupInput(b)(schema).use(async ({ ctx, input, next }) => {
          const access = await requireMembership(ctx.db, input.group_id, ctx.auth.agentId, { lock: true });
          assertAdmin(access.membership, what);
          return next({ ctx: access });
        }),
    };
  },
});
