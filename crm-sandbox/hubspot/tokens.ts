/**
 * Private-app access tokens: each with its scopes, and expired on demand. A call names its token in
 * `Authorization: Bearer …`; a missing or unknown one is 401 INVALID_AUTHENTICATION, an expired one 401
 * EXPIRED_AUTHENTICATION, one without a scope the call needs 403 MISSING_SCOPES naming the scopes required.
 */
import { randomBytes } from 'node:crypto';
import { expiredToken, type HubspotApiError, invalidToken, missingCredentials, missingScopes } from './errors.ts';
import { type HubspotObject, OBJECTS } from './schema.ts';

export interface TokenInfo {
  token: string;
  scopes: string[];
  expired: boolean;
  userId: number;
  appId: number;
}

/** Every scope a write-back (and its pre-flight, and creating its properties) could need. */
export const ALL_SCOPES: string[] = OBJECTS.flatMap((o: HubspotObject) => [
  `crm.objects.${o}.read`,
  `crm.objects.${o}.write`,
  `crm.schemas.${o}.read`,
  `crm.schemas.${o}.write`,
]);

/** A token in HubSpot's shape (`pat-na1-` and a UUID). */
export function newToken(): string {
  const hex = randomBytes(16).toString('hex');
  return `pat-na1-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export class Tokens {
  private readonly byToken = new Map<string, TokenInfo>();
  private nextAppId = 3_000_001;

  add(scopes: string[] = ALL_SCOPES, token = newToken()): TokenInfo {
    const info: TokenInfo = { token, scopes: [...scopes], expired: false, userId: 1_234_567, appId: this.nextAppId++ };
    this.byToken.set(token, info);
    return info;
  }

  get(token: string): TokenInfo | undefined {
    return this.byToken.get(token);
  }

  expire(token: string): void {
    const info = this.byToken.get(token);
    if (info) info.expired = true;
  }

  /** The token of a request's `Authorization` header, or the 401 it gets. */
  authenticate(header: string | undefined): TokenInfo | HubspotApiError {
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
    if (!match) return missingCredentials();
    const info = this.byToken.get(match[1] as string);
    if (!info) return invalidToken();
    return info.expired ? expiredToken() : info;
  }

  /** The 403 a token without one of `anyOf` gets, or undefined. */
  authorize(info: TokenInfo, anyOf: string[]): HubspotApiError | undefined {
    return anyOf.some((scope) => info.scopes.includes(scope)) ? undefined : missingScopes(anyOf);
  }
}
