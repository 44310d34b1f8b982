/**
 * Receipts attached to expenses: the bytes' type is detected from their content (file-type),
 * never from the file name; at most `maxBytes` each and MAX_RECEIPTS_PER_EXPENSE per expense.
 * Only members of the expense's group see or download them: by bearer credential, or by a
 * short-lived link signed with HMAC-SHA-256 (the link is a capability: whoever holds it may
 * download until it expires). Receipts stay when their expense is soft-deleted.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db, ReceiptConfig, ReceiptStore, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { requireMembership, assertNotArchived } from '../../access/groups.ts';
import { assertCanEdit } from './edit-rights.ts';
import { findExpense } from './store.ts';
import { postgresReceiptStore } from './receipt-store.ts';

/** Content types accepted, as file-type names them (HEIF covers HEIC files whose major brand is mif1). */
export const RECEIPT_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif', 'application/pdf'] as const;
type ReceiptType = (typeof RECEIPT_TYPES)[number];
export const MAX_RECEIPTS_PER_EXPENSE = 10;
export const DEFAULT_RECEIPT_MAX_BYTES = 5 * 1024 * 1024;
/** The schema's hard cap on content_base64 (characters); the configured byte limit is checked after decoding. */
export const MAX_RECEIPT_BASE64_CHARS = 36_000_000;

/** Used only when the server passes no secret (tests, a single process): links then work on this process alone. */
const processSecret = randomBytes(32).toString('base64url');

export function receiptConfig(services: Services): ReceiptConfig {
  return services.config.receipts ?? { maxBytes: DEFAULT_RECEIPT_MAX_BYTES, linkSecret: processSecret, linkTtlSeconds: 300 };
}

function storeFor(services: Services, kind?: string): ReceiptStore {
  const configured = services.receiptStore ?? postgresReceiptStore;
  return kind === undefined || kind === configured.kind ? configured : postgresReceiptStore;
}

/** Decodes and checks the content: real base64, not empty, not over the limit, one of RECEIPT_TYPES by its bytes. */
async function decodeReceipt(contentBase64: string, maxBytes: number): Promise<{ bytes: Buffer; contentType: string }> {
  const path = 'content_base64';
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(contentBase64) || contentBase64.length % 4 === 1)
    throw validationError(
      path,
      'is not base64 (standard alphabet A-Z a-z 0-9 + /, optional = padding, no spaces or line breaks)',
      'invalid_base64',
    );
  const bytes = Buffer.from(contentBase64, 'base64');
  if (bytes.length === 0) throw validationError(path, 'is empty', 'too_small');
  if (bytes.length > maxBytes) {
    const e = validationError(path, `decodes to ${bytes.length} bytes; at most ${maxBytes} are accepted`, 'too_big');
    (e.details as Record<string, unknown>).max_bytes = maxBytes;
    throw e;
  }
  // Loaded by the first receipt, not at start-up.
  const { fileTypeFromBuffer } = await import('file-type');
  const detected = await fileTypeFromBuffer(bytes);
  if (!detected || !(RECEIPT_TYPES as readonly string[]).includes(detected.mime)) {
    throw validationError(
      path,
      `content is ${detected ? detected.mime : 'of an unknown type'}; accepted: JPEG, PNG, WebP, HEIC or PDF (detected from the bytes, not the file name)`,
      'unsupported_type',
    );
  }
  return { bytes, contentType: detected.mime };
}

type ReceiptRow = { id: string; filename: string; contentType: string; sizeBytes: number; createdAt: Date; createdById: string };

export function toReceipt(r: ReceiptRow) {
  return {
    receipt_id: r.id,
    content_type: r.contentType as ReceiptType,
    size_bytes: r.sizeBytes,
    filename: r.filename,
    created_at: r.createdAt.toISOString(),
  };
}

/** Signature of a download link: HMAC-SHA-256 over "receipt id.expiry (unix seconds)", base64url. */
function signature(secret: string, receiptId: string, expires: number): string {
  return createHmac('sha256', secret).update(`${receiptId}.${expires}`).digest('base64url');
}

/** A download link valid for `linkTtlSeconds` from now. */
function receiptLink(services: Services, receiptId: string): { url: string; expires_at: string } {
  const cfg = receiptConfig(services);
  const expires = Math.floor(services.now().getTime() / 1000) + cfg.linkTtlSeconds;
  const sig = signature(cfg.linkSecret, receiptId, expires);
  return {
    url: `${services.config.baseUrl}/v1/receipts/${receiptId}?expires=${expires}&sig=${sig}`,
    expires_at: new Date(expires * 1000).toISOString(),
  };
}

/** The receipts of an expense (oldest first) with a download link each. */
export async function listReceipts(db: Db, services: Services, expenseId: string) {
  const rows = await db.receipt.findMany({ where: { expenseId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map((r) => {
    const link = receiptLink(services, r.id);
    return { ...toReceipt(r), download_url: link.url, download_url_expires_at: link.expires_at };
  });
}

/** attach_receipt: a member who may edit the expense adds a receipt (the expense row is locked so the per-expense limit holds). */
export async function attachReceipt(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  input: { expense_id: string; content_base64: string; filename: string },
  services: Services,
) {
  const { bytes, contentType } = await decodeReceipt(input.content_base64, receiptConfig(services).maxBytes);
  const first = await findExpense(db, input.expense_id);
  const { group, membership } = await requireMembership(db, first.groupId, actor.agentId);
  await db.$executeRaw`SELECT 1 FROM expenses WHERE id = ${first.id}::uuid FOR NO KEY UPDATE`;
  const e = await findExpense(db, first.id);
  assertNotArchived(group);
  assertCanEdit(group, membership, e);
  if (e.deletedAt) throw new ToolError('EXPENSE_DELETED', `Expense ${e.id} is deleted; restore_expense brings it back first.`);
  const count = await db.receipt.count({ where: { expenseId: e.id } });
  if (count >= MAX_RECEIPTS_PER_EXPENSE)
    throw new ToolError('INVALID_STATE', `Expense ${e.id} already has ${count} receipts (at most ${MAX_RECEIPTS_PER_EXPENSE}).`, {
      details: { max_receipts: MAX_RECEIPTS_PER_EXPENSE },
      suggestedAction: 'remove_receipt one first.',
    });
  const store = storeFor(services);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const row = await db.receipt.create({
    data: {
      expenseId: e.id,
      groupId: group.id,
      filename: input.filename,
      contentType,
      sizeBytes: bytes.length,
      sha256,
      storage: store.kind,
      createdById: actor.agentId,
      createdAt: services.now(),
    },
  });
  await store.put(db, row.id, bytes, contentType);
  await appendActivity(db, {
    groupId: group.id,
    actorId: actor.agentId,
    action: 'expense.receipt_attached',
    entityType: 'expense',
    entityId: e.id,
    before: null,
    after: toReceipt(row),
  });
  return { receipt: toReceipt(row), expenseId: e.id };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function findReceipt(db: Db, receiptId: string) {
  const r = UUID.test(receiptId) ? await db.receipt.findUnique({ where: { id: receiptId } }) : null;
  if (!r)
    throw new ToolError('NOT_FOUND', `No receipt with receipt_id ${receiptId}.`, {
      suggestedAction: 'get_expense lists the receipts of an expense.',
    });
  return r;
}

/** remove_receipt: its uploader, or anyone who may edit the expense, deletes the receipt and its bytes. */
export async function removeReceipt(db: Db, actor: Pick<Actor, 'agentId'>, input: { receipt_id: string }, services: Services) {
  const receiptId = input.receipt_id;
  const r = await findReceipt(db, receiptId);
  const { group, membership } = await requireMembership(db, r.groupId, actor.agentId);
  assertNotArchived(group);
  if (r.createdById !== actor.agentId) assertCanEdit(group, membership, await findExpense(db, r.expenseId));
  const deleted = await db.receipt.deleteMany({ where: { id: r.id } });
  if (deleted.count === 0) throw new ToolError('NOT_FOUND', `No receipt with receipt_id ${receiptId}.`);
  await storeFor(services, r.storage).delete(db, r.id);
  await appendActivity(db, {
    groupId: group.id,
    actorId: actor.agentId,
    action: 'expense.receipt_removed',
    entityType: 'expense',
    entityId: r.expenseId,
    before: toReceipt(r),
    after: null,
  });
  return { receipt: toReceipt(r), expenseId: r.expenseId };
}

/**
 * GET /v1/receipts/{id}: the bytes for a member (bearer credential with svc:read) or for a valid,
 * unexpired signed link. Anyone else gets NOT_FOUND (no such receipt), FORBIDDEN (not a member;
 * link invalid or expired) or UNAUTHENTICATED — never bytes.
 */
export async function openReceipt(
  services: Services,
  access: { auth: { agentId: string; scopes: string[] } | null; expires?: string | undefined; sig?: string | undefined },
  receiptId: string,
) {
  const db = services.prisma;
  if (access.sig !== undefined || access.expires !== undefined) {
    const cfg = receiptConfig(services);
    const expires = Number(access.expires);
    const expected = Number.isSafeInteger(expires) ? Buffer.from(signature(cfg.linkSecret, receiptId, expires)) : Buffer.alloc(0);
    const given = Buffer.from(access.sig ?? '');
    const valid = expected.length > 0 && given.length === expected.length && timingSafeEqual(given, expected);
    if (!valid || expires * 1000 < services.now().getTime())
      throw new ToolError('FORBIDDEN', 'This download link is invalid or has expired.', {
        suggestedAction: 'get_expense returns fresh download links.',
      });
  } else {
    if (!access.auth)
      throw new ToolError('UNAUTHENTICATED', 'Send "Authorization: Bearer <api key>" or use a signed link from get_expense.');
    if (!access.auth.scopes.includes('svc:read'))
      throw new ToolError('FORBIDDEN', 'This credential lacks the scope svc:read.', { details: { required_scope: 'svc:read' } });
  }
  const r = await findReceipt(db, receiptId);
  if (access.auth && access.sig === undefined) await requireMembership(db, r.groupId, access.auth.agentId);
  const bytes = await storeFor(services, r.storage).get(db, r.id);
  if (!bytes) throw new ToolError('NOT_FOUND', `The content of receipt ${receiptId} is gone.`);
  return { bytes, contentType: r.contentType, filename: r.filename, sizeBytes: r.sizeBytes };
}
