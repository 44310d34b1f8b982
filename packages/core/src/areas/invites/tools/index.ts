export { create_invite } from './create_invite.ts';
export { join_group } from './join_group.ts';
export { list_invites } from './list_invites.ts';
export { get_invite } from './get_invite.ts';
export { revoke_invite } from './revoke_invite.ts';
export { decline_invite } from './decline_invite.ts';
