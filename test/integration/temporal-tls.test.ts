/**
 * The Temporal connection as an operator configures it: a `signal-kit worker` child process with the TLS variables
 * and `signal-kit enrich --wait` with a `temporal.toml` profile both reach a dev server that only accepts mutual TLS
 * (a proxy that requires a client certificate; the dev server itself has no TLS flags). A client without a
 * certificate, an unreachable address and a missing certificate file are configuration errors (exit 2) naming the
 * address and the setting that chose it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { freePort } from '../../devstack/index.ts';
import { type ChildWorker, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { generateCertificates, type MtlsProxy, startMtlsProxy, type TestCertificates } from '../helpers/tls.ts';

let env: JobEnv;
let dir: string;
let certs: TestCertificates;
let proxy: MtlsProxy;
let worker: ChildWorker | undefined;

/** The job environment without any TEMPORAL_* variable, plus `extra`. */
function cliEnv(extra: Record<string, string>): Record<string, string> {
  const base = Object.fromEntries(Object.entries(env.childEnv()).filter(([name]) => !name.startsWith('TEMPORAL_')));
  return { ...base, TEMPORAL_CONFIG_FILE: join(dir, 'temporal.toml'), ...extra };
}

describe('Temporal over mutual TLS', () => {
  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 5 } });
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-tls-'));
    certs = await generateCertificates(dir);
    proxy = await startMtlsProxy(certs, env.stack.temporal!.address);
    await writeFile(
      join(dir, 'temporal.toml'),
      [
        '[profile.secure]',
        `address = "${proxy.address}"`,
        `namespace = "${env.stack.temporal!.namespace}"`,
        '[profile.secure.tls]',
        `client_cert_path = "${certs.clientCert}"`,
        `client_key_path = "${certs.clientKey}"`,
        `server_ca_cert_path = "${certs.caCert}"`,
        `server_name = "${certs.serverName}"`,
        '',
        '[profile.nocert]',
        `address = "${proxy.address}"`,
        '[profile.nocert.tls]',
        `server_ca_cert_path = "${certs.caCert}"`,
        `server_name = "${certs.serverName}"`,
        '',
      ].join('\n'),
    );
    const rows = ['website', ...Array.from({ length: 120 }, (_, i) => `shop${i}.com`)];
    await writeFile(join(dir, 'crm.csv'), `${rows.join('\n')}\n`);
  });
  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    await env?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a worker configured by variables and the CLI configured by a profile run a job over mTLS', async () => {
    worker = await startChildWorker(
      cliEnv({
        TEMPORAL_ADDRESS: proxy.address,
        TEMPORAL_NAMESPACE: env.stack.temporal!.namespace,
        TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
        TEMPORAL_TLS_SERVER_NAME: certs.serverName,
      }),
    );
    const before = proxy.authorized();
    const result = await runCli(
      ['enrich', '--input', join(dir, 'crm.csv'), '--output', join(dir, 'out'), '--limit', '1', '--wait'],
      cliEnv({ TEMPORAL_PROFILE: 'secure' }),
    );
    expect(result.code, result.stderr).toBe(0);
    const job = JSON.parse(result.stdout) as JobResult;
    expect(job.status).toBe('completed');
    expect(job.counts).toMatchObject({ input_rows: 120, distinct: 120 });
    // The worker's connection was already counted; the CLI opened its own through the proxy.
    expect(before).toBeGreaterThanOrEqual(1);
    expect(proxy.authorized()).toBeGreaterThan(before);
  });

  it('a client without a certificate is refused: exit 2, naming the address and the profile that chose it', async () => {
    const refused = proxy.refused();
    const result = await runCli(['status', 'no-such-job'], cliEnv({ TEMPORAL_PROFILE: 'nocert' }));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`cannot reach Temporal at ${proxy.address}`);
    expect(result.stderr).toContain(`profile "nocert"`);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(proxy.refused()).toBeGreaterThan(refused);
  });

  it('an address where nothing listens: exit 2, naming TEMPORAL_ADDRESS', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const result = await runCli(['status', 'no-such-job'], cliEnv({ TEMPORAL_ADDRESS: address }));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`cannot reach Temporal at ${address} (set by TEMPORAL_ADDRESS)`);
    const workerResult = await runCli(
      ['worker'],
      cliEnv({ TEMPORAL_ADDRESS: address, SIGNAL_KIT_WORKFLOW_BUNDLE: env.bundlePath }),
    );
    expect(workerResult.code, workerResult.stderr).toBe(2);
    expect(workerResult.stderr).toContain(`cannot reach Temporal at ${address} (set by TEMPORAL_ADDRESS)`);
  });

  it('a certificate path that does not exist names its variable before connecting', async () => {
    const result = await runCli(
      ['status', 'no-such-job'],
      cliEnv({
        TEMPORAL_PROFILE: 'secure',
        TEMPORAL_TLS_CLIENT_KEY_PATH: join(dir, 'missing.key'),
      }),
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`TEMPORAL_TLS_CLIENT_KEY_PATH: no such file ${join(dir, 'missing.key')}`);
  });
});
