#!/usr/bin/env node
// The `meridian` command. Runs the compiled CLI (npm ci builds it).
import('../dist/cli/index.js').catch((error) => {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli')) {
    console.error('meridian is not built yet: run `npm ci` (or `npm run build`) first.');
    process.exit(1);
  }
  throw error;
});
