/** What every route is given and answers, and Salesforce's REST error body (`[{message, errorCode}]`). */

export interface Request {
  method: string;
  /** The path below `/services/data/vXX.X/` (or the full path outside it), split on `/`. */
  segments: string[];
  version: string;
  query: URLSearchParams;
  body: string;
}

export interface Reply {
  status: number;
  body?: unknown;
  /** Sent as is, with this content type (CSV results). */
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export class ApiFault extends Error {
  readonly status: number;
  readonly errorCode: string;
  readonly fields: string[] | undefined;
  constructor(status: number, errorCode: string, message: string, fields?: string[]) {
    super(message);
    this.status = status;
    this.errorCode = errorCode;
    this.fields = fields;
  }
}

export function errorReply(status: number, errorCode: string, message: string, fields?: string[]): Reply {
  return { status, body: [{ message, errorCode, ...(fields ? { fields } : {}) }] };
}

export function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    throw new ApiFault(400, 'JSON_PARSER_ERROR', 'The request body is not valid JSON');
  }
}

export const notFound = (): ApiFault => new ApiFault(404, 'NOT_FOUND', 'The requested resource does not exist');
