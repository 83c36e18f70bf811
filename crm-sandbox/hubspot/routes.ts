/** What a route of the stand-in is: its method and path, the scopes it takes (any of them), and its handler. */
import type { HubspotObject } from './schema.ts';
import type { TokenInfo } from './tokens.ts';

export interface RouteRequest {
  object: HubspotObject;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  token: TokenInfo;
}

export interface RouteAnswer {
  status: number;
  body?: unknown;
}

export interface Route {
  method: 'GET' | 'POST' | 'PATCH';
  /** `:name` segments are parameters; `:object` must be `companies` or `contacts`. */
  path: string;
  /** The scopes a token needs one of for this object. */
  scopes(object: HubspotObject): string[];
  handle(request: RouteRequest): RouteAnswer;
}
