import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app';
import { SessionProvider } from './app/session';
import './styles/base.css';
import './styles/frame.css';
import './styles/controls.css';
import './styles/feedback.css';
import './styles/tables.css';
import './styles/dialog.css';
import './styles/narrow.css';

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <SessionProvider>
        <App />
      </SessionProvider>
    </StrictMode>,
  );
}
