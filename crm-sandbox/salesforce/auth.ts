/**
 * The connected app and its sessions. The OAuth 2.0 JWT bearer flow (`POST /services/oauth2/token`, grant
 * `urn:ietf:params:oauth:grant-type:jwt-bearer`): the assertion is an RS256 JWT whose signature verifies with the
 * connected app's certificate (here its public key), `iss` the app's consumer key, `sub` the user name, `aud` the
 * login URL, `exp` not passed. It answers an access token (no refresh token: the flow signs a new assertion instead).
 * A session past its life, or expired on demand, gets 401 INVALID_SESSION_ID on every API call.
 */
import { createPublicKey, randomBytes, verify } from 'node:crypto';

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface ConnectedApp {
  clientId: string;
  username: string;
  publicKeyPem: string;
  loginUrl: string;
  orgId: string;
  userId: string;
}

export type TokenAnswer =
  | { ok: true; body: Record<string, string> }
  | { ok: false; status: number; body: { error: string; error_description: string } };

const refuse = (error: string, description: string, status = 400): TokenAnswer => ({
  ok: false,
  status,
  body: { error, error_description: description },
});

function decodePart(part: string | undefined): Record<string, unknown> | undefined {
  if (part === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export class Sessions {
  private readonly app: ConnectedApp;
  private readonly tokens = new Map<string, number>();
  /** Tokens granted without the `api` scope (nor `full`): valid, but not for the REST API. */
  private readonly noApi = new Set<string>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** The OAuth scopes the connected app grants (default `api`). */
  scopes: string[] = ['api'];
  /** Successful token grants (tests count refreshes). */
  grants = 0;

  constructor(app: ConnectedApp, ttlMs: number, now: () => number) {
    this.app = app;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** A new session token (`<org id>!<random>`, as Salesforce's look), with the app's scopes. */
  issue(): string {
    const token = `${this.app.orgId}!${randomBytes(36).toString('base64url')}`;
    this.tokens.set(token, this.now() + this.ttlMs);
    if (!this.scopes.includes('api') && !this.scopes.includes('full')) this.noApi.add(token);
    return token;
  }

  /** Whether a (valid) token may call the REST API: its grant included the `api` or `full` scope. */
  apiAllowed(token: string | undefined): boolean {
    return token !== undefined && !this.noApi.has(token);
  }

  valid(token: string | undefined): boolean {
    if (token === undefined) return false;
    const until = this.tokens.get(token);
    return until !== undefined && until > this.now();
  }

  /** Every token issued (tests look for them where no token may be: histories, logs, files). */
  issued(): string[] {
    return [...this.tokens.keys()];
  }

  /** Ends every session now (an admin's "expire all", or a password reset): the next call gets 401. */
  expireAll(): void {
    for (const token of this.tokens.keys()) this.tokens.set(token, 0);
  }

  /** The token endpoint's answer to a JWT bearer grant. */
  grant(params: URLSearchParams): TokenAnswer {
    if (params.get('grant_type') !== JWT_BEARER_GRANT)
      return refuse('unsupported_grant_type', 'grant type not supported');
    const assertion = params.get('assertion') ?? '';
    const [head, payload, signature] = assertion.split('.');
    const header = decodePart(head);
    const claims = decodePart(payload);
    if (!header || !claims || signature === undefined) return refuse('invalid_grant', 'invalid assertion');
    if (header['alg'] !== 'RS256') return refuse('invalid_grant', 'invalid assertion');
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${head}.${payload}`),
      createPublicKey(this.app.publicKeyPem),
      Buffer.from(signature, 'base64url'),
    );
    if (!signed) return refuse('invalid_grant', 'invalid assertion');
    return this.checkClaims(claims);
  }

  private checkClaims(claims: Record<string, unknown>): TokenAnswer {
    if (claims['iss'] !== this.app.clientId) return refuse('invalid_client_id', 'client identifier invalid');
    const aud = typeof claims['aud'] === 'string' ? claims['aud'].replace(/\/$/, '') : '';
    if (aud !== this.app.loginUrl) return refuse('invalid_grant', 'audience is invalid');
    if (claims['sub'] !== this.app.username) return refuse('invalid_grant', 'user hasn\u2019t approved this consumer');
    if (typeof claims['exp'] !== 'number' || claims['exp'] * 1000 <= this.now()) {
      return refuse('invalid_grant', 'expired authorization code');
    }
    this.grants++;
    return {
      ok: true,
      body: {
        access_token: this.issue(),
        scope: this.scopes.join(' '),
        instance_url: this.app.loginUrl,
        id: `${this.app.loginUrl}/id/${this.app.orgId}/${this.app.userId}`,
        token_type: 'Bearer',
        issued_at: String(this.now()),
      },
    };
  }
}
