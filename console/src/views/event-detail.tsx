/** An event's envelope exactly as the relay delivered it, pretty-printed beside the raw text. */
export function EventDetail({ raw, onClose }: { raw: string; onClose: () => void }) {
  let pretty = raw;
  try {
    pretty = JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    // Shown as received.
  }
  return (
    <section class="detail" aria-labelledby="detail-title">
      <div class="row">
        <h3 id="detail-title">Envelope</h3>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <pre tabIndex={0} aria-label="envelope, formatted">
        {pretty}
      </pre>
      <details>
        <summary>As received (one line)</summary>
        <pre tabIndex={0} class="raw" data-testid="raw-envelope">
          {raw}
        </pre>
      </details>
    </section>
  );
}
