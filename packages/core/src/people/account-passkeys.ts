/** The account page's sign-in methods: passkeys (list, rename, remove) and linked OpenID identities. */
import { z } from 'zod';
import { ToolError } from '../kernel/errors.ts';
import { text } from '../kernel/text.ts';
import { accountRouterFactory, personProcedure } from './account-trpc.ts';
import { change, notFound } from './account-scope.ts';

export const passkeysRouter = accountRouterFactory({
  /** This person's passkeys and linked OpenID identities (the sign-in methods). */
  list: personProcedure.query(async ({ ctx }) => {
    const humanId = ctx.session.humanId;
    const [passkeys, identities] = await Promise.all([
      ctx.services.prisma.passkey.findMany({ where: { humanId }, orderBy: { createdAt: 'asc' } }),
      ctx.services.prisma.externalIdentity.findMany({ where: { humanId }, orderBy: { createdAt: 'asc' } }),
    ]);
    return {
      passkeys: passkeys.map((p) => ({
        passkey_id: p.id,
        name: p.name,
        device_type: p.deviceType,
        backed_up: p.backedUp,
        created_at: p.createdAt.toISOString(),
        last_used_at: p.lastUsedAt?.toISOString() ?? null,
      })),
      identities: identities.map((i) => ({ identity_id: i.id, issuer: i.issuer, email: i.email, created_at: i.createdAt.toISOString() })),
    };
  }),
  /** Renames a passkey (its name is the authenticator's at first, e.g. "iCloud Keychain"). */
  rename: personProcedure
    .input(z.strictObject({ passkey_id: z.string().min(1).max(1024), name: text(1, 60, 'name').trim().min(1, 'name must not be blank') }))
    .mutation(({ ctx, input }) =>
      change(ctx, async (tx, log) => {
        const passkey = await tx.passkey.findFirst({ where: { id: input.passkey_id, humanId: ctx.session.humanId } });
        if (!passkey) throw notFound('passkey');
        if (passkey.name === input.name) return { passkey_id: passkey.id, name: passkey.name };
        await tx.passkey.update({ where: { id: passkey.id }, data: { name: input.name } });
        await log('passkey_renamed', null, { passkey_name: input.name, previous_name: passkey.name });
        return { passkey_id: passkey.id, name: input.name };
      }),
    ),
  /** Removes a passkey. @throws INVALID_STATE when it is the last way to sign in. */
  remove: personProcedure.input(z.strictObject({ passkey_id: z.string().min(1).max(1024) })).mutation(({ ctx, input }) =>
    change(ctx, async (tx, log) => {
      const humanId = ctx.session.humanId;
      // Lock the person's row so two removals cannot both see "one more left".
      await tx.$queryRaw`SELECT id FROM humans WHERE id = ${humanId}::uuid FOR UPDATE`;
      const passkey = await tx.passkey.findFirst({ where: { id: input.passkey_id, humanId } });
      if (!passkey) throw notFound('passkey');
      const [passkeys, identities] = await Promise.all([
        tx.passkey.count({ where: { humanId } }),
        tx.externalIdentity.count({ where: { humanId } }),
      ]);
      if (passkeys + identities <= 1) {
        throw new ToolError('INVALID_STATE', 'This is your only way to sign in; removing it would lock you out.', {
          suggestedAction: 'Add another passkey first, then remove this one.',
        });
      }
      await tx.passkey.delete({ where: { id: passkey.id } });
      await log('passkey_removed', null, { passkey_name: passkey.name });
      return { removed: true };
    }),
  ),
});
