/** Shortens emitter-supplied text quoted in a violation message, so a hostile value cannot flood a report. */
export function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
