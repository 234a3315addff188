import assert from 'node:assert/strict';

/**
 * /metrics, scraped until it matches: the native server answers from a snapshot that catches up
 * within METRICS_REFRESH_MS of a change (src/http/proxy-metrics.ts), the handler renders fresh.
 * Fails with the last exposition when it never matches within two seconds.
 */
export async function scrapeUntil(url: string, pattern: RegExp, send: typeof fetch = fetch): Promise<string> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const text = await (await send(url)).text();
    if (pattern.test(text) || Date.now() > deadline) {
      assert.match(text, pattern);
      return text;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
