import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { output } from '../../../kernel/text.ts';
import { CURRENCIES, CURRENCY_DATA_DATE } from '../../../kernel/money.ts';

export const list_currencies = readTool
  .meta({
    area: 'reference',
    title: 'List currencies',
    description:
      'ISO 4217 currencies a group can use, with minor-unit exponent (JPY 0, EUR 2, BHD 3: amount_minor = amount × 10^exponent) and ' +
      'numeric code, from the maintained ISO list (data_date); funds, metals and test codes excluded.',
    annotations: READ,
    errors: {},
    static: true,
  })
  .input(z.strictObject({}))
  .output(
    output({
      currencies: z.array(
        z.object({ code: z.string(), name: z.string(), minor_unit_exponent: z.number().int(), numeric_code: z.string() }),
      ),
      data_date: z.string().describe('Publication date of the ISO 4217 list used.'),
    }),
  )
  .query(() => ({
    currencies: CURRENCIES.map((c) => ({ ...c })),
    data_date: CURRENCY_DATA_DATE,
    suggested_next: ['create_group: start a group in one of these currencies'],
  }));
