import { type FormEvent, useState } from 'react';
import { api, errorText, unwrap } from '../../api/client';
import { ErrorMessage } from '../../components/states';

const MIN_LENGTH = 12;

/**
 * Profile, Security tab: change your own password. The server checks the current password and the
 * policy (at least 12 characters, hard to guess) and names what is wrong; your other sessions end.
 */
export function ChangePasswordForm() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);

  const currentError = current === '' ? 'Enter your current password.' : undefined;
  const nextError =
    [...next].length < MIN_LENGTH ? `The new password needs at least ${MIN_LENGTH} characters.` : undefined;
  const repeatError = repeat !== next ? 'The two new passwords differ.' : undefined;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    setDone(false);
    if (currentError || nextError || repeatError) return;
    setBusy(true);
    setError(null);
    try {
      unwrap(
        await api.POST('/api/v1/auth/password', { body: { currentPassword: current, newPassword: next } }),
      );
      setDone(true);
      setCurrent('');
      setNext('');
      setRepeat('');
      setTouched(false);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  const field = (
    label: string,
    value: string,
    set: (value: string) => void,
    autoComplete: string,
    problem: string | undefined,
  ) => (
    <label className="field">
      <span>{label}</span>
      <input
        type="password"
        value={value}
        autoComplete={autoComplete}
        onChange={(event) => set(event.target.value)}
        aria-invalid={touched && problem ? true : undefined}
      />
      {touched && problem && <span className="field-error">{problem}</span>}
    </label>
  );

  return (
    <form onSubmit={submit} noValidate aria-labelledby="change-password-title">
      <header className="section-header">
        <div>
          <h2 id="change-password-title">Password</h2>
          <p className="muted">Changing it signs you out everywhere else; this session stays.</p>
        </div>
      </header>
      {field('Current password', current, setCurrent, 'current-password', currentError)}
      {field('New password', next, setNext, 'new-password', nextError)}
      {field('Repeat the new password', repeat, setRepeat, 'new-password', repeatError)}
      <ErrorMessage error={error} />
      {done && (
        <p className="hint" role="status">
          Your password is changed. Your other sessions have ended.
        </p>
      )}
      <button type="submit" className="button button-primary" disabled={busy}>
        Change password
      </button>
    </form>
  );
}
