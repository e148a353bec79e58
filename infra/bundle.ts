/**
 * Infrastructure. How a function's code is built: one esbuild run per
 * function, ESM with code splitting. The entry becomes `index.mjs`; what it
 * loads with a dynamic `import()` (a store adapter its bindings name, the
 * rendering engine, the X-Ray tracer) becomes a chunk beside it, read from
 * disk only when first imported. A cold start therefore parses the entry and
 * its static imports, not every module the function might one day use.
 *
 * CDK's `NodejsFunction` writes a single file (no splitting), so
 * `AppFunction` runs this build itself, as a local bundling step, and
 * `npm run bench:cold` measures exactly what it writes.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, buildSync, type Metafile } from 'esbuild';

/** The repository root: entries and the lock file are relative to it. */
export const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/** The file Lambda loads: `index.handler` names its `handler` export. */
export const ENTRY_FILE = 'index.mjs';

/** What a function's build writes. */
export interface BundleOptions {
  /** The handler module, relative to the repository root. */
  entry: string;
  /** Writes `.map` files beside the code (read only with source maps on). */
  sourceMap: boolean;
  /**
   * Files of npm packages the function reads at run time, as module paths
   * (`redoc/bundles/redoc.standalone.js`): each is copied beside the code.
   */
  assets?: readonly string[];
}

/** esbuild's options for a function's build into `outdir`. */
export const buildOptions = (
  options: BundleOptions,
  outdir: string,
): BuildOptions => ({
  entryPoints: { index: join(repoRoot, options.entry) },
  absWorkingDir: repoRoot,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  minify: true,
  sourcemap: options.sourceMap,
  outdir,
  // Chunks sit beside the entry, so `import.meta.url` names the same
  // directory in every file (assets are read relative to it).
  chunkNames: '[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  mainFields: ['module', 'main'],
  // The Node.js 22 runtime carries the AWS SDK v3: used, not shipped.
  external: ['@aws-sdk/*'],
  // CommonJS dependencies inside an ESM bundle still call `require`.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});

/**
 * Builds a function into `outdir` (created if missing) and copies its
 * assets beside the code. Returns esbuild's metafile (what went where).
 */
export const bundleFunction = (
  options: BundleOptions,
  outdir: string,
): Metafile => {
  mkdirSync(outdir, { recursive: true });
  const result = buildSync(buildOptions(options, outdir));
  const require = createRequire(join(repoRoot, 'package.json'));
  for (const specifier of options.assets ?? []) {
    const file = require.resolve(specifier);
    copyFileSync(file, join(outdir, basename(file)));
  }
  if (!result.metafile) throw new Error('esbuild returned no metafile');
  return result.metafile;
};
