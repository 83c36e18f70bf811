import { describe, expect, it } from 'vitest';
import { HUBSPOT_API_URL_DEFAULT, parseHubspotConfig } from '../../../config/crm.ts';
import { ConfigError } from '../../../connectors/errors.ts';

const TOKEN = 'pat-na1-11111111-2222-3333-4444-555555555555';

describe('the HubSpot settings', () => {
  it("default to HubSpot's own API", () => {
    expect(parseHubspotConfig({ HUBSPOT_ACCESS_TOKEN: TOKEN })).toEqual({
      accessToken: TOKEN,
      apiUrl: HUBSPOT_API_URL_DEFAULT,
    });
    expect(parseHubspotConfig({ HUBSPOT_ACCESS_TOKEN: TOKEN, HUBSPOT_API_URL: 'http://127.0.0.1:4010/' }).apiUrl).toBe(
      'http://127.0.0.1:4010',
    );
  });

  it('refuse a missing token or a bad URL naming the variable, never the token', () => {
    expect(() => parseHubspotConfig({})).toThrow(ConfigError);
    expect(() => parseHubspotConfig({})).toThrow(/HUBSPOT_ACCESS_TOKEN is not set/);
    const bad = (() => {
      try {
        parseHubspotConfig({ HUBSPOT_ACCESS_TOKEN: TOKEN, HUBSPOT_API_URL: 'ftp://x' });
      } catch (error) {
        return error as Error;
      }
      return undefined;
    })();
    expect(bad).toBeInstanceOf(ConfigError);
    expect(bad?.message).toMatch(/^HUBSPOT_API_URL /);
    expect(bad?.message).not.toContain(TOKEN);
    expect(() => parseHubspotConfig({ HUBSPOT_ACCESS_TOKEN: `${TOKEN} x` })).toThrow(
      /HUBSPOT_ACCESS_TOKEN holds whitespace/,
    );
  });
});
