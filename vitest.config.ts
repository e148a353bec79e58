import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One embedded DynamoDB engine serves every test file (a table each).
    globalSetup: ['test/support/global-setup.ts'],
    // Test files share their worker's module cache: imports (the SDK, CDK,
    // liquidjs) load once per worker instead of once per file.
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
