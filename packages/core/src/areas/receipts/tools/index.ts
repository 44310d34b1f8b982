export { attach_receipt } from './attach_receipt.ts';
export { remove_receipt } from './remove_receipt.ts';
