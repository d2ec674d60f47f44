/** A `kind: "form"` request's fields (AEP-0006; AEP-0002 §5.2 `field_spec`), answered as `values`. */
import { useState } from 'preact/hooks';
import type { FormField } from '../attention.ts';

type Value = string | number | boolean | string[];

export function FormAnswer({ fields, onSubmit }: { fields: FormField[]; onSubmit: (values: Record<string, Value>) => void }) {
  const [values, setValues] = useState<Record<string, Value>>({});
  const [problem, setProblem] = useState<string | undefined>();
  const set = (id: string, value: Value) => setValues({ ...values, [id]: value });
  const submit = (event: Event) => {
    event.preventDefault();
    // The emitter validates too (AEP-0002 §5.3); checking required fields here saves a round trip.
    const missing = fields.find((field) => field.required && (values[field.id] === undefined || values[field.id] === '' || (Array.isArray(values[field.id]) && (values[field.id] as string[]).length === 0)));
    if (missing !== undefined) return setProblem(`${missing.label} is required`);
    setProblem(undefined);
    onSubmit(values);
  };
  return (
    <form class="form-answer" onSubmit={submit}>
      {fields.map((field) => {
        const id = `field-${field.id}`;
        if (field.type === 'boolean') {
          return (
            <div class="field check" key={field.id}>
              <input id={id} type="checkbox" checked={values[field.id] === true} onChange={(event) => set(field.id, (event.target as HTMLInputElement).checked)} />
              <label for={id}>{field.label}</label>
            </div>
          );
        }
        if (field.type === 'select') {
          return (
            <div class="field" key={field.id}>
              <FieldLabel id={id} field={field} />
              <select
                id={id}
                multiple={field.multi}
                onChange={(event) => {
                  const select = event.target as HTMLSelectElement;
                  set(field.id, field.multi ? [...select.selectedOptions].map((option) => option.value) : select.value);
                }}
              >
                {!field.multi && <option value="">choose…</option>}
                {field.choices.map((choice) => (
                  <option key={choice.id} value={choice.id}>
                    {choice.label}
                  </option>
                ))}
              </select>
            </div>
          );
        }
        return (
          <div class="field" key={field.id}>
            <FieldLabel id={id} field={field} />
            {field.type === 'number' ? (
              <input id={id} type="number" min={field.min} max={field.max} onInput={(event) => set(field.id, (event.target as HTMLInputElement).valueAsNumber)} />
            ) : (
              <input id={id} type="text" onInput={(event) => set(field.id, (event.target as HTMLInputElement).value)} />
            )}
          </div>
        );
      })}
      {problem !== undefined && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      <button type="submit">Send answer</button>
    </form>
  );
}

function FieldLabel({ id, field }: { id: string; field: FormField }) {
  return (
    <label for={id}>
      {field.label}
      {field.required ? ' (required)' : ''}
    </label>
  );
}
