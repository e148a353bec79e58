import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import getPort from 'get-port';
import { parseInvocation } from '../../infra/admin/commands.ts';
import { localFilesOf, localStackDeps } from '../../infra/admin/targets.ts';
import type { StackInfo } from '../../infra/local/stack-file.ts';

const run = promisify(execFile);

/** A local stack started by a test, as a user would start it. */
export interface RunningStack {
  dataDir: string;
  info: StackInfo;
  demoKey: string;
  output: () => string;
  /**
   * An admin command against this stack, run in process (the same command
   * objects the CLI runs): for arranging, where the process is not the point.
   */
  admin(...args: string[]): Promise<Record<string, string>>;
  /** `npm run --silent admin -- …` against this stack; its one JSON object. */
  adminCli(...args: string[]): Promise<Record<string, string>>;
  /** The admin command's failure: exit code and stderr. */
  adminFailure(...args: string[]): Promise<{ code: number; stderr: string }>;
  /** fetch below the API base URL. */
  call(
    path: string,
    options?: { key?: string; method?: string; body?: unknown },
    // biome-ignore lint/suspicious/noExplicitAny: tests walk response JSON freely and assert its shape
  ): Promise<{ status: number; headers: Headers; json: any }>;
  stop(): Promise<number | null>;
}

/**
 * Starts `infra/local/start.ts` (what `npm start` runs after its install
 * check) on free ports and a data dir of its own, and waits for "ready".
 */
export const startStack = async (
  options: { dataDir?: string; env?: Record<string, string> } = {},
): Promise<RunningStack> => {
  const dataDir =
    options.dataDir ?? (await mkdtemp(join(tmpdir(), 'local-stack-')));
  const port = await getPort({ host: '127.0.0.1' });
  // The webhook inbox listens on PORT+1 unless told: a port of its own,
  // checked free, so that a neighbour on PORT+1 cannot stop the start.
  const inboxPort = await getPort({ host: '127.0.0.1', exclude: [port] });
  const env = {
    ...process.env,
    PORT: String(port),
    WEBHOOK_INBOX_PORT: String(inboxPort),
    LOCAL_DATA_DIR: dataDir,
    ...options.env,
  };
  // One process, as \`npm start\` runs it (node with tsx's loader): a signal
  // reaches the stack itself. Through the \`tsx\` binary, a relay process
  // gives the stack 30 ms to acknowledge a signal before it kills it, which
  // a loaded machine can miss (the stop then exits 143).
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'infra/local/start.ts'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`stack not ready in 60 s:\n${output}`)),
      60_000,
    );
    const check = () => {
      if (/\bready\b/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`stack exited (${code}):\n${output}`));
    });
  });
  const info = JSON.parse(
    await readFile(join(dataDir, 'stack.json'), 'utf8'),
  ) as StackInfo;
  const demo = JSON.parse(
    await readFile(join(dataDir, 'demo.json'), 'utf8'),
  ) as { apiKey: string };

  const adminEnv = { ...process.env, LOCAL_DATA_DIR: dataDir };
  return {
    dataDir,
    info,
    demoKey: demo.apiKey,
    output: () => output,
    admin: async (...args) => {
      const { command, flags } = parseInvocation(args);
      const result = command.local
        ? await command.run(localFilesOf(dataDir), flags)
        : await command.run(await localStackDeps(dataDir), flags);
      // What the CLI prints is this object as JSON: keep to that shape.
      return JSON.parse(JSON.stringify(result));
    },
    adminCli: async (...args) => {
      const { stdout } = await run(
        'npm',
        ['run', '--silent', 'admin', '--', ...args],
        { env: adminEnv },
      );
      return JSON.parse(stdout);
    },
    adminFailure: async (...args) => {
      try {
        await run('npm', ['run', '--silent', 'admin', '--', ...args], {
          env: adminEnv,
        });
      } catch (error) {
        const failure = error as { code: number; stderr: string };
        return { code: failure.code, stderr: failure.stderr };
      }
      throw new Error(`admin ${args.join(' ')} succeeded`);
    },
    call: async (path, { key, method = 'GET', body } = {}) => {
      const headers: Record<string, string> = {};
      if (key) headers['x-api-key'] = key;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${info.api}${path}`, {
        method,
        headers,
        ...(body === undefined
          ? {}
          : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      return {
        status: response.status,
        headers: response.headers,
        json: await response.json(),
      };
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) {
          resolve(child.exitCode);
          return;
        }
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
};
