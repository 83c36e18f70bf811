/**
 * The CRM write-back's settings, read from the worker's environment once. HubSpot: `HUBSPOT_ACCESS_TOKEN` (a private
 * app's token) and `HUBSPOT_API_URL` (default HubSpot's own, https://api.hubapi.com; the local stand-in's URL in
 * `signal-kit dev` and tests). A mistake is a `ConfigError` naming the variable, never its value: the token stays in
 * the worker.
 */
import { z } from 'zod';
import { ConfigError } from '../connectors/errors.ts';

type Env = Record<string, string | undefined>;

export const HUBSPOT_API_URL_DEFAULT = 'https://api.hubapi.com';

export interface HubspotConfig {
  accessToken: string;
  apiUrl: string;
}

const hubspotSchema = z.object({
  HUBSPOT_ACCESS_TOKEN: z
    .string({
      message:
        'is not set: create a private app in HubSpot (Settings > Integrations > Private Apps) and set its access token',
    })
    .trim()
    .min(1, { message: 'is empty: set it to the private app access token' })
    .refine((token) => !/\s/.test(token), { message: 'holds whitespace: set it to the token alone' }),
  HUBSPOT_API_URL: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .default(HUBSPOT_API_URL_DEFAULT)
    .transform((url) => url.replace(/\/+$/, '')),
});

/** The HubSpot settings, or a `ConfigError` naming each wrong variable (never its value). */
export function parseHubspotConfig(env: Env = process.env): HubspotConfig {
  const parsed = hubspotSchema.safeParse({
    HUBSPOT_ACCESS_TOKEN: env['HUBSPOT_ACCESS_TOKEN'],
    HUBSPOT_API_URL: env['HUBSPOT_API_URL'] || undefined,
  });
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; '));
  }
  return { accessToken: parsed.data.HUBSPOT_ACCESS_TOKEN, apiUrl: parsed.data.HUBSPOT_API_URL };
}

/** Whether the worker is configured for HubSpot at all (a write-back to it then needs the rest right). */
export const hubspotConfigured = (env: Env = process.env): boolean => Boolean(env['HUBSPOT_ACCESS_TOKEN']);
