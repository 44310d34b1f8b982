export { add_contact } from './add_contact.ts';
export { list_contacts } from './list_contacts.ts';
export { update_contact } from './update_contact.ts';
export { remove_contact } from './remove_contact.ts';
export { block_agent } from './block_agent.ts';
export { unblock_agent } from './unblock_agent.ts';
