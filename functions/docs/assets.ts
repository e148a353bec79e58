/**
 * The files the API reference page loads, served by the `docs` group
 * itself (no CDN: the page works offline). They come from npm packages:
 * the Lambda bundle carries a copy beside its code (the group lists them
 * in `assets`, and AppFunction copies them at synth); from source (the
 * local stack, tests) they are read from the installed package.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';

/** Redoc's standalone bundle: the renderer, React and its styles in one script. */
export const REDOC_BUNDLE = 'redoc/bundles/redoc.standalone.js';

/** An asset as served: its text, and a name that changes with its content. */
export interface Asset {
  /** `redoc.standalone.<hash>.js`: clients may keep it for good. */
  name: string;
  contentType: string;
  body: string;
}

const read = (specifier: string): string => {
  // In the Lambda bundle: the copy beside the code.
  const beside = new URL(`./${basename(specifier)}`, import.meta.url);
  if (existsSync(beside)) return readFileSync(beside, 'utf8');
  return readFileSync(
    createRequire(import.meta.url).resolve(specifier),
    'utf8',
  );
};

const loaded = new Map<string, Asset>();

/** Reads an asset once per container (a megabyte: never per request). */
export const assetOf = (specifier: string): Asset => {
  const known = loaded.get(specifier);
  if (known) return known;
  const body = read(specifier);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const file = basename(specifier);
  const asset: Asset = {
    name: file.replace(/\.js$/, `.${hash}.js`),
    contentType: 'text/javascript',
    body,
  };
  loaded.set(specifier, asset);
  return asset;
};
