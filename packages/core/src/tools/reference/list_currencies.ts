import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { output } from '../../text.ts';
import { CURRENCIES, CURRENCY_DATA_DATE } from '../../domain/money.ts';

export const list_currencies = readTool
  .meta({
    area: 'reference',
    title: 'List currencies',
    description:
      'Lists the ISO 4217 currencies a group can use, each with its minor-unit exponent (JPY 0, EUR 2, BHD 3: amount_minor = amount × 10^exponent) and ' +
      'numeric code. The data comes from the maintained ISO 4217 list of the currency-codes package (data_date says which publication), not a hand-typed ' +
      'table; funds, precious metals and test codes are excluded. create_group rejects any other code.',
    annotations: READ,
    errors: {},
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
