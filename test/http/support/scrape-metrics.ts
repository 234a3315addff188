import assert from 'node:assert/strict';

/**
 * /metrics, scraped until it matches: a request's counters are updated when its answer ends, which
 * may be just after the client has read it. Fails with the last exposition when it never matches
 * within two seconds.
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
