/**
 * The Salesforce write-back's settings, read once at the worker's edge. Either the OAuth 2.0 JWT bearer flow
 * (`SALESFORCE_LOGIN_URL`, default `https://login.salesforce.com`; `SALESFORCE_CLIENT_ID`, the connected app's
 * consumer key; `SALESFORCE_USERNAME`; `SALESFORCE_PRIVATE_KEY_FILE`, the PEM key whose certificate the app holds),
 * or `SALESFORCE_INSTANCE_URL` + `SALESFORCE_ACCESS_TOKEN` (a session nothing can refresh). A mistake is a
 * `ConfigError` naming the variable, never its value when that value is a secret.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { SalesforceAuth } from '../connectors/crm/salesforce/auth.ts';
import { ConfigError } from '../connectors/errors.ts';

type Env = Record<string, string | undefined>;

const optional = z
  .string()
  .optional()
  .transform((value) => value?.trim() || undefined);
const url = (name: string) =>
  optional.refine((v) => v === undefined || /^https?:\/\/[^/\s]+/.test(v), { error: `${name} must be an http(s) URL` });

const schema = z.object({
  SALESFORCE_LOGIN_URL: url('SALESFORCE_LOGIN_URL'),
  SALESFORCE_CLIENT_ID: optional,
  SALESFORCE_USERNAME: optional,
  SALESFORCE_PRIVATE_KEY_FILE: optional,
  SALESFORCE_INSTANCE_URL: url('SALESFORCE_INSTANCE_URL'),
  SALESFORCE_ACCESS_TOKEN: optional,
});

const JWT_VARIABLES = ['SALESFORCE_CLIENT_ID', 'SALESFORCE_USERNAME', 'SALESFORCE_PRIVATE_KEY_FILE'] as const;

function readKey(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `SALESFORCE_PRIVATE_KEY_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (!/-----BEGIN (RSA |ENCRYPTED )?PRIVATE KEY-----/.test(pem)) {
    throw new ConfigError(
      `SALESFORCE_PRIVATE_KEY_FILE: ${path} holds no PEM private key (an unencrypted PKCS#8 or PKCS#1 RSA key)`,
    );
  }
  return pem;
}

/** The write-back's Salesforce credentials, or undefined when no Salesforce variable is set. */
export function parseSalesforceAuth(env: Env = process.env): SalesforceAuth | undefined {
  const parsed = schema.safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join('; '));
  const v = parsed.data;
  const jwtGiven = JWT_VARIABLES.filter((name) => v[name] !== undefined);
  if (jwtGiven.length > 0) {
    const missing = JWT_VARIABLES.filter((name) => v[name] === undefined);
    if (missing.length > 0) throw new ConfigError(`the Salesforce JWT bearer flow needs ${missing.join(', ')} too`);
    return {
      kind: 'jwt',
      loginUrl: (v.SALESFORCE_LOGIN_URL ?? 'https://login.salesforce.com').replace(/\/$/, ''),
      clientId: v.SALESFORCE_CLIENT_ID as string,
      username: v.SALESFORCE_USERNAME as string,
      privateKeyPem: readKey(v.SALESFORCE_PRIVATE_KEY_FILE as string),
    };
  }
  if (v.SALESFORCE_INSTANCE_URL === undefined && v.SALESFORCE_ACCESS_TOKEN === undefined) return undefined;
  if (v.SALESFORCE_INSTANCE_URL === undefined || v.SALESFORCE_ACCESS_TOKEN === undefined) {
    const missing = v.SALESFORCE_INSTANCE_URL === undefined ? 'SALESFORCE_INSTANCE_URL' : 'SALESFORCE_ACCESS_TOKEN';
    throw new ConfigError(
      `${missing} is needed with the other (or set ${JWT_VARIABLES.join(', ')} for the JWT bearer flow)`,
    );
  }
  return {
    kind: 'token',
    instanceUrl: v.SALESFORCE_INSTANCE_URL.replace(/\/$/, ''),
    accessToken: v.SALESFORCE_ACCESS_TOKEN,
  };
}
