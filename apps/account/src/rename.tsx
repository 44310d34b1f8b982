/** A "Rename" button opening a small modal form (a <dialog>: focus moves into it, Escape cancels). */
import { useId, useRef, useState } from 'react';

export function RenameButton(props: { title: string; current: string; onRename: (name: string) => void; disabled?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const inputId = useId();
  const [name, setName] = useState(props.current);
  return (
    <>
      <button
        type="button"
        className="secondary"
        disabled={props.disabled}
        onClick={() => {
          setName(props.current);
          ref.current?.showModal();
        }}
      >
        Rename
      </button>
      <dialog ref={ref} aria-labelledby={titleId} className="confirm">
        <form
          method="dialog"
          onSubmit={(e) => {
            const submitter = (e.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
            if (submitter?.value === 'save' && name.trim() && name.trim() !== props.current) props.onRename(name.trim());
          }}
        >
          <h3 id={titleId}>{props.title}</h3>
          <label htmlFor={inputId}>New name</label>
          <input id={inputId} type="text" value={name} maxLength={60} required autoFocus onChange={(e) => setName(e.target.value)} />
          <div className="actions">
            <button value="cancel" formNoValidate>
              Cancel
            </button>
            <button value="save" className="primary">
              Save
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
