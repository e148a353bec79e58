import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The embedded engines serve every test file (a table each), with a
    // DynamoDB engine per worker.
    globalSetup: ['test/support/global-setup.ts'],
    // Deletes each file's tables after it: the engine slows with each table.
    setupFiles: ['test/support/per-file.ts'],
    // Test files share their worker's module cache: imports (the SDK, CDK,
    // liquidjs) load once per worker instead of once per file.
    isolate: false,
    // A worker per core (vitest's default leaves one core out): the files
    // mostly wait on the DynamoDB engine, the mailbox and spawned stacks,
    // so two workers on two cores keep both busy (64 s → 42 s for routes,
    // functions and e2e on the 2-core machine).
    maxWorkers: Math.max(2, availableParallelism()),
    // A hang guard, not a speed check (speed lives in the benchmarks): on a
    // loaded 2-core CI machine a test that takes 1 s alone was seen taking
    // over 20 s while the rate-limit and counter tests hammered the engine,
    // and at load 8 a beforeAll that seeds an in-process stack took over
    // 60 s. Tests with more work than that set a limit from their work.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // The tests that load the Powertools tracer (as on Lambda) must not
      // patch Node's http, https and fetch for X-Ray: with isolate false the
      // patch outlives them, and every later call of their worker (SDK to
      // the engines) logged a "Failed to get the current sub/segment"
      // stack trace (the X-Ray SDK, loaded as ESM before Powertools' own
      // IGNORE_ERROR default is set, logs a missing segment as an error).
      POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS: 'false',
    },
  },
});
