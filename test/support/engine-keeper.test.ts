/**
 * The engine keeper of the test run: a worker asking for a fresh engine
 * gets one that answers, on its own, and the worn one stops.
 */
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { expect, it } from 'vitest';
import { localDynamo } from '../../shared/runtime/local.ts';
import { startEngineKeeper } from './engine-keeper.ts';

const answers = (endpoint: string) =>
  localDynamo(endpoint)
    .send(new ListTablesCommand({}))
    .then(
      () => true,
      () => false,
    );

it('renews a worker’s engine: the new one answers, the worn one stops; a stop leaves no engine', async () => {
  const keeper = await startEngineKeeper(2);
  try {
    const [first, second] = keeper.endpoints as [string, string];
    expect(await answers(first)).toBe(true);

    const renewal = await fetch(`${keeper.url}/engines/0/renew`, {
      method: 'POST',
    });
    const { endpoint } = (await renewal.json()) as { endpoint: string };

    expect(renewal.status).toBe(200);
    expect(endpoint).not.toBe(first);
    expect(await answers(endpoint)).toBe(true);
    expect(await answers(second)).toBe(true);
    await expect.poll(() => answers(first), { timeout: 20_000 }).toBe(false);
    expect(
      (await fetch(`${keeper.url}/engines/2/renew`, { method: 'POST' })).status,
    ).toBe(404);
    await keeper.stop();
    expect(await answers(endpoint)).toBe(false);
    expect(await answers(second)).toBe(false);
  } finally {
    await keeper.stop();
  }
});
