/**
 * `npm run --silent smoke -- --api <base url> --key <admin key>`: the smoke
 * journey (./smoke.ts) over the global fetch, lines on stdout, usage
 * mistakes on stderr. Exit code 0 passed, 1 failed, 2 usage mistake.
 */
import { main } from './smoke.ts';

process.exitCode = await main(process.argv.slice(2), {
  fetch,
  print: (line) => process.stdout.write(`${line}\n`),
  printError: (line) => process.stderr.write(`${line}\n`),
});
