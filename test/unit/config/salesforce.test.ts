/** The Salesforce write-back's settings: either set of variables, each mistake named by its variable, no secret shown. */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSalesforceAuth } from '../../../config/salesforce.ts';
import { jwtAudience } from '../../../connectors/crm/salesforce/auth.ts';
import { salesforceFieldMetadata } from '../../../connectors/crm/salesforce/metadata.ts';
import { ConfigError } from '../../../connectors/errors.ts';

let dir: string;
let keyFile: string;
const pem = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-sf-'));
  keyFile = join(dir, 'server.key');
  await writeFile(keyFile, pem);
  await writeFile(join(dir, 'cert.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const jwtEnv = () => ({
  SALESFORCE_CLIENT_ID: '3MVG9abc',
  SALESFORCE_USERNAME: 'integration@example.com',
  SALESFORCE_PRIVATE_KEY_FILE: keyFile,
});

const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('no error');
};

describe('parseSalesforceAuth', () => {
  it('is undefined with no Salesforce variable, and reads the JWT bearer settings with the default login URL', () => {
    expect(parseSalesforceAuth({})).toBeUndefined();
    expect(parseSalesforceAuth(jwtEnv())).toEqual({
      kind: 'jwt',
      loginUrl: 'https://login.salesforce.com',
      clientId: '3MVG9abc',
      username: 'integration@example.com',
      privateKeyPem: pem,
    });
    expect(parseSalesforceAuth({ ...jwtEnv(), SALESFORCE_LOGIN_URL: 'https://test.salesforce.com/' })).toMatchObject({
      loginUrl: 'https://test.salesforce.com',
    });
  });

  it('reads an instance URL and access token', () => {
    expect(
      parseSalesforceAuth({
        SALESFORCE_INSTANCE_URL: 'https://acme.my.salesforce.com',
        SALESFORCE_ACCESS_TOKEN: '00D!x',
      }),
    ).toEqual({ kind: 'token', instanceUrl: 'https://acme.my.salesforce.com', accessToken: '00D!x' });
  });

  it('names what is missing or wrong, never the token or the key', () => {
    expect(message(() => parseSalesforceAuth({ SALESFORCE_CLIENT_ID: 'x' }))).toMatch(
      /SALESFORCE_USERNAME, SALESFORCE_PRIVATE_KEY_FILE/,
    );
    const token = '00Dsecret!AQcAQH0dMHZfz972';
    const noUrl = message(() => parseSalesforceAuth({ SALESFORCE_ACCESS_TOKEN: token }));
    expect(noUrl).toMatch(/SALESFORCE_INSTANCE_URL/);
    expect(noUrl).not.toContain(token);
    expect(message(() => parseSalesforceAuth({ ...jwtEnv(), SALESFORCE_LOGIN_URL: 'login.salesforce.com' }))).toMatch(
      /SALESFORCE_LOGIN_URL must be an http\(s\) URL/,
    );
    expect(
      message(() => parseSalesforceAuth({ ...jwtEnv(), SALESFORCE_PRIVATE_KEY_FILE: join(dir, 'none.key') })),
    ).toMatch(/SALESFORCE_PRIVATE_KEY_FILE: cannot read .*none\.key \(ENOENT\)/);
    const notKey = message(() =>
      parseSalesforceAuth({ ...jwtEnv(), SALESFORCE_PRIVATE_KEY_FILE: join(dir, 'cert.pem') }),
    );
    expect(notKey).toMatch(/holds no PEM private key/);
    expect(notKey).not.toContain('MIIB');
  });
});

describe('salesforceFieldMetadata', () => {
  it('prints a CustomObject with one CustomField per kit field, typed', () => {
    const xml = salesforceFieldMetadata('Account', [
      { name: 'Signal_Count__c', label: 'Signal Count', type: 'number' },
      { name: 'Signal_Last_Seen__c', label: 'Signal Last Seen', type: 'date' },
      { name: 'Signal_Detected_At__c', label: 'Signal Detected At', type: 'datetime' },
      { name: 'Signal_Summary__c', label: 'Signal Summary <&>', type: 'string', length: 1000 },
      { name: 'Signal_Company_Name__c', label: 'Signal Company Name', type: 'string' },
    ]);
    expect(xml).toContain('<CustomObject xmlns="http://soap.sforce.com/2006/04/metadata">');
    expect(xml).toMatch(
      /<fullName>Signal_Count__c<\/fullName>[\s\S]*?<type>Number<\/type>\s*<precision>18<\/precision>\s*<scale>0<\/scale>/,
    );
    expect(xml).toMatch(/<fullName>Signal_Last_Seen__c<\/fullName>[\s\S]*?<type>Date<\/type>/);
    expect(xml).toMatch(/<fullName>Signal_Detected_At__c<\/fullName>[\s\S]*?<type>DateTime<\/type>/);
    expect(xml).toMatch(
      /<label>Signal Summary &lt;&amp;&gt;<\/label>[\s\S]*?<type>LongTextArea<\/type>\s*<length>1000<\/length>/,
    );
    expect(xml).toMatch(
      /<fullName>Signal_Company_Name__c<\/fullName>[\s\S]*?<type>Text<\/type>\s*<length>255<\/length>/,
    );
    expect(xml.match(/<fields>/g)).toHaveLength(5);
  });
});

describe('jwtAudience', () => {
  it('signs for the login URL, or for login/test.salesforce.com behind a My Domain URL', () => {
    expect(jwtAudience('https://login.salesforce.com/')).toBe('https://login.salesforce.com');
    expect(jwtAudience('http://127.0.0.1:4100')).toBe('http://127.0.0.1:4100');
    expect(jwtAudience('https://acme.my.salesforce.com')).toBe('https://login.salesforce.com');
    expect(jwtAudience('https://acme--uat.sandbox.my.salesforce.com')).toBe('https://test.salesforce.com');
  });
});
