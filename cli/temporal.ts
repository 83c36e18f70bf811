import { Client, Connection } from '@temporalio/client';
import { connectionOptions, reachTemporal } from '../config/temporal.ts';
import type { TemporalConfig } from '../config/worker.ts';
import { dataConverterFor } from '../workers/payload-codec.ts';

/** A client on the configured connection; an unreachable server is a `TemporalUnreachableError` (exit 2). */
export async function connectClient(config: TemporalConfig): Promise<Client> {
  const connection = await reachTemporal(config, () =>
    Connection.connect({ ...connectionOptions(config), connectTimeout: '10s' }),
  );
  const dataConverter = dataConverterFor(config.payloadKeys, { allowPlaintext: config.allowPlaintextPayloads });
  return new Client({ connection, namespace: config.namespace, ...(dataConverter ? { dataConverter } : {}) });
}
