export { list_currencies } from './list_currencies.ts';
export { list_categories } from './list_categories.ts';
