import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { createConsoleRouter } from './app/routes';
import { SessionProvider } from './app/session';
import './styles/base.css';
import './styles/frame.css';
import './styles/controls.css';
import './styles/feedback.css';
import './styles/tables.css';
import './styles/dialog.css';
import './styles/narrow.css';

// Created before the first render: the page named by the address starts loading while the session is checked.
const router = createConsoleRouter();

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <SessionProvider>
        <RouterProvider router={router} />
      </SessionProvider>
    </StrictMode>,
  );
}
