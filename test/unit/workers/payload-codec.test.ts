import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseTemporalConfig } from '../../../workers/config.ts';
import { EncryptionCodec, PayloadDecryptionError } from '../../../workers/payload-codec.ts';

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

  it('leaves payloads that were never sealed alone', async () => {
    const payload = defaultPayloadConverter.toPayload(event);
    expect(await new EncryptionCodec([key('k1')]).decode([payload])).toEqual([payload]);
  });
});

describe('SIGNAL_KIT_PAYLOAD_KEYS', () => {
  it('parses id:key pairs, the first one sealing', () => {
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64');
    const config = parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: `new:${a}, old:${b}` });
    expect(config.payloadKeys?.map((k) => k.id)).toEqual(['new', 'old']);
  });

  it('names the setting when a key is not 32 bytes', () => {
    expect(() => parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: 'k1:c2hvcnQ=' })).toThrow(ConfigError);
    expect(() => parseTemporalConfig({ SIGNAL_KIT_PAYLOAD_KEYS: 'k1:c2hvcnQ=' })).toThrow(/SIGNAL_KIT_PAYLOAD_KEYS/);
  });
});
