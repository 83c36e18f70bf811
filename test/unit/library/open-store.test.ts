/**
 * The library's `openStore` as a package user calls it: its options type (exported beside it) still takes `env`, the
 * variables to read instead of the process's, and those are the ones the store is configured from.
 */
import { describe, expect, it } from 'vitest';
import { StorageConfigError } from '../../../connectors/errors.ts';
import { type OpenStoreOptions, openStore } from '../../../index.ts';

describe('openStore from the package entry', () => {
  it('takes the variables in its exported options type, and reads those rather than the process environment', () => {
    const options: OpenStoreOptions = { env: { SIGNAL_KIT_S3_SSE: 'not-a-mode' } };
    expect(() => openStore('s3://bucket/prefix', options)).toThrow(StorageConfigError);
    expect(() => openStore('s3://bucket/prefix', options)).toThrow(/SIGNAL_KIT_S3_SSE/);
    const fine: OpenStoreOptions = { env: { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' } };
    expect(openStore('s3://bucket/prefix', fine).url).toBe('s3://bucket/prefix');
  });
});
