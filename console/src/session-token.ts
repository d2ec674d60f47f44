/**
 * The signed-in token. Kept in `sessionStorage` only (gone when the tab closes, never shared
 * between tabs, never written to localStorage, a cookie or the URL), and never logged.
 */
const KEY = 'aep-console-token';

export function storedToken(): string | undefined {
  const value = sessionStorage.getItem(KEY);
  return value === null || value === '' ? undefined : value;
}

export function storeToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
