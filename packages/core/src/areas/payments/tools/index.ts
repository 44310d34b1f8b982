export { record_payment } from './record_payment.ts';
export { confirm_payment } from './confirm_payment.ts';
export { reject_payment } from './reject_payment.ts';
export { cancel_payment } from './cancel_payment.ts';
export { get_payment } from './get_payment.ts';
export { list_payments } from './list_payments.ts';
