/**
 * Receipts over real HTTP: each accepted type made by an image library (sharp) or written to the
 * PDF grammar, hostile uploads, the per-expense and size limits, downloads by bearer and by signed
 * link, and that nobody outside the group ever gets the bytes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
const MAX = 64 * 1024;
beforeAll(async () => {
  s = await startTestServer({ receiptMaxBytes: MAX, bodyLimit: 16 * 1024 });
});
afterAll(async () => s?.close());

type Agent = Awaited<ReturnType<TestServer['agent']>>;
async function call(a: Agent, tool: string, args: Record<string, unknown>) {
  const body =
    tool.startsWith('get_') || tool.startsWith('list_') || tool === 'export_group'
      ? args
      : { ...args, idempotency_key: `k-${randomUUID()}` };
  return s.http(`/v1/tools/${tool}`, { body, apiKey: a.apiKey });
}
async function ok(a: Agent, tool: string, args: Record<string, unknown>) {
  const r = await call(a, tool, args);
  if (r.status !== 200) throw new Error(`${tool}: ${r.status} ${r.text}`);
  return r.json.data;
}

const image = (format: 'jpeg' | 'png' | 'webp' | 'avif') => {
  const img = sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 250, g: 120, b: 0 } } });
  return img[format]().toBuffer();
};

/** A one-page PDF 1.4 with a correct cross-reference table. */
function pdf(): Buffer {
  const objs = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** An ISO-BMFF (HEIF) file whose major brand is heic: sharp's AVIF output with its ftyp brands rewritten (no HEVC encoder here). */
async function heic(): Promise<Buffer> {
  const b = Buffer.from(await image('avif'));
  expect(b.subarray(4, 12).toString('latin1')).toBe('ftypavif');
  b.write('heic', 8, 'latin1');
  return b;
}

let owner: Agent, member: Agent, outsider: Agent, groupId: string, expenseId: string;
beforeAll(async () => {
  [owner, member, outsider] = [await s.agent('owner'), await s.agent('member'), await s.agent('outsider')];
  groupId = (await ok(owner, 'create_group', { name: 'Receipts', currency: 'EUR' })).group.group_id;
  const inv = (await ok(owner, 'create_invite', { group_id: groupId })).invite;
  await ok(member, 'join_group', { code: inv.code });
  expenseId = (await ok(owner, 'add_expense', { group_id: groupId, description: 'Dinner', amount_minor: 4200 })).expense.expense_id;
});

describe('attach_receipt', () => {
  it('accepts JPEG, PNG, WebP, HEIC and PDF, typed by their bytes, and serves them back byte for byte', async () => {
    const files: Array<[string, Buffer, string]> = [
      ['a.jpg', await image('jpeg'), 'image/jpeg'],
      ['b.png', await image('png'), 'image/png'],
      ['c.webp', await image('webp'), 'image/webp'],
      ['d.heic', await heic(), 'image/heic'],
      ['e.pdf', pdf(), 'application/pdf'],
      // The name does not decide the type: a PNG called .pdf is a PNG.
      ['really-a-png.pdf', await image('png'), 'image/png'],
    ];
    for (const [filename, bytes, type] of files) {
      const r = await ok(member, 'attach_receipt', { expense_id: expenseId, filename, content_base64: bytes.toString('base64') });
      expect(r.receipt).toMatchObject({ filename, content_type: type, size_bytes: bytes.length });
      const dl = await fetch(`${s.url}/v1/receipts/${r.receipt.receipt_id}`, { headers: { authorization: `Bearer ${owner.apiKey}` } });
      expect(dl.status).toBe(200);
      expect(dl.headers.get('content-type')).toBe(type);
      expect(dl.headers.get('content-disposition')).toContain('attachment');
      expect(dl.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await dl.arrayBuffer()).equals(bytes)).toBe(true);
    }
    // Decodable, not just magic bytes: the image library reads back what it wrote.
    expect((await sharp(await image('webp')).metadata()).width).toBe(8);
    const got = await ok(member, 'get_expense', { expense_id: expenseId });
    expect(got.receipts.map((x: { filename: string }) => x.filename)).toEqual(files.map((f) => f[0]));
  });

  it('refuses hostile content with VALIDATION_ERROR naming content_base64, and stores nothing', async () => {
    const before = await s.kitty.services.prisma.receipt.count();
    const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(120)]);
    const exe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(200)]);
    const cases: Array<[string, string, string]> = [
      ['evil.png', elf.toString('base64'), 'unsupported_type'],
      ['setup.png', exe.toString('base64'), 'unsupported_type'],
      ['fake.jpg', Buffer.from('hello, I am text pretending to be a JPEG').toString('base64'), 'unsupported_type'],
      ['x.avif', (await image('avif')).toString('base64'), 'unsupported_type'],
      ['x.png', 'not base64!!', 'invalid_base64'],
      ['x.png', 'iVBORw0KGgo\nAAAA', 'invalid_base64'],
      ['x.png', 'A', 'invalid_base64'],
      ['big.png', Buffer.concat([await image('png'), Buffer.alloc(MAX)]).toString('base64'), 'too_big'],
    ];
    for (const [filename, content_base64, code] of cases) {
      const r = await call(member, 'attach_receipt', { expense_id: expenseId, filename, content_base64 });
      expect(r.status, filename).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_ERROR');
      expect(r.json.error.details.issues[0]).toMatchObject({ path: 'content_base64', code });
    }
    expect(await s.kitty.services.prisma.receipt.count()).toBe(before);
  });

  it('takes a body above the server default only on attach_receipt; past the receipt limit the body is refused whole', async () => {
    const png = await image('png');
    const padded = Buffer.concat([png, Buffer.alloc(40 * 1024)]); // ~54 KB of base64: over bodyLimit (16 KB), under the receipt limit
    const other = await call(member, 'update_me', { description: 'x'.repeat(20 * 1024) });
    expect(other.status).toBe(413);
    const r = await ok(member, 'attach_receipt', {
      expense_id: expenseId,
      filename: 'padded.png',
      content_base64: padded.toString('base64'),
    });
    expect(r.receipt.size_bytes).toBe(padded.length);
    const sandbox = await s.http('/v1/sandbox/tools/attach_receipt', {
      body: { expense_id: expenseId, filename: 'padded.png', content_base64: padded.toString('base64'), idempotency_key: 'sandbox-key-1' },
    });
    expect(sandbox.status).toBe(200);
    expect(sandbox.json.data).toMatchObject({ valid: true, stored: false });
    const huge = await call(member, 'attach_receipt', { expense_id: expenseId, filename: 'h.png', content_base64: 'A'.repeat(200 * 1024) });
    expect(huge.status).toBe(413);
  });

  it('a retry with the same idempotency key stores the file once and answers the same receipt', async () => {
    const before = await s.kitty.services.prisma.receipt.count();
    const body = {
      expense_id: expenseId,
      filename: 'retry.png',
      content_base64: (await image('png')).toString('base64'),
      idempotency_key: `retry-${randomUUID()}`,
    };
    const [a, b] = await Promise.all([1, 2].map(() => s.http('/v1/tools/attach_receipt', { body, apiKey: member.apiKey })));
    expect([a!.status, b!.status]).toEqual([200, 200]);
    expect(a!.json.data.receipt.receipt_id).toBe(b!.json.data.receipt.receipt_id);
    expect(await s.kitty.services.prisma.receipt.count()).toBe(before + 1);
  });

  it('keeps at most 10 per expense (INVALID_STATE), and remove_receipt makes room', async () => {
    const e = (await ok(owner, 'add_expense', { group_id: groupId, description: 'Taxi', amount_minor: 900 })).expense.expense_id;
    const png = (await image('png')).toString('base64');
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push((await ok(owner, 'attach_receipt', { expense_id: e, filename: `${i}.png`, content_base64: png })).receipt.receipt_id);
    const eleventh = await call(owner, 'attach_receipt', { expense_id: e, filename: '10.png', content_base64: png });
    expect(eleventh.status).toBe(409);
    expect(eleventh.json.error.code).toBe('INVALID_STATE');
    await ok(owner, 'remove_receipt', { receipt_id: ids[0] });
    await ok(owner, 'attach_receipt', { expense_id: e, filename: '10.png', content_base64: png });
    expect(await s.kitty.services.prisma.receiptContent.count({ where: { receiptId: ids[0]! } })).toBe(0);
  });
});

describe('who gets the bytes', () => {
  it('an outsider gets 403 on the tools and the download, never bytes; an unknown id is 404', async () => {
    const r = await ok(owner, 'attach_receipt', {
      expense_id: expenseId,
      filename: 'secret.png',
      content_base64: (await image('png')).toString('base64'),
    });
    const id = r.receipt.receipt_id;
    const dl = await s.http(`/v1/receipts/${id}`, { apiKey: outsider.apiKey });
    expect(dl.status).toBe(403);
    expect(dl.json.error.code).toBe('FORBIDDEN');
    expect((await s.http(`/v1/receipts/${id}`)).status).toBe(401);
    expect((await s.http(`/v1/receipts/${randomUUID()}`, { apiKey: owner.apiKey })).status).toBe(404);
    expect((await s.http('/v1/receipts/not-a-uuid', { apiKey: owner.apiKey })).status).toBe(404);
    expect((await call(outsider, 'get_expense', { expense_id: expenseId })).status).toBe(403);
    expect((await call(outsider, 'remove_receipt', { receipt_id: id })).status).toBe(403);
    expect(
      (
        await call(outsider, 'attach_receipt', {
          expense_id: expenseId,
          filename: 'x.png',
          content_base64: (await image('png')).toString('base64'),
        })
      ).status,
    ).toBe(403);
  });

  it('signed links work without a credential until they expire; a tampered link is refused', async () => {
    const got = await ok(member, 'get_expense', { expense_id: expenseId });
    const link = got.receipts[0];
    const url = new URL(link.download_url);
    expect(url.origin).toBe(s.url);
    const dl = await fetch(link.download_url);
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe(link.content_type);
    // Another receipt's id with this signature, a changed expiry, a changed signature: all refused.
    const other = got.receipts[1];
    const swapped = `${s.url}/v1/receipts/${other.receipt_id}${url.search}`;
    const later = new URL(link.download_url);
    later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 3600));
    const badSig = new URL(link.download_url);
    badSig.searchParams.set('sig', 'A'.repeat(43));
    for (const u of [swapped, later.toString(), badSig.toString()]) expect((await fetch(u)).status).toBe(403);
    // Expired: move the clock past the expiry.
    const realNow = s.kitty.services.now;
    s.kitty.services.now = () => new Date(Date.now() + 301_000);
    try {
      expect((await fetch(link.download_url)).status).toBe(403);
    } finally {
      s.kitty.services.now = realNow;
    }
  });

  it('receipts outlive a deleted expense (no new ones on it) and their metadata is in the export', async () => {
    const e = (await ok(owner, 'add_expense', { group_id: groupId, description: 'Museum', amount_minor: 0 + 1000 })).expense.expense_id;
    const r = await ok(owner, 'attach_receipt', { expense_id: e, filename: 'museum.pdf', content_base64: pdf().toString('base64') });
    await ok(owner, 'delete_expense', { expense_id: e });
    const after = await ok(owner, 'get_expense', { expense_id: e });
    expect(after.receipts.map((x: { receipt_id: string }) => x.receipt_id)).toEqual([r.receipt.receipt_id]);
    expect(
      (await call(owner, 'attach_receipt', { expense_id: e, filename: 'y.pdf', content_base64: pdf().toString('base64') })).json.error.code,
    ).toBe('EXPENSE_DELETED');
    const exp = await ok(owner, 'export_group', { group_id: groupId, include_deleted: true });
    expect(exp.json.receipts).toContainEqual(
      expect.objectContaining({ receipt_id: r.receipt.receipt_id, expense_id: e, content_type: 'application/pdf' }),
    );
    const csv = await ok(owner, 'export_group', { group_id: groupId, format: 'csv', include_deleted: true });
    expect(csv.csv.receipts.split('\r\n')[0]).toBe('receipt_id,expense_id,filename,content_type,size_bytes,sha256,created_at');
    expect(csv.csv.receipts).toContain(r.receipt.receipt_id);
  });
});
