export { create_webhook } from './create_webhook.ts';
export { list_webhooks } from './list_webhooks.ts';
export { update_webhook } from './update_webhook.ts';
export { delete_webhook } from './delete_webhook.ts';
export { rotate_webhook_secret } from './rotate_webhook_secret.ts';
export { test_webhook } from './test_webhook.ts';
