/**
 * Query parameters that may carry a key: Gemini's `key=`, and the usual spellings of keys and
 * tokens (`api_key`, `api-key`, `access_token`, `token`, `secret`, `signature`, `auth…`). Their
 * values never reach a log line or an error body.
 */
const SECRET_PARAM =
  /^(?:[\w.-]*[_-])?(?:key|api[_-]?key|token|access[_-]?token|secret|signature|sig|auth\w*|password)$/i;
const SECRET_IN_TEXT =
  /([?&;](?:[\w.-]*[_-])?(?:key|api[_-]?key|token|access[_-]?token|secret|signature|sig|auth\w*|password)=)[^&\s"'<>#]*/gi;
export const REDACTED = 'REDACTED';

/** `pathname` and `search` (with its `?`) as one target, each secret parameter's value replaced by REDACTED. */
export function redactTarget(pathname: string, search: string): string {
  if (search === '' || search === '?') return pathname;
  const parts = search.slice(1).split('&');
  for (let index = 0; index < parts.length; index += 1) {
    const part = parts[index] as string;
    const equals = part.indexOf('=');
    const name = equals === -1 ? part : part.slice(0, equals);
    if (SECRET_PARAM.test(safeDecode(name))) parts[index] = `${name}=${REDACTED}`;
  }
  return `${pathname}?${parts.join('&')}`;
}

/** Text that may quote a URL (an error's message): each secret query parameter's value replaced by REDACTED. */
export function redactSecrets(text: string): string {
  return text.includes('=') ? text.replace(SECRET_IN_TEXT, `$1${REDACTED}`) : text;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}
