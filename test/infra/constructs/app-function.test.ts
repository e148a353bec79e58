/**
 * How a function is built and shipped: our own esbuild step with code
 * splitting (`infra/bundle.ts`), run by CDK as local bundling, and the
 * `sourceMaps` context.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleFunction, ENTRY_FILE } from '../../../infra/bundle.ts';
import { AppFunction } from '../../../infra/constructs/app-function.ts';

const FIXTURE = 'test/infra/fixtures/bundle/entry.ts';
const made: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The function's template and the directory its code was built into. */
const synth = (context: Record<string, unknown>) => {
  const outdir = tempDir();
  const app = new App({ outdir, context });
  const stack = new Stack(app, 'Test', {
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  new AppFunction(stack, 'Fn', { entry: FIXTURE });
  const template = Template.fromStack(stack);
  const assembly = app.synth();
  const assetDirs = readdirSync(assembly.directory)
    .filter((name) => name.startsWith('asset.'))
    .map((name) => join(assembly.directory, name));
  return { template, assetDirs };
};

describe('a function build', () => {
  it('writes the entry as index.mjs and what it imports dynamically as a chunk beside it, loaded only when asked for', async () => {
    // Arrange
    const outdir = tempDir();

    // Act
    const metafile = bundleFunction(
      { entry: FIXTURE, sourceMap: false },
      outdir,
    );

    // Assert: two files, and a cold start reads only the entry.
    const files = readdirSync(outdir).sort();
    expect(files).toHaveLength(2);
    expect(files).toContain(ENTRY_FILE);
    expect(files.every((file) => file.endsWith('.mjs'))).toBe(true);
    const [entry] = Object.entries(metafile.outputs).filter(([path]) =>
      path.endsWith(`/${ENTRY_FILE}`),
    );
    const chunk = files.find((file) => file !== ENTRY_FILE);
    expect(
      entry?.[1].imports.map((imported) => [
        basename(imported.path),
        imported.kind,
      ]),
    ).toEqual([[chunk, 'dynamic-import']]);
    const { handler } = await import(
      pathToFileURL(join(outdir, ENTRY_FILE)).href
    );
    expect(await handler({})).toBe('loaded at init');
    expect(await handler({ render: true })).toBe(
      '<p>loaded at init, then rendered on demand</p>',
    );
  });

  it('copies the assets it names beside the code', () => {
    // Arrange
    const outdir = tempDir();

    // Act
    bundleFunction(
      {
        entry: FIXTURE,
        sourceMap: false,
        assets: ['redoc/bundles/redoc.standalone.js'],
      },
      outdir,
    );

    // Assert
    expect(existsSync(join(outdir, 'redoc.standalone.js'))).toBe(true);
  });
});

describe('the traceAwsCalls context', () => {
  it('is off by default: the code loads no X-Ray tracer (Lambda traces its own segments)', () => {
    // Act
    const { template } = synth({});

    // Assert
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(fn?.Properties.TracingConfig).toEqual({ Mode: 'Active' });
    expect(fn?.Properties.Environment.Variables.POWERTOOLS_TRACE_ENABLED).toBe(
      'false',
    );
  });

  it('when true, tells the code to trace every SDK call', () => {
    // Act
    const { template } = synth({ traceAwsCalls: true });

    // Assert
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(fn?.Properties.Environment.Variables.POWERTOOLS_TRACE_ENABLED).toBe(
      'true',
    );
  });
});

describe('the sourceMaps context', () => {
  it('is off by default: no maps shipped, no --enable-source-maps', () => {
    // Act
    const { template, assetDirs } = synth({});

    // Assert
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(fn?.Properties.Handler).toBe('index.handler');
    expect(fn?.Properties.Runtime).toBe('nodejs22.x');
    expect(fn?.Properties.Environment.Variables.NODE_OPTIONS).toBeUndefined();
    expect(assetDirs).toHaveLength(1);
    const shipped = readdirSync(assetDirs[0] ?? '');
    expect(shipped.some((file) => file.endsWith('.map'))).toBe(false);
  });

  it('when true (as -c sourceMaps=true gives it, a string), ships the maps and turns them on', () => {
    // Act
    const { template, assetDirs } = synth({ sourceMaps: 'true' });

    // Assert
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(fn?.Properties.Environment.Variables.NODE_OPTIONS).toBe(
      '--enable-source-maps',
    );
    const shipped = readdirSync(assetDirs[0] ?? '');
    expect(shipped.filter((file) => file.endsWith('.map'))).toHaveLength(2);
  });

  it('refuses anything but true or false', () => {
    expect(() => synth({ sourceMaps: 'yes' })).toThrow(
      'The sourceMaps context must be true or false; got yes',
    );
  });
});
