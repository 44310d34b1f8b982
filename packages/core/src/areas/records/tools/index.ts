export { list_activity } from './list_activity.ts';
export { export_group } from './export_group.ts';
export { import_expenses } from './import_expenses.ts';
