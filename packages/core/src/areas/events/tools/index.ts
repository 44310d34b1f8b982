export { list_events } from './list_events.ts';
