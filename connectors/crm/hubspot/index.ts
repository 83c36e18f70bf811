/** The kit's HubSpot writer (`CrmWriter` through `@hubspot/api-client`), made from the worker's HubSpot settings. */
import type { HubspotConnection } from './client.ts';
import { HubspotWriter, type HubspotWriterOptions } from './writer.ts';

export type { HubspotConnection } from './client.ts';
export { DAILY_LIMIT } from './pacing.ts';
export { HUBSPOT_TEXT_LENGTH, KIT_GROUP, type KitProperty, type KitPropertyOutcome } from './properties.ts';
export { HUBSPOT_BATCH_SIZE, HubspotWriter, type HubspotWriterOptions } from './writer.ts';

export function createHubspotWriter(connection: HubspotConnection, options: HubspotWriterOptions = {}): HubspotWriter {
  return new HubspotWriter(connection, options);
}
