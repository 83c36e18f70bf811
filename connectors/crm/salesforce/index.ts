/** The kit's Salesforce writer and what goes with it (see writer.ts). */
import type { SalesforceAuth } from './auth.ts';
import { SalesforceWriter, type SalesforceWriterOptions } from './writer.ts';

export type { SalesforceAuth } from './auth.ts';
export { JWT_BEARER_GRANT, SALESFORCE_API_VERSION, signJwtAssertion } from './auth.ts';
export { isTransientRecordCode } from './classify.ts';
export { type KitField, salesforceFieldMetadata } from './metadata.ts';
export { SalesforceWriter, type SalesforceWriterOptions } from './writer.ts';

export function createSalesforceWriter(auth: SalesforceAuth, options?: SalesforceWriterOptions): SalesforceWriter {
  return new SalesforceWriter(auth, options);
}
