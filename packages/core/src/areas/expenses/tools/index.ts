export { add_expense } from './add_expense.ts';
export { get_expense } from './get_expense.ts';
export { list_expenses } from './list_expenses.ts';
export { update_expense } from './update_expense.ts';
export { delete_expense } from './delete_expense.ts';
export { restore_expense } from './restore_expense.ts';
