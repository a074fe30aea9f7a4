/** The environment variable that chooses a PostgreSQL ledger (it wins over `[ledger] url`). */
export const LEDGER_URL_VARIABLE = "FACTORY_LEDGER_URL";

/** Pure: whether `text` is a PostgreSQL connection URL. */
export function isPostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//.test(text);
}

/** Pure: the URL as it may be printed: any password replaced by `***` (user, host, port and database stay). */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    for (const key of [...parsed.searchParams.keys()]) if (/pass|secret|token|key/i.test(key)) parsed.searchParams.set(key, "***");
    return parsed.toString();
  } catch {
    return url.replace(/(\/\/[^:/@]*:)[^@]*@/, "$1***@");
  }
}

/**
 * Pure: `text` (an error message, a line of output) with the URL's password
 * and the URL itself masked wherever they appear, so a message never prints
 * a credential, whatever library wrote it.
 */
export function maskSecrets(text: string, url: string): string {
  let masked = text.split(url).join(maskUrl(url));
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password.length >= 3) masked = masked.split(password).join("***");
    const raw = new URL(url).password;
    if (raw.length >= 3) masked = masked.split(raw).join("***");
  } catch {
    // not a URL: nothing more to mask
  }
  return masked;
}
