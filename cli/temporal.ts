import { Client, Connection } from '@temporalio/client';
import type { TemporalConfig } from '../workers/config.ts';
import { dataConverterFor } from '../workers/payload-codec.ts';

export async function connectClient(config: TemporalConfig): Promise<Client> {
  const connection = await Connection.connect({
    address: config.address,
    ...(config.temporalApiKey ? { tls: true, apiKey: config.temporalApiKey } : {}),
  });
  const dataConverter = dataConverterFor(config.payloadKeys);
  return new Client({ connection, namespace: config.namespace, ...(dataConverter ? { dataConverter } : {}) });
}
