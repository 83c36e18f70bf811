/**
 * Settings parsed at the edge: where the Temporal connection comes from (defaults, a temporal.toml profile, the
 * variables on top), and the mistakes that stop a command before it connects, each naming its setting.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeploymentConfig } from '../../../config/deployment.ts';
import { parseObservabilityConfig } from '../../../config/observability.ts';
import { connectionOptions, loadTemporalConnection } from '../../../config/temporal.ts';
import { parseWorkerHeapConfig } from '../../../config/worker.ts';
import { ConfigError } from '../../../connectors/errors.ts';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-config-'));
  file = join(dir, 'temporal.toml');
  await writeFile(join(dir, 'client.pem'), 'not checked here');
  await writeFile(
    file,
    [
      '[profile.default]',
      'address = "temporal.internal:7233"',
      '[profile.cloud]',
      'address = "ns.acct.tmprl.cloud:7233"',
      'namespace = "ns.acct"',
      'api_key = "tk_cloud"',
      '[profile.halfcert]',
      'address = "temporal.internal:7233"',
      '[profile.halfcert.tls]',
      `client_cert_path = "${join(dir, 'client.pem')}"`,
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const HOME = () => ({ HOME: dir, XDG_CONFIG_HOME: join(dir, 'none') });

describe('the Temporal connection', () => {
  it('defaults to a local dev server when nothing is configured', () => {
    const settings = loadTemporalConnection(HOME());
    expect(settings).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default', addressSource: 'the default' });
    expect(connectionOptions(settings)).toEqual({ address: '127.0.0.1:7233' });
  });

  it('takes the default profile of the file, and a variable over it, saying which chose the address', () => {
    expect(loadTemporalConnection({ ...HOME(), TEMPORAL_CONFIG_FILE: file })).toMatchObject({
      address: 'temporal.internal:7233',
      addressSource: `address of profile "default" in ${file}`,
    });
    expect(
      loadTemporalConnection({ ...HOME(), TEMPORAL_CONFIG_FILE: file, TEMPORAL_ADDRESS: '10.1.2.3:7233' }),
    ).toMatchObject({ address: '10.1.2.3:7233', addressSource: 'TEMPORAL_ADDRESS' });
  });

  it('an API key from a profile turns TLS on', () => {
    const settings = loadTemporalConnection({ ...HOME(), TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' });
    expect(settings).toMatchObject({ namespace: 'ns.acct', temporalApiKey: 'tk_cloud' });
    expect(connectionOptions(settings)).toMatchObject({ apiKey: 'tk_cloud', tls: true });
  });

  it('stops on mistakes, naming the setting', () => {
    const attempt = (env: Record<string, string>) => () => loadTemporalConnection({ ...HOME(), ...env });
    expect(attempt({ TEMPORAL_CONFIG_FILE: join(dir, 'missing.toml') })).toThrow(
      new ConfigError(`TEMPORAL_CONFIG_FILE: no such file ${join(dir, 'missing.toml')}`),
    );
    expect(attempt({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging' })).toThrow(
      /^TEMPORAL_PROFILE: .*staging/,
    );
    expect(attempt({ TEMPORAL_ADDRESS: 'https://temporal.internal:7233' })).toThrow(
      'TEMPORAL_ADDRESS: "https://temporal.internal:7233" must be host:port (no scheme)',
    );
    expect(attempt({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'halfcert' })).toThrow(
      /^TEMPORAL_TLS_CLIENT_KEY_PATH: a TLS client certificate and its key go together/,
    );
    expect(attempt({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'ca.pem') })).toThrow(
      `TEMPORAL_TLS_SERVER_CA_CERT_PATH: no such file ${join(dir, 'ca.pem')}`,
    );
  });
});

describe('worker settings', () => {
  it('one metrics exporter at a time; log format follows the terminal unless set', () => {
    expect(() =>
      parseObservabilityConfig({ SIGNAL_KIT_METRICS_PORT: '9464', SIGNAL_KIT_OTEL_METRICS_URL: 'http://c:4318' }),
    ).toThrow(ConfigError);
    expect(parseObservabilityConfig({}, { terminal: true }).logFormat).toBe('pretty');
    expect(parseObservabilityConfig({}, { terminal: false }).logFormat).toBe('json');
    expect(parseObservabilityConfig({ SIGNAL_KIT_LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug');
    expect(() => parseObservabilityConfig({ SIGNAL_KIT_LOG_LEVEL: 'loud' })).toThrow(/SIGNAL_KIT_LOG_LEVEL/);
  });

  it('a versioned worker needs a build id or a bundle to take it from', () => {
    expect(() => parseDeploymentConfig({ SIGNAL_KIT_DEPLOYMENT_NAME: 'signal-kit' })).toThrow(
      /^SIGNAL_KIT_DEPLOYMENT_NAME: a versioned worker needs/,
    );
    expect(
      parseDeploymentConfig({ SIGNAL_KIT_DEPLOYMENT_NAME: 'signal-kit', SIGNAL_KIT_WORKFLOW_BUNDLE: '/app/b.js' }),
    ).toMatchObject({ deploymentName: 'signal-kit', behavior: 'PINNED', bundlePath: '/app/b.js' });
  });

  it('the heap may grow 1.5× past a full collection unless set; 0 leaves V8 its own factor; a bad value is named', () => {
    expect(parseWorkerHeapConfig({}).heapGrowingPercent).toBe(50);
    expect(parseWorkerHeapConfig({ SIGNAL_KIT_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(() => parseWorkerHeapConfig({ SIGNAL_KIT_HEAP_GROWING_PERCENT: '-5' })).toThrow(
      /SIGNAL_KIT_HEAP_GROWING_PERCENT/,
    );
  });

  it("the workflow thread's young generation is 4 MiB semi-spaces unless set; 0 leaves the process's; a bad value is named", () => {
    expect(parseWorkerHeapConfig({}).workflowSemiSpaceMb).toBe(4);
    expect(parseWorkerHeapConfig({ SIGNAL_KIT_WORKFLOW_SEMI_SPACE_MB: '0' }).workflowSemiSpaceMb).toBe(0);
    expect(() => parseWorkerHeapConfig({ SIGNAL_KIT_WORKFLOW_SEMI_SPACE_MB: 'big' })).toThrow(
      /SIGNAL_KIT_WORKFLOW_SEMI_SPACE_MB/,
    );
  });
});
