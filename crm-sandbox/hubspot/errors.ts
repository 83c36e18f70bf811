/**
 * HubSpot's error bodies, as its CRM API v3 reference documents them: `{status: "error", message, correlationId,
 * category, subCategory?, errors?, context?, links?}`; a 429 adds `errorType` and `policyName`.
 */
import { randomUUID } from 'node:crypto';

export interface ErrorDetail {
  message: string;
  code?: string;
  in?: string;
  subCategory?: string;
  context?: Record<string, string[]>;
}

export interface HubspotErrorBody {
  status: 'error';
  message: string;
  correlationId: string;
  category: string;
  subCategory?: string;
  errors?: ErrorDetail[];
  context?: Record<string, string[]>;
  links?: Record<string, string>;
  errorType?: string;
  policyName?: string;
  requestId?: string;
}

/** An answer the route gives instead of its result: the status and HubSpot's body. */
export class HubspotApiError extends Error {
  readonly status: number;
  readonly body: HubspotErrorBody;
  readonly headers: Record<string, string>;

  constructor(status: number, body: Omit<HubspotErrorBody, 'status' | 'correlationId'>, headers = {}) {
    super(body.message);
    this.status = status;
    this.body = { status: 'error', correlationId: randomUUID(), ...body };
    this.headers = headers;
  }
}

export function validationError(message: string, errors?: ErrorDetail[]): HubspotApiError {
  return new HubspotApiError(400, { message, category: 'VALIDATION_ERROR', ...(errors ? { errors } : {}) });
}

export function notFound(message: string): HubspotApiError {
  return new HubspotApiError(404, { message, category: 'OBJECT_NOT_FOUND' });
}

export function conflict(message: string): HubspotApiError {
  return new HubspotApiError(409, { message, category: 'OBJECT_ALREADY_EXISTS' });
}

export function missingCredentials(): HubspotApiError {
  return new HubspotApiError(401, {
    message:
      'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
    category: 'INVALID_AUTHENTICATION',
  });
}

export function invalidToken(): HubspotApiError {
  return new HubspotApiError(401, {
    message: 'The OAuth token used to make this call is invalid.',
    category: 'INVALID_AUTHENTICATION',
  });
}

export function expiredToken(): HubspotApiError {
  return new HubspotApiError(401, {
    message: 'The OAuth token used to make this call expired 1 hour(s) ago.',
    category: 'EXPIRED_AUTHENTICATION',
  });
}

export function missingScopes(required: string[]): HubspotApiError {
  return new HubspotApiError(403, {
    message:
      "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
    category: 'MISSING_SCOPES',
    errors: [
      { message: 'One or more of the following scopes are required.', context: { requiredGranularScopes: required } },
    ],
    links: { scopes: 'https://developers.hubspot.com/scopes' },
  });
}

export function serverError(status: number): HubspotApiError {
  return new HubspotApiError(status, {
    message: status === 500 ? 'internal error' : 'The service is temporarily unavailable.',
    category: status === 500 ? 'INTERNAL_ERROR' : 'SERVICE_UNAVAILABLE',
  });
}

export type RateLimitPolicy = 'TEN_SECONDLY_ROLLING' | 'DAILY';

export function rateLimited(policy: RateLimitPolicy, headers: Record<string, string>): HubspotApiError {
  const message =
    policy === 'DAILY' ? 'You have reached your daily limit.' : 'You have reached your ten_secondly_rolling limit.';
  return new HubspotApiError(
    429,
    { message, category: 'RATE_LIMITS', errorType: 'RATE_LIMIT', policyName: policy, requestId: randomUUID() },
    headers,
  );
}

/** A 207 answer's per-record error: `context.ids` names the records it is about. */
export function recordError(category: string, message: string, ids: string[], errors?: ErrorDetail[]) {
  return {
    status: 'error' as const,
    category,
    message,
    context: { ids },
    errors: errors ?? [],
    links: {},
  };
}
