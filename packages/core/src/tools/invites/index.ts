export { create_invite } from './create_invite.ts';
export { join_group } from './join_group.ts';
export { list_invites } from './list_invites.ts';
