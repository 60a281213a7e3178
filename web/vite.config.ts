import { defineConfig } from 'vite';

/** The console build: plain Vite, esbuild compiles TSX (no React plugin needed). */
export default defineConfig({
  base: '/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The CSP allows no inline script: keep the module-preload polyfill out of index.html.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  server: {
    proxy: { '/api': 'http://localhost:8080', '/.well-known': 'http://localhost:8080' },
  },
});
