/** Number and table formatting shared by the bench report's Markdown and SVG renderers. */
export const fixed = (value: number | undefined, digits = 2) => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits));
export const grouped = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const dollars = (value: number) => (value >= 1 ? `$${value.toFixed(2)}` : value >= 0.01 ? `$${value.toFixed(3)}` : `$${value.toFixed(4)}`);
export const ms = (value: number) => `${value.toFixed(0)} ms`;

export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, align?: readonly ('l' | 'r')[]): string {
  const rule = header.map((_, index) => ((align?.[index] ?? (index === 0 ? 'l' : 'r')) === 'r' ? '---:' : ':---'));
  return [`| ${header.join(' | ')} |`, `| ${rule.join(' | ')} |`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

