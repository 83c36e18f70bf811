/**
 * The storage variables, parsed once in config/storage.ts: what each standard AWS and Google variable becomes, that
 * an empty one counts as unset, and that a value that cannot work is refused naming its variable.
 */
import { describe, expect, it } from 'vitest';
import { parseStorageSettings } from '../../../config/storage.ts';
import { StorageConfigError } from '../../../connectors/errors.ts';

describe('storage settings', () => {
  it('with nothing set: the SDK chains decide, checksummed bodies go unsigned, no encryption header', () => {
    expect(parseStorageSettings({})).toEqual({ s3: { signedPayload: false, encryption: null }, gcs: {} });
  });

  it('reads the S3 endpoint, region and keys, the S3-specific endpoint first', () => {
    const s3 = parseStorageSettings({
      AWS_ENDPOINT_URL: 'http://general:1',
      AWS_ENDPOINT_URL_S3: 'http://s3-only:2',
      AWS_DEFAULT_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'id',
      AWS_SECRET_ACCESS_KEY: 'secret',
      SIGNAL_KIT_S3_SIGNED_PAYLOAD: 'true',
      SIGNAL_KIT_S3_SSE: 'AES256',
    }).s3;
    expect(s3).toEqual({
      endpoint: 'http://s3-only:2',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret', sessionToken: undefined },
      signedPayload: true,
      encryption: { serverSideEncryption: 'AES256' },
    });
  });

  it('takes empty variables as unset, and a key id without its secret as no keys', () => {
    const s3 = parseStorageSettings({ AWS_REGION: '', AWS_ACCESS_KEY_ID: 'id', SIGNAL_KIT_S3_SSE: '' }).s3;
    expect(s3).toEqual({ signedPayload: false, encryption: null });
  });

  it('points GCS at an emulator (a bare host:port is plain HTTP) with a project, else at the named project', () => {
    expect(parseStorageSettings({ STORAGE_EMULATOR_HOST: '127.0.0.1:4443' }).gcs).toEqual({
      apiEndpoint: 'http://127.0.0.1:4443',
      projectId: 'signal-kit',
    });
    expect(parseStorageSettings({ GCLOUD_PROJECT: 'p' }).gcs).toEqual({ projectId: 'p' });
  });

  it.each([
    [{ SIGNAL_KIT_S3_SIGNED_PAYLOAD: 'yes' }, /SIGNAL_KIT_S3_SIGNED_PAYLOAD must be true or false, got "yes"/],
    [{ SIGNAL_KIT_S3_SSE: 'aes' }, /SIGNAL_KIT_S3_SSE must be one of AES256, aws:kms, aws:kms:dsse, got "aes"/],
    [{ SIGNAL_KIT_S3_SSE: 'AES256', SIGNAL_KIT_S3_KMS_KEY_ID: 'k' }, /SIGNAL_KIT_S3_KMS_KEY_ID needs/],
  ])('refuses %j naming the variable', (env, message) => {
    expect(() => parseStorageSettings(env)).toThrow(StorageConfigError);
    expect(() => parseStorageSettings(env)).toThrow(message);
  });
});
