export { create_group } from './create_group.ts';
export { list_groups } from './list_groups.ts';
export { get_group } from './get_group.ts';
export { update_group } from './update_group.ts';
export { archive_group } from './archive_group.ts';
export { leave_group } from './leave_group.ts';
