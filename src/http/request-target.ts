/**
 * An absolute http URL with a path and query the URL parser would leave exactly as they are (no
 * dot segments, no percent-encoding to add, no backslash, no fragment), as nearly every API
 * request's is. Such a target is split by hand, saving a URL object per request.
 */
const PLAIN_TARGET = /^https?:\/\/[\w\-.:[\]]+(\/[\w\-/]*)(\?[\w\-.=&%+,:]*)?$/;

/** [pathname, search] as `new URL(href)` gives them. */
export function targetOf(href: string): [string, string] {
  const plain = PLAIN_TARGET.exec(href);
  if (plain !== null) return [plain[1]!, plain[2] === '?' ? '' : (plain[2] ?? '')];
  const url = new URL(href);
  return [url.pathname, url.search];
}
