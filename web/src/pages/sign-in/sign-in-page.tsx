import { type FormEvent, useState } from 'react';
import { errorText } from '../../api/client';
import { useSession } from '../../app/session';
import { ErrorMessage } from '../../components/states';

/** Email and password sign-in; on success the app shows the page the user asked for. */
export function SignInPage() {
  const { signIn, endedMessage } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(email.trim(), password);
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  return (
    <main className="sign-in" id="main">
      <form className="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <p className="brand brand-large">Meridian</p>
        <h1 id="sign-in-title">Sign in to the console</h1>
        {endedMessage && !error && <p className="notice">{endedMessage}</p>}
        <ErrorMessage error={error} />
        <label className="field">
          <span>Email</span>
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <label className="field">
          <span>Password</span>
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
        <button type="submit" className="button button-primary button-block" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
