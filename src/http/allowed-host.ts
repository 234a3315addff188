/**
 * Whether a request's `Host` names this proxy. A page a browser loaded from an attacker's domain
 * can make that domain resolve to 127.0.0.1 (DNS rebinding) and then read what the proxy answers
 * (`/metrics`, proxied answers for a key the page does not have) as its own origin; its requests
 * carry the attacker's name in `Host`. So only loopback names, the address the proxy is bound to
 * and the names given in `allowHosts` are served. No `Host` at all (HTTP/1.0) is no browser's.
 */
export function createHostCheck(options: {
  bound: string;
  allowHosts?: readonly string[];
}): (host: string | undefined) => boolean {
  const allowed = new Set<string>([normalized(options.bound), ...(options.allowHosts ?? []).map(normalized)]);
  return (host) => {
    if (host === undefined) return true;
    const name = hostnameOf(host);
    return name !== undefined && (isLoopback(name) || allowed.has(name));
  };
}

function isLoopback(name: string): boolean {
  return name === 'localhost' || name === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** The host name of a `Host` value (`name`, `name:port`, `[v6]:port`), lower case, without a final dot; undefined if it is none. */
function hostnameOf(host: string): string | undefined {
  const value = host.trim();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0 || (end + 1 < value.length && !/^:\d*$/.test(value.slice(end + 1)))) return undefined;
    return value.slice(1, end).toLowerCase();
  }
  const colon = value.indexOf(':');
  if (colon >= 0 && !/^\d*$/.test(value.slice(colon + 1))) return undefined;
  const name = colon < 0 ? value : value.slice(0, colon);
  return name === '' ? undefined : normalized(name);
}

function normalized(name: string): string {
  const lower = name.trim().toLowerCase().replace(/\.$/, '');
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}
