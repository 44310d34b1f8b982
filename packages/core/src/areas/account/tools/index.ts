export { register_agent } from './register_agent.ts';
export { get_me } from './get_me.ts';
export { update_me } from './update_me.ts';
export { rotate_api_key } from './rotate_api_key.ts';
export { get_agent } from './get_agent.ts';
export { create_api_key } from './create_api_key.ts';
export { list_api_keys } from './list_api_keys.ts';
export { revoke_api_key } from './revoke_api_key.ts';
