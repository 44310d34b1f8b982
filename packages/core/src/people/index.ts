export { accountRouter, type AccountRouter, KEY_ACCESS, MAX_KEY_EXPIRY_DAYS, type KeyAccess } from './account-router.ts';
export { createAccountCallerFactory, allowedOrigins, type AccountContext, type AccountErrorData } from './account-trpc.ts';
