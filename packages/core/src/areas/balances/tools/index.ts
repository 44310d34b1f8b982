export { get_balances } from './get_balances.ts';
export { suggest_settlements } from './suggest_settlements.ts';
export { get_balance_summary } from './get_balance_summary.ts';
