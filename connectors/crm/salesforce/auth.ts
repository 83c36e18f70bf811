/**
 * A jsforce connection for the write-back, authenticated one of two ways:
 * - the OAuth 2.0 JWT bearer flow: an RS256 assertion (`iss` the connected app's consumer key, `sub` the user name,
 *   `aud` the login URL, `exp` three minutes on) signed with the private key whose certificate the connected app
 *   holds (node:crypto), exchanged at `<login URL>/services/oauth2/token`; when a call answers 401
 *   INVALID_SESSION_ID, jsforce calls the refresh function, which signs a new assertion (the flow has no refresh
 *   token);
 * - an instance URL and an access token, which nothing can refresh: a 401 is a `CrmAuthError` naming the setting.
 * Neither the key nor a token ever reaches an error message.
 */
import { createSign } from 'node:crypto';
import jsforce from 'jsforce';
import { CrmAuthError } from '../../errors.ts';
import { NoHiddenRetriesTransport } from './transport.ts';

const { Connection, OAuth2 } = jsforce;
export type SalesforceConnection = InstanceType<typeof Connection>;

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** The API version the writer asks for (Bulk API 2.0 needs 41.0, sObject Collections update 42.0). */
export const SALESFORCE_API_VERSION = '62.0';

export type SalesforceAuth =
  | { kind: 'jwt'; loginUrl: string; clientId: string; username: string; privateKeyPem: string }
  | { kind: 'token'; instanceUrl: string; accessToken: string };

/**
 * The assertion's audience: the login URL itself (`https://login.salesforce.com`, `https://test.salesforce.com`, an
 * Experience Cloud site), except that a My Domain login URL signs for login.salesforce.com (test.salesforce.com for a
 * sandbox's `*.sandbox.my.salesforce.com`), as Salesforce's JWT bearer flow documents.
 */
export function jwtAudience(loginUrl: string): string {
  const url = loginUrl.replace(/\/$/, '');
  const host = new URL(url).hostname;
  if (host.endsWith('.sandbox.my.salesforce.com')) return 'https://test.salesforce.com';
  return host.endsWith('.my.salesforce.com') ? 'https://login.salesforce.com' : url;
}

/** The JWT bearer assertion for `auth`, valid three minutes from `nowMs`. */
export function signJwtAssertion(auth: Extract<SalesforceAuth, { kind: 'jwt' }>, nowMs = Date.now()): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = {
    iss: auth.clientId,
    sub: auth.username,
    aud: jwtAudience(auth.loginUrl),
    exp: Math.floor(nowMs / 1000) + 180,
  };
  const unsigned = `${part({ alg: 'RS256' })}.${part(claims)}`;
  return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(auth.privateKeyPem, 'base64url')}`;
}

interface TokenAnswer {
  access_token: string;
  instance_url: string;
  scope?: string;
}

async function requestToken(auth: Extract<SalesforceAuth, { kind: 'jwt' }>): Promise<TokenAnswer> {
  const oauth2 = new OAuth2({ loginUrl: auth.loginUrl.replace(/\/$/, '') });
  try {
    return (await oauth2.requestToken({
      grant_type: JWT_BEARER_GRANT,
      assertion: signJwtAssertion(auth),
    })) as TokenAnswer;
  } catch (error) {
    const code = (error as Error).name || 'invalid_grant';
    const fix =
      'check SALESFORCE_CLIENT_ID (the connected app\u2019s consumer key), SALESFORCE_USERNAME (pre-authorized for the app), ' +
      'SALESFORCE_LOGIN_URL and that SALESFORCE_PRIVATE_KEY_FILE matches the app\u2019s certificate';
    throw new CrmAuthError(
      'salesforce',
      code,
      `the JWT bearer grant was refused (${(error as Error).message}): ${fix}`,
      {
        cause: error,
      },
    );
  }
}

export interface OpenedConnection {
  conn: SalesforceConnection;
  /** The OAuth scopes the session was granted (unknown with a given access token). */
  scopes: string[] | undefined;
}

/** A connection ready for calls; with the JWT flow it has already signed in and refreshes itself on a 401. */
export async function openConnection(
  auth: SalesforceAuth,
  version = SALESFORCE_API_VERSION,
): Promise<OpenedConnection> {
  if (auth.kind === 'token') {
    const conn = new Connection({ instanceUrl: auth.instanceUrl, accessToken: auth.accessToken, version });
    conn._transport = new NoHiddenRetriesTransport();
    return { conn, scopes: undefined };
  }
  const first = await requestToken(auth);
  const conn = new Connection({
    instanceUrl: first.instance_url,
    accessToken: first.access_token,
    version,
    refreshFn: (_conn, callback) => {
      requestToken(auth).then(
        (answer) => callback(null, answer.access_token),
        (error: Error) => callback(error),
      );
    },
  });
  conn._transport = new NoHiddenRetriesTransport();
  return { conn, scopes: first.scope?.split(' ').filter(Boolean) };
}
