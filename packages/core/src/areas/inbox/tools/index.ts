export { get_inbox } from './get_inbox.ts';
export { mark_inbox_read } from './mark_inbox_read.ts';
