import { useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { ErrorMessage } from '../../components/states';

interface Outcome {
  success: boolean;
  durationMs: number;
  error: string | null;
}

/**
 * Tests the settings in the form before they are saved (`POST /connections/test`): a session opened
 * and closed, nothing stored. Shows the time it took or the reason in words. `config` throws for a
 * form that cannot be sent (invalid JSON in a field), which is shown as the error.
 */
export function ConnectionTestButton(props: { protocol: string; config: () => Record<string, unknown> }) {
  const [testing, setTesting] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setTesting(true);
    setOutcome(null);
    setError(null);
    try {
      const body = { protocol: props.protocol, config: props.config() };
      setOutcome(
        unwrap(await api.POST('/api/v1/connections/test', { params: { header: orgHeader() }, body })).data,
      );
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setTesting(false);
    }
  };
  return (
    <div className="connection-test">
      <button type="button" className="button" onClick={() => void run()} disabled={testing}>
        {testing ? 'Testing…' : 'Test connection'}
      </button>
      {outcome && (
        <p
          role="status"
          className={`state ${outcome.success ? 'state-ok' : 'state-error'}`}
          data-test-result={outcome.success ? 'success' : 'failure'}
        >
          {outcome.success
            ? `Connected in ${Math.round(outcome.durationMs)} ms.`
            : `Could not connect: ${outcome.error ?? 'no reason given'} (after ${Math.round(outcome.durationMs)} ms).`}
        </p>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}
