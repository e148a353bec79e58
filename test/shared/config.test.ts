import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.ts';

const valid = {
  TABLE_NAME: 'table',
  PUBLIC_API_URL: 'https://api.example.test/prod/api/v1',
  APP_FROM_ADDRESS: 'no-reply@example.test',
  LINK_SIGNING_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:links',
};

describe('configuration', () => {
  it('reads the environment and defaults the key cache to 10 seconds', () => {
    expect(loadConfig(valid)).toEqual({
      ...valid,
      API_KEY_CACHE_TTL_SECONDS: 10,
      AWS_REGION: 'us-east-1',
      PROVIDER_STATUS_TTL_SECONDS: 60,
    });
  });

  it('fails fast, naming every bad variable', () => {
    expect(() =>
      loadConfig({
        API_KEY_CACHE_TTL_SECONDS: 'soon',
        PUBLIC_API_URL: 'https://api.example.test/',
      }),
    ).toThrow(/TABLE_NAME.*API_KEY_CACHE_TTL_SECONDS.*PUBLIC_API_URL/);
  });

  it('needs the link signing secret or the ARN of its secret', () => {
    const { LINK_SIGNING_SECRET_ARN: _, ...withoutSecret } = valid;
    expect(() => loadConfig(withoutSecret)).toThrow(
      'LINK_SIGNING_SECRET or LINK_SIGNING_SECRET_ARN is required',
    );
  });
});
