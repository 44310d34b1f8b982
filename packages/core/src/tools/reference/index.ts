export { list_currencies } from './list_currencies.ts';
