/**
 * Payment instructions: the payout methods an agent publishes (update_me) and what a payer sees
 * for a transfer or pending payment to it (`pay_with`): an EPC QR code (EPC069-12, "SEPA credit
 * transfer" QR, EUR only) with its SVG image, a PayPal.me link with amount and currency, a
 * `lightning:` URI. Shown only to the member who owes the money, never on get_agent. Kitty never
 * moves money: the payee still confirms the payment.
 */
import { z } from 'zod';
import { electronicFormatIBAN, isValidBIC, isValidIBAN } from 'ibantools';
import type { Db } from '../../kernel/context.ts';
import { text } from '../../kernel/text.ts';
import { minorToDecimal } from '../../kernel/money.ts';

/** The QR code writer, loaded by the first SEPA payment instruction (not at start-up). */
const qrcode = async () => (await import('qrcode')).default;

const iban = z
  .string()
  .max(64)
  .transform((v) => electronicFormatIBAN(v) ?? '')
  .refine((v) => isValidIBAN(v), 'not a valid IBAN (country, length and check digits are checked)');
const bic = z
  .string()
  .max(16)
  .transform((v) => v.replace(/\s+/g, '').toUpperCase())
  .refine((v) => isValidBIC(v), 'not a valid BIC (8 or 11 characters)');

export const payoutMethodInput = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('sepa').describe('SEPA credit transfer.'),
    iban: iban.describe('IBAN, spaces allowed.'),
    account_name: text(1, 70, 'account_name').describe('Account holder as the bank knows it, 1-70 chars.'),
    bic: bic.optional().describe('BIC, optional.'),
  }),
  z.strictObject({
    type: z.literal('paypal_me').describe('PayPal.me link.'),
    username: z
      .string()
      .regex(/^[A-Za-z0-9]{1,20}$/, 'a PayPal.me name is 1-20 letters or digits')
      .describe('PayPal.me name.'),
  }),
  z.strictObject({
    type: z.literal('lightning').describe('Lightning Address.'),
    address: z
      .string()
      .max(200)
      .regex(/^[a-z0-9._+-]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'a Lightning Address looks like name@example.com')
      .describe('Lightning Address (name@domain).'),
  }),
]);
export type PayoutMethod = z.output<typeof payoutMethodInput>;

/** A stored method as returned to its owner (normalised: IBAN and BIC without spaces, upper case). */
export const payoutMethodSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('sepa'), iban: z.string(), account_name: z.string(), bic: z.string().optional() }),
  z.object({ type: z.literal('paypal_me'), username: z.string() }),
  z.object({ type: z.literal('lightning'), address: z.string() }),
]);

export const payWithSchema = z
  .array(
    z.discriminatedUnion('type', [
      z.object({
        type: z.literal('sepa'),
        iban: z.string(),
        account_name: z.string(),
        bic: z.string().nullable(),
        epc_qr_payload: z.string().nullable().describe('EPC069-12 QR text; null unless EUR.'),
        qr_svg_data_url: z.string().nullable().describe('Its QR code, SVG data URL.'),
      }),
      z.object({ type: z.literal('paypal_me'), url: z.string() }),
      z.object({ type: z.literal('lightning'), uri: z.string() }),
    ]),
  )
  .describe('How to pay the payee (its published methods); only for the payer. Pay outside Kitty, then the payee confirms.');
export type PayWith = z.infer<typeof payWithSchema>;

/**
 * The EPC069-12 payload, version 002, UTF-8: BCD / 002 / 1 / SCT / BIC / name / IBAN / EUR amount /
 * purpose / structured reference / unstructured remittance, lines joined by LF and nothing after the
 * last. Null when the amount is outside 0.01-999999999.99 EUR.
 */
function epcPayload(
  m: { iban: string; account_name: string; bic?: string | undefined },
  amountMinor: number,
  remittance: string,
): string | null {
  if (amountMinor < 1 || amountMinor > 99_999_999_999) return null;
  return [
    'BCD',
    '002',
    '1',
    'SCT',
    m.bic ?? '',
    m.account_name.slice(0, 70),
    m.iban,
    `EUR${minorToDecimal(amountMinor, 'EUR')}`,
    '',
    '',
    remittance.slice(0, 140),
  ].join('\n');
}

/** pay_with for one amount owed to a payee with `methods`; `reference` is the payment or transfer id. */
async function payWith(methods: PayoutMethod[], amountMinor: number, currency: string, reference: string): Promise<PayWith> {
  const out: PayWith = [];
  for (const m of methods) {
    if (m.type === 'sepa') {
      const payload = currency === 'EUR' ? epcPayload(m, amountMinor, reference) : null;
      // Error correction M, as the EPC guideline requires.
      const svg = payload ? await (await qrcode()).toString(payload, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 }) : null;
      out.push({
        type: 'sepa',
        iban: m.iban,
        account_name: m.account_name,
        bic: m.bic ?? null,
        epc_qr_payload: payload,
        qr_svg_data_url: svg ? `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` : null,
      });
    } else if (m.type === 'paypal_me') {
      out.push({ type: 'paypal_me', url: `https://paypal.me/${m.username}/${minorToDecimal(amountMinor, currency)}${currency}` });
    } else {
      out.push({ type: 'lightning', uri: `lightning:${m.address}` });
    }
  }
  return out;
}

const storedMethodsSchema = z.array(payoutMethodInput);

/** The stored methods of an agent (validated again on read: a row written by hand cannot inject anything). */
export function storedMethods(json: unknown): PayoutMethod[] {
  // None stored (SQL NULL): nothing to validate.
  if (json === null || json === undefined) return [];
  const parsed = storedMethodsSchema.safeParse(json);
  return parsed.success ? parsed.data : [];
}

/**
 * pay_with for each item the caller pays (from = caller), keyed by its reference; the payees'
 * methods are loaded in one query, unless `known` has every payee's stored methods (JSON as stored,
 * e.g. from the group read of a batched write). Items paid by someone else get nothing.
 */
export async function payWithFor(
  db: Db,
  callerId: string,
  currency: string,
  items: Array<{ fromId: string; toId: string; amountMinor: number; reference: string }>,
  known?: ReadonlyMap<string, unknown>,
): Promise<Map<string, PayWith>> {
  const mine = items.filter((i) => i.fromId === callerId && i.amountMinor > 0);
  const result = new Map<string, PayWith>();
  if (!mine.length) return result;
  const ids = [...new Set(mine.map((i) => i.toId))];
  const payees =
    known && ids.every((id) => known.has(id))
      ? ids.map((id) => ({ id, payoutMethods: known.get(id) }))
      : await db.agent.findMany({ where: { id: { in: ids } }, select: { id: true, payoutMethods: true } });
  const methods = new Map(payees.map((p) => [p.id, storedMethods(p.payoutMethods)]));
  for (const i of mine) {
    const m = methods.get(i.toId) ?? [];
    if (m.length) result.set(i.reference, await payWith(m, i.amountMinor, currency, i.reference));
  }
  return result;
}
