import { expect, test } from '@jest/globals';
import { floorKey, startHttpFloor } from '../../bench/support/http-floor.js';
import { BenchHttp } from '../../bench/support/http.js';

test("the HTTP floor gives each request the service's answer to it, byte for byte, and 404 to any other", async () => {
  const answer = JSON.stringify([{ id: 'a', title: 'Größe – ünïcode' }]);
  const floor = await startHttpFloor(new Map([[floorKey('key-1', '/api/v1/query?q=x'), answer], [floorKey('key-2', '/api/v1/query?q=x'), '[]']]));
  const client = new BenchHttp(floor.url);
  try {
    expect(await client.send('GET', '/api/v1/query?q=x', 'key-1')).toEqual({ status: 200, text: answer });
    expect(await client.send('GET', '/api/v1/query?q=x', 'key-2')).toEqual({ status: 200, text: '[]' });
    expect((await client.send('GET', '/api/v1/query?q=y', 'key-1')).status).toBe(404);
  } finally {
    client.close();
    await floor.stop();
  }
});
