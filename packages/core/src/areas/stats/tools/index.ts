export { get_group_stats } from './get_group_stats.ts';
