import { describe, expect, it } from 'vitest';
import { docsBindings } from '../../functions/docs/routes.ts';
import { endpointGroups } from '../../functions/groups.ts';
import {
  addressKey,
  endpoints,
  linkSecret,
  queue,
  scheduler,
  sendingStatus,
  signupForms,
  table,
} from '../../shared/bindings.ts';
import { configNamesOf, loadConfig } from '../../shared/config.ts';

const bindings = [
  table({ stores: [], actions: ['dynamodb:GetItem'] }),
  endpoints,
  linkSecret,
] as const;

const valid = {
  TABLE_NAME: 'table',
  PUBLIC_API_URL: 'https://api.example.test/prod/api/v1',
  APP_FROM_ADDRESS: 'no-reply@example.test',
  PAGES_URL: 'https://pages.example.test',
  LINK_SIGNING_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:links',
};

describe('configuration, derived from the bindings', () => {
  it('reads the variables of the bindings and defaults the key cache to 10 seconds', () => {
    expect(loadConfig(bindings, valid)).toEqual({
      ...valid,
      API_KEY_CACHE_TTL_SECONDS: 10,
    });
  });

  it('fails fast, naming every bad variable', () => {
    expect(() =>
      loadConfig(bindings, {
        API_KEY_CACHE_TTL_SECONDS: 'soon',
        PUBLIC_API_URL: 'https://api.example.test/',
      }),
    ).toThrow(/TABLE_NAME.*API_KEY_CACHE_TTL_SECONDS.*PUBLIC_API_URL/);
  });

  it('needs the link signing secret or the ARN of its secret with a linkSecret binding', () => {
    const { LINK_SIGNING_SECRET_ARN: _, ...withoutSecret } = valid;
    expect(() => loadConfig(bindings, withoutSecret)).toThrow(
      'LINK_SIGNING_SECRET or LINK_SIGNING_SECRET_ARN is required',
    );
    expect(
      loadConfig(
        [table({ stores: [], actions: ['dynamodb:GetItem'] }), endpoints],
        withoutSecret,
      ),
    ).not.toHaveProperty('LINK_SIGNING_SECRET_ARN');
  });

  it('needs the address key or the ARN of its secret with an addressKey binding, of at least 32 characters', () => {
    const withKey = [
      table({ stores: ['delivery'], actions: ['dynamodb:BatchGetItem'] }),
      addressKey,
    ] as const;
    expect(() => loadConfig(withKey, { TABLE_NAME: 'table' })).toThrow(
      'ADDRESS_KEY_SECRET or ADDRESS_KEY_SECRET_ARN is required',
    );
    expect(() =>
      loadConfig(withKey, { TABLE_NAME: 'table', ADDRESS_KEY_SECRET: 'short' }),
    ).toThrow(/ADDRESS_KEY_SECRET/);
    expect(
      loadConfig(withKey, {
        TABLE_NAME: 'table',
        ADDRESS_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:a',
      }),
    ).toMatchObject({
      ADDRESS_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:a',
    });
    expect(configNamesOf(bindings)).not.toContain('ADDRESS_KEY_SECRET_ARN');
  });

  it('tells a function only what it uses: the docs need no table, no secret, no account', () => {
    expect(configNamesOf(docsBindings)).toEqual([
      'APP_FROM_ADDRESS',
      'PAGES_URL',
      'PUBLIC_API_URL',
    ]);
    expect(
      loadConfig(docsBindings, {
        PUBLIC_API_URL: valid.PUBLIC_API_URL,
        APP_FROM_ADDRESS: valid.APP_FROM_ADDRESS,
        PAGES_URL: valid.PAGES_URL,
      }),
    ).toEqual({
      PUBLIC_API_URL: valid.PUBLIC_API_URL,
      APP_FROM_ADDRESS: valid.APP_FROM_ADDRESS,
      PAGES_URL: valid.PAGES_URL,
    });
  });

  it('reads the sign-up form settings with their defaults, and a CAPTCHA only with its site key and secret', () => {
    expect(loadConfig([signupForms], {})).toEqual({
      SIGNUP_MIN_FILL_SECONDS: 3,
      SIGNUP_MAX_PER_IP_PER_HOUR: 20,
      SIGNUP_MAX_PER_EMAIL_PER_HOUR: 5,
      SIGNUP_FRAME_ANCESTORS: "'none'",
    });
    expect(() =>
      loadConfig([signupForms], { SIGNUP_CAPTCHA_PROVIDER: 'turnstile' }),
    ).toThrow(/SIGNUP_CAPTCHA_SITE_KEY/);
    expect(() =>
      loadConfig([signupForms], {
        SIGNUP_FRAME_ANCESTORS: 'javascript:alert(1)',
      }),
    ).toThrow(/SIGNUP_FRAME_ANCESTORS/);
    expect(
      loadConfig([signupForms], {
        SIGNUP_FRAME_ANCESTORS: "'self' https://www.example.com",
        SIGNUP_CAPTCHA_PROVIDER: 'hcaptcha',
        SIGNUP_CAPTCHA_SITE_KEY: 'site',
        SIGNUP_CAPTCHA_SECRET_ARN:
          'arn:aws:secretsmanager:eu-west-1:1:secret:c',
      }),
    ).toMatchObject({
      SIGNUP_FRAME_ANCESTORS: "'self' https://www.example.com",
      SIGNUP_CAPTCHA_PROVIDER: 'hcaptcha',
    });
  });

  it('reads the account for the sending status, queue URLs per queue and the scheduler settings', () => {
    expect(
      configNamesOf([sendingStatus, queue('campaigns'), scheduler('sends')]),
    ).toEqual([
      'AWS_ACCOUNT_ID',
      'AWS_REGION',
      'PROVIDER_STATUS_TTL_SECONDS',
      'QUEUE_URL_CAMPAIGNS',
      'SCHEDULER_DEAD_LETTER_QUEUE_ARN',
      'SCHEDULER_ROLE_ARN',
      'SCHEDULE_GROUP_NAME',
      'SCHEDULE_MIN_LEAD_SECONDS',
      'SCHEDULE_TARGET_QUEUE_ARN_SENDS',
    ]);
    expect(() => loadConfig([sendingStatus], { AWS_ACCOUNT_ID: 'me' })).toThrow(
      /AWS_ACCOUNT_ID: must be 12 digits/,
    );
  });

  it('every group of the API has a configuration schema its bindings name', () => {
    for (const group of endpointGroups) {
      expect(configNamesOf(group.bindings).length).toBeGreaterThan(0);
    }
  });
});
