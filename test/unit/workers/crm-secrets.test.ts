/**
 * The worker's logger is given the CRM secrets of its environment to cut out of every line (defence in depth: no
 * code logs a token): the HubSpot and Salesforce access tokens and each line of the Salesforce private key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { crmSecretsOf } from '../../../workers/crm-writers.ts';
import { createLogger } from '../../../workers/logger.ts';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('a CRM token or a line of the Salesforce key that slipped into a log line is cut out', async () => {
  dir = await mkdtemp(join(tmpdir(), 'crm-secrets-'));
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const keyFile = join(dir, 'server.key');
  await writeFile(keyFile, pem);
  const hubspot = 'pat-na1-11111111-2222-3333-4444-555555555555';
  const salesforce = '00DDn0000000001!AQ4AQFakeSessionTokenForTheTestOnly';
  const secrets = crmSecretsOf({
    HUBSPOT_ACCESS_TOKEN: hubspot,
    SALESFORCE_ACCESS_TOKEN: salesforce,
    SALESFORCE_PRIVATE_KEY_FILE: keyFile,
  });
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ level: 'info', format: 'json', destination, secrets });
  logger.error({ err: new Error(`refused: Bearer ${hubspot}`) }, `session ${salesforce} with key ${pem}`);
  await new Promise((resolve) => setImmediate(resolve));
  const text = lines.join('');
  expect(text).toContain('refused: Bearer');
  for (const secret of [
    hubspot,
    salesforce,
    ...pem.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----')),
  ]) {
    expect(text).not.toContain(secret);
  }
});
