export { send_message } from './send_message.ts';
export { list_messages } from './list_messages.ts';
export { list_conversations } from './list_conversations.ts';
