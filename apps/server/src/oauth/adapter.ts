/**
 * Storage adapter for `oidc-provider` over the `oauth_payloads` table (one row per model instance).
 *
 * Bearer values (authorization codes, refresh tokens, opaque access tokens, registration access
 * tokens, session and interaction ids) are the ids oidc-provider hands to the adapter. Only their
 * SHA-256 digest is stored as the row id, and the `jti` copy inside the payload is removed, so a
 * database leak yields no usable token. Client ids are public and kept as they are.
 *
 * Destroying a Grant (revocation of a refresh token, reuse of a rotated refresh token, the account
 * page's disconnect) marks Kitty's `oauth_connections` row revoked in the same statement batch, which
 * is what token verification checks (see verify.ts).
 */
import { createHash } from 'node:crypto';
import type { Prisma, PrismaClient } from '@kitty/db';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/** Models whose id is a public identifier rather than a secret. */
const PUBLIC_ID_MODELS = new Set(['Client', 'Grant', 'ReplayDetection', 'PushedAuthorizationRequest']);

function storedId(model: string, id: string): string {
  return PUBLIC_ID_MODELS.has(model) ? id : `sha256:${createHash('sha256').update(id, 'utf8').digest('base64url')}`;
}

export class PrismaOidcAdapter implements Adapter {
  private readonly model: string;
  private readonly prisma: PrismaClient;
  /** Called after a grant is destroyed (this instance drops its cached verdicts at once). */
  private readonly onGrantRevoked: ((grantId: string) => void) | undefined;

  constructor(model: string, prisma: PrismaClient, onGrantRevoked?: (grantId: string) => void) {
    this.model = model;
    this.prisma = prisma;
    this.onGrantRevoked = onGrantRevoked;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const rowId = storedId(this.model, id);
    const stored: Record<string, unknown> = { ...payload };
    if (!PUBLIC_ID_MODELS.has(this.model)) delete stored.jti;
    const data = {
      payload: stored as Prisma.InputJsonObject,
      grantId: payload.grantId ?? null,
      userCode: payload.userCode ?? null,
      uid: payload.uid ?? null,
      expiresAt: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
    };
    await this.prisma.oAuthPayload.upsert({
      where: { type_id: { type: this.model, id: rowId } },
      create: { id: rowId, type: this.model, ...data },
      update: data,
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const row = await this.prisma.oAuthPayload.findUnique({ where: { type_id: { type: this.model, id: storedId(this.model, id) } } });
    return this.toPayload(row, id);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const row = await this.prisma.oAuthPayload.findFirst({ where: { type: this.model, uid } });
    // A Session's id is its cookie value; oidc-provider only needs the payload here and keeps its own copy of the id.
    return this.toPayload(row, undefined);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const row = await this.prisma.oAuthPayload.findFirst({ where: { type: this.model, userCode } });
    return this.toPayload(row, undefined);
  }

  async consume(id: string): Promise<void> {
    await this.prisma.oAuthPayload.updateMany({
      where: { type: this.model, id: storedId(this.model, id) },
      data: { consumedAt: new Date() },
    });
  }

  async destroy(id: string): Promise<void> {
    if (this.model === 'Grant') {
      // The grant is gone (revocation, refresh-token reuse): the connection is disconnected for good.
      await this.prisma.$transaction([
        this.prisma.oAuthConnection.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } }),
        this.prisma.oAuthPayload.deleteMany({ where: { type: this.model, id } }),
      ]);
      this.onGrantRevoked?.(id);
      return;
    }
    await this.prisma.oAuthPayload.deleteMany({ where: { type: this.model, id: storedId(this.model, id) } });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.prisma.oAuthPayload.deleteMany({ where: { type: this.model, grantId } });
  }

  private toPayload(
    row: { payload: unknown; expiresAt: Date | null; consumedAt: Date | null } | null,
    id: string | undefined,
  ): AdapterPayload | undefined {
    if (!row) return undefined;
    if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) return undefined;
    const payload = { ...(row.payload as AdapterPayload) };
    if (id !== undefined && !PUBLIC_ID_MODELS.has(this.model) && 'kind' in payload && payload.jti === undefined) payload.jti = id;
    if (row.consumedAt) payload.consumed = Math.floor(row.consumedAt.getTime() / 1000);
    return payload;
  }
}

/** Deletes expired rows of the authorization server's storage (run periodically). */
export async function purgeExpiredOidcPayloads(prisma: PrismaClient, now = new Date()): Promise<number> {
  const r = await prisma.oAuthPayload.deleteMany({ where: { expiresAt: { lt: now } } });
  return r.count;
}
