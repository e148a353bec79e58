/**
 * The API reference page: Redoc, served by us, rendering our own OpenAPI
 * document. Every address is relative to the page (`/api/v1/docs`), so
 * the page works behind any stage or domain, and nothing is loaded from
 * anywhere else.
 */

/**
 * What the page may load: our own script, document and styles. Redoc
 * injects its styles as `<style>` elements (styled-components) and runs
 * its search index in a worker made from a blob.
 */
export const DOCS_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** The page, loading the renderer from `docs/<script>`. */
export const docsPage = (script: string): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>Email marketing API reference</title>
  </head>
  <body>
    <redoc spec-url="openapi.json" expand-responses="200,201,202" required-props-first="true" sort-required-props-first="true"></redoc>
    <script src="docs/${script}"></script>
  </body>
</html>
`;
