/**
 * The Temporal connection, loaded the way the Temporal CLI loads it (`@temporalio/envconfig`): a profile of
 * `temporal.toml` (`TEMPORAL_CONFIG_FILE`, else `~/.config/temporalio/temporal.toml`; profile `TEMPORAL_PROFILE`,
 * else "default"), overridden by `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS`,
 * `TEMPORAL_TLS_CLIENT_CERT_PATH|_DATA`, `TEMPORAL_TLS_CLIENT_KEY_PATH|_DATA`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH|_DATA`,
 * `TEMPORAL_TLS_SERVER_NAME` and `TEMPORAL_GRPC_META_*`. The CLI and the worker both connect from this one result.
 */

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { type ClientConfigProfile, loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import { z } from 'zod';
import { ConfigError, TemporalUnreachableError } from '../connectors/errors.ts';

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';

export interface TemporalConnectionSettings {
  /** host:port of the frontend. */
  address: string;
  namespace: string;
  /** Temporal Cloud API key (enables TLS unless TLS is explicitly disabled). */
  temporalApiKey: string | undefined;
  /** TLS as the SDK takes it: `true` for system roots, or certificates and a server name. */
  tls?: TLSConfig | boolean | undefined;
  /** Extra gRPC headers (`TEMPORAL_GRPC_META_*`, `grpc_meta` in a profile). */
  grpcMetadata?: Record<string, string> | undefined;
  /** The setting that chose `address` ("TEMPORAL_ADDRESS", a profile in a file, or the default), for messages. */
  addressSource?: string | undefined;
}

type Env = Record<string, string | undefined>;

const hostPort = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[^\s:/]+):\d{1,5}$/, 'must be host:port (no scheme)');

/** The file envconfig reads, for messages (it reads the same path itself). */
export function temporalConfigFile(env: Env): string {
  return (
    env['TEMPORAL_CONFIG_FILE'] ??
    join(env['XDG_CONFIG_HOME'] || join(env['HOME'] ?? homedir(), '.config'), 'temporalio', 'temporal.toml')
  );
}

/** Where a TLS file setting comes from: the variable when set, else the profile's key. */
function tlsSettingName(env: Env, variable: string, tomlKey: string, where: string): string {
  return env[variable] !== undefined ? variable : `${tomlKey} of ${where}`;
}

/**
 * Loads and checks the Temporal connection settings. Problems (a missing explicit config file or profile, an address
 * that is not host:port, a client certificate without its key, a certificate file that does not exist) are
 * `ConfigError`s naming the setting.
 */
export function loadTemporalConnection(env: Env = process.env): TemporalConnectionSettings {
  const file = temporalConfigFile(env);
  if (env['TEMPORAL_CONFIG_FILE'] !== undefined && !existsSync(file)) {
    throw new ConfigError(`TEMPORAL_CONFIG_FILE: no such file ${file}`);
  }
  const profileName = env['TEMPORAL_PROFILE'] || 'default';
  const where = `profile "${profileName}" in ${file}`;
  const defined = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: defined });
  } catch (error) {
    const setting = env['TEMPORAL_PROFILE'] ? 'TEMPORAL_PROFILE' : 'Temporal config file';
    throw new ConfigError(`${setting}: ${(error as Error).message} (${file})`);
  }

  const addressSource =
    env['TEMPORAL_ADDRESS'] !== undefined
      ? 'TEMPORAL_ADDRESS'
      : profile.address
        ? `address of ${where}`
        : 'the default';
  const address = profile.address ?? DEFAULT_TEMPORAL_ADDRESS;
  const checked = hostPort.safeParse(address);
  if (!checked.success) throw new ConfigError(`${addressSource}: "${address}" ${checked.error.issues[0]?.message}`);

  const tls = profile.tls;
  if (tls && !tls.disabled) {
    const files: [keyof typeof tls, string, string][] = [
      ['clientCert', 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'tls.client_cert_path'],
      ['clientKey', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'tls.client_key_path'],
      ['serverCACert', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'tls.server_ca_cert_path'],
    ];
    for (const [key, variable, tomlKey] of files) {
      const source = tls[key];
      if (source && typeof source === 'object' && 'path' in source && !existsSync(source.path)) {
        throw new ConfigError(`${tlsSettingName(env, variable, tomlKey, where)}: no such file ${source.path}`);
      }
    }
    if (Boolean(tls.clientCert) !== Boolean(tls.clientKey)) {
      const missing = tls.clientCert ? 'TEMPORAL_TLS_CLIENT_KEY_PATH' : 'TEMPORAL_TLS_CLIENT_CERT_PATH';
      throw new ConfigError(`${missing}: a TLS client certificate and its key go together; only one is set`);
    }
  }

  const { connectionOptions, namespace } = toClientOptions(profile);
  return {
    address,
    namespace: namespace || 'default',
    temporalApiKey: profile.apiKey,
    tls: connectionOptions.tls ?? undefined,
    grpcMetadata: profile.grpcMeta,
    addressSource,
  };
}

/** The options `Connection.connect` and `NativeConnection.connect` both take. */
export function connectionOptions(settings: TemporalConnectionSettings) {
  return {
    address: settings.address,
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    ...(settings.temporalApiKey ? { apiKey: settings.temporalApiKey } : {}),
    ...(settings.temporalApiKey && settings.tls === undefined ? { tls: true } : {}),
    ...(settings.grpcMetadata ? { metadata: settings.grpcMetadata } : {}),
  };
}

/** Runs a connect call and turns its failure into a message naming the address and the setting that chose it. */
export async function reachTemporal<T>(settings: TemporalConnectionSettings, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (error) {
    throw new TemporalUnreachableError(settings.address, settings.addressSource ?? 'TEMPORAL_ADDRESS', error);
  }
}
