import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import {
  decodeOptionalFailureToOptionalError,
  encodeErrorToFailure,
  loadDataConverter,
} from '@temporalio/common/lib/internal-non-workflow/index.js';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseTemporalConfig } from '../../../config/worker.ts';
import { PayloadDecryptionError } from '../../../connectors/errors.ts';
import { dataConverterFor, EncryptionCodec } from '../../../workers/payload-codec.ts';

const key = (id: string) => ({ id, key: randomBytes(32) });
const event = { email: 'jane.doe@acme.com', name: 'Jane Doe' };

describe('EncryptionCodec', () => {
  it('seals payloads so that no contact data is readable, and opens them again', async () => {
    const codec = new EncryptionCodec([key('k1')]);
    const payload = defaultPayloadConverter.toPayload(event);
    const [sealed] = await codec.encode([payload]);
    expect(Buffer.from(sealed!.data!).toString('latin1')).not.toContain('jane.doe');
    expect(Buffer.from(sealed!.metadata!['encoding']!).toString()).toBe('binary/encrypted');
    const [opened] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual(event);
  });

  it('opens payloads sealed with an older key during a rotation', async () => {
    const old = key('2025');
    const sealed = await new EncryptionCodec([old]).encode([defaultPayloadConverter.toPayload(event)]);
    const rotated = new EncryptionCodec([key('2026'), old]);
    const [opened] = await rotated.decode(sealed);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual(event);
  });

  it('refuses a tampered payload and an unknown key id', async () => {
    const k = key('k1');
    const [sealed] = await new EncryptionCodec([k]).encode([defaultPayloadConverter.toPayload(event)]);
    const tampered = { ...sealed!, data: Buffer.from(sealed!.data!) };
    tampered.data[20] = (tampered.data[20] ?? 0) ^ 1;
    await expect(new EncryptionCodec([k]).decode([tampered])).rejects.toThrow(PayloadDecryptionError);
    await expect(new EncryptionCodec([key('other')]).decode([sealed!])).rejects.toThrow(/no payload key with id "k1"/);
  });

  it('refuses payloads that were never sealed, unless the migration switch is on', async () => {
    const payload = defaultPayloadConverter.toPayload(event);
    await expect(new EncryptionCodec([key('k1')]).decode([payload])).rejects.toThrow(PayloadDecryptionError);
    await expect(new EncryptionCodec([key('k1')]).decode([payload])).rejects.toThrow(
      /not encrypted.*SIGNAL_KIT_PAYLOAD_ALLOW_PLAINTEXT=true/,
    );
    const migrating = new EncryptionCodec([key('k1')], { allowPlaintext: true });
    expect(await migrating.decode([payload])).toEqual([payload]);
  });

  it('refuses two keys under one id, which could not open what they sealed', () => {
    expect(() => new EncryptionCodec([key('a'), key('a')])).toThrow(/key id "a" is used by more than one key/);
  });

  it('encodes failure messages and stack traces into sealed payloads', async () => {
    const converter = loadDataConverter(dataConverterFor([key('k1')]));
    const failure = await encodeErrorToFailure(converter, new Error('row 7: jane.doe@acme.com is not deliverable'));
    const stored = JSON.stringify(failure, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString() : v));
    expect(stored).not.toContain('jane.doe');
    expect(failure.message).toBe('Encoded failure');
    expect(Buffer.from(failure.encodedAttributes?.metadata?.['encoding'] ?? []).toString()).toBe('binary/encrypted');
    // ...and a client with the key reads the message back.
    const decoded = await decodeOptionalFailureToOptionalError(converter, failure);
    expect(decoded?.message).toBe('row 7: jane.doe@acme.com is not deliverable');
  });
});

describe('SIGNAL_KIT_PAYLOAD_KEYS', () => {
  it('parses id:key pairs, the first one sealing', () => {
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64');
    const config = parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: `new:${a}, old:${b}` });
    expect(config.payloadKeys?.map((k) => k.id)).toEqual(['new', 'old']);
  });

  it('refuses a key id given twice, and two keys without ids', () => {
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64');
    expect(() => parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: `a:${a},a:${b}` })).toThrow(
      /SIGNAL_KIT_PAYLOAD_KEYS key id "a" is used twice/,
    );
    expect(() => parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: `${a},${b}` })).toThrow(
      /key id "default" is used twice/,
    );
  });

  it('reads the migration switch, off by default', () => {
    const k = `k:${randomBytes(32).toString('base64')}`;
    expect(parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: k }).allowPlaintextPayloads).toBeUndefined();
    expect(
      parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: k, SIGNAL_KIT_PAYLOAD_ALLOW_PLAINTEXT: 'true' })
        .allowPlaintextPayloads,
    ).toBe(true);
  });

  it('names the setting when a key is not 32 bytes', () => {
    expect(() => parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: 'k1:c2hvcnQ=' })).toThrow(ConfigError);
    expect(() => parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: 'k1:c2hvcnQ=' })).toThrow(/SIGNAL_KIT_PAYLOAD_KEYS/);
  });
});
